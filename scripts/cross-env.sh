# Sourced by the cross scripts (check-platforms.sh, build-windows.sh) with the targets in
# $targets: the targets' standard libraries from rustup (`rustup target add`, the user's
# toolchain), and zig (PyPI's ziglang, through cargo-zigbuild) into target/cross-tools as the C
# compiler and linker, on PATH: nothing system-wide. Builds go to target/cross, so they never
# wait on another cargo's lock.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/target/cross-tools"
bash "$root/scripts/install-python.sh" "$tools" "$root/packaging/cross-requirements.txt"
export PATH="$tools/bin:$PATH" CARGO_TARGET_DIR="$root/target/cross"
installed="$(rustup target list --installed)"
for target in "${targets[@]}"; do
  if ! grep -qx "$target" <<<"$installed"; then
    rustup target add "$target" >&2
  fi
done
