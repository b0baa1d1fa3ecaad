#!/usr/bin/env bash
# `cargo check` of toolshelf (library and binaries) for every target it is built for beside the
# host's: Windows (x86_64-pc-windows-gnu) and macOS (aarch64-apple-darwin, x86_64-apple-darwin),
# Linux on ARM (aarch64-unknown-linux-gnu). Fast, and it catches a `cfg` that breaks one
# system. The targets' standard libraries come from rustup (`rustup target add`, the user's
# toolchain), and zig (PyPI's ziglang, through cargo-zigbuild) is the C compiler for the crates
# that compile C (ring), both into the project's target/ folder: nothing system-wide. The checks
# build into target/cross so they never wait on another cargo's lock. Give targets to check only
# those (the test suite checks one per family of `cfg`: Windows and macOS).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/target/cross-tools"
bash "$root/scripts/install-python.sh" "$tools" "$root/packaging/cross-requirements.txt"
export PATH="$tools/bin:$PATH"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(x86_64-pc-windows-gnu aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu)
fi
installed="$(rustup target list --installed)"
for target in "${targets[@]}"; do
  if ! grep -qx "$target" <<<"$installed"; then
    rustup target add "$target" >&2
  fi
done
for target in "${targets[@]}"; do
  echo "checking $target" >&2
  (cd "$root" && CARGO_TARGET_DIR="$root/target/cross" cargo-zigbuild check --quiet \
    --target "$target" --lib --bins)
done
