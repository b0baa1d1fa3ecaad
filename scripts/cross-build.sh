#!/usr/bin/env bash
# Builds toolshelf's binaries BIN… (the dev profile) for TARGET with zig as the linker
# (scripts/cross-env.sh), and prints the folder that holds them: for the tests that run the
# Windows build under Wine (scripts/fetch-wine.sh) and check the macOS one
# (scripts/check_binary.py). Usage: scripts/cross-build.sh TARGET BIN...
set -euo pipefail
target="${1:?usage: scripts/cross-build.sh TARGET BIN...}"
shift
targets=("$target")
source "$(dirname "$0")/cross-env.sh"
bins=()
for bin in "$@"; do bins+=(--bin "$bin"); done
(cd "$root" && cargo-zigbuild build --quiet --target "$target" "${bins[@]}")
echo "$CARGO_TARGET_DIR/$target/debug"
