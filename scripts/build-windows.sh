#!/usr/bin/env bash
# Builds toolshelf and the test fixture for Windows (x86_64-pc-windows-gnu, the dev profile) with
# zig as the linker (scripts/cross-env.sh), and prints the folder that holds toolshelf.exe and
# toolshelf-fixture.exe, for the tests that run them under Wine (scripts/fetch-wine.sh).
set -euo pipefail
targets=(x86_64-pc-windows-gnu)
source "$(dirname "$0")/cross-env.sh"
(cd "$root" && cargo-zigbuild build --quiet --target x86_64-pc-windows-gnu \
  --bin toolshelf --bin toolshelf-fixture)
echo "$CARGO_TARGET_DIR/x86_64-pc-windows-gnu/debug"
