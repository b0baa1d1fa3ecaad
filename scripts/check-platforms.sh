#!/usr/bin/env bash
# `cargo check` of toolshelf (library and binaries) for every target it is built for beside the
# host's: Windows (x86_64-pc-windows-gnu, aarch64-pc-windows-gnullvm), macOS (aarch64-apple-darwin,
# x86_64-apple-darwin) and Linux on ARM (aarch64-unknown-linux-gnu). Fast, and it catches a `cfg` that breaks one
# system. Give targets to check only those (the test suite checks macOS; its Windows build,
# scripts/cross-build.sh, builds Windows and macOS). The tools: scripts/cross-env.sh.
set -euo pipefail
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(x86_64-pc-windows-gnu aarch64-pc-windows-gnullvm aarch64-apple-darwin x86_64-apple-darwin
    aarch64-unknown-linux-gnu)
fi
source "$(dirname "$0")/cross-env.sh"
for target in "${targets[@]}"; do
  echo "checking $target" >&2
  (cd "$root" && cargo-zigbuild check --quiet --target "$target" --lib --bins)
done
