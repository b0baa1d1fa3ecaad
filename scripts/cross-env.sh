# Sourced by the cross scripts (check-platforms.sh, cross-build.sh, package.sh) with the targets in
# $targets: the targets' standard libraries from rustup (`rustup target add`, the user's
# toolchain), and zig (PyPI's ziglang, through cargo-zigbuild) into target/cross-tools as the C
# compiler and linker, on PATH: nothing system-wide. Builds go to target/cross (or the
# CARGO_TARGET_DIR set before), so they never wait on another cargo's lock.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/target/cross-tools"
bash "$root/scripts/install-python.sh" "$tools" "$root/packaging/cross-requirements.txt"
export PATH="$tools/bin:$PATH" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/cross}"
# macOS: the frameworks toolshelf links, as text stubs (no macOS SDK is reachable here), and the
# oldest macOS it runs on, 11 (Security's SecTrustEvaluateWithError needs 10.14 anyway).
export SDKROOT="$root/packaging/macos-sdk" MACOSX_DEPLOYMENT_TARGET=11.0
# One `rustup target add` at a time: the tests that build for other systems run in parallel.
mkdir -p "$root/target"
exec 8>"$root/target/rustup-targets.lock"
flock 8
installed="$(rustup target list --installed)"
for target in "${targets[@]}"; do
  if ! grep -qx "$target" <<<"$installed"; then
    rustup target add "$target" >&2
  fi
done
exec 8>&-
