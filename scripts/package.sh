#!/usr/bin/env bash
# Builds toolshelf's packages into the folder OUT, for this machine's target (Linux x86_64) or,
# with --all-platforms, for every target of packaging/platforms.json:
#   toolshelf-mcp-VERSION.tgz, toolshelf-mcp-PLATFORM-VERSION.tgz   npm launcher, binary per target
#   toolshelf_mcp-VERSION-…-TAG.whl                                  PyPI wheel per target (maturin)
#   toolshelf-VERSION-PLATFORM.mcpb                                  Claude Desktop bundle per target
#   server.json                                                      MCP Registry entry
#
# Each binary is built once, by maturin, with zig as the C compiler and linker (from PyPI: Linux
# against glibc 2.17, macOS against the frameworks' text stubs in packaging/macos-sdk), with the
# release profile (stripped, unwinding kept); the npm package and the bundle carry that same
# file, checked first for what its target claims (scripts/check_binary.py).
#
# TOOLSHELF_PACKAGE_PROFILE=dev builds with the dev profile instead, into target/package: what
# the packaging test does, to check the packages without a release build.
#
# The tools (maturin, zig, LIEF, wheel; the MCPB CLI; the targets' standard libraries) are
# installed into target/ and rustup's toolchain first. Publishing the packages is a release
# step, outside this script and CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: scripts/package.sh OUT [--all-platforms]}"
host=x86_64-unknown-linux-gnu
targets=("$host")
if [ "${2:-}" = --all-platforms ]; then
  mapfile -t targets < <(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["platforms"]: print(p["target"])' "$root/packaging/platforms.json")
elif [ -n "${2:-}" ]; then
  echo "scripts/package.sh: unknown option $2; usage: scripts/package.sh OUT [--all-platforms]" >&2
  exit 2
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
profile="${TOOLSHELF_PACKAGE_PROFILE:-release}"

package_tools="$root/target/package-tools"
bash "$root/scripts/install-python.sh" "$package_tools" "$root/packaging/requirements.txt"
bash "$root/scripts/install-interop.sh"
if [ "$profile" = release ]; then target_dir="$root/target"; else target_dir="$root/target/package"; fi
# The targets' standard libraries and the macOS settings; builds go to $target_dir.
CARGO_TARGET_DIR="$target_dir"
source "$root/scripts/cross-env.sh"
export PATH="$package_tools/bin:$PATH"

stage="$root/target/package-stage"
rm -rf "$stage" && mkdir -p "$stage/wheel"
built=()
for target in "${targets[@]}"; do
  echo "building the wheel and its binary for $target ($profile)" >&2
  exe=toolshelf
  [[ "$target" = *windows* ]] && exe=toolshelf.exe
  if [ "$profile" = release ]; then
    build=(--release)
    binary="$target_dir/$target/release/$exe"
  else
    # Without debug info: it is stripped anyway, and linking is quicker.
    build=(--profile dev --strip --compression-method stored)
    binary="$target_dir/$target/debug/$exe"
  fi
  build+=(--zig --target "$target")
  [[ "$target" = *linux* ]] && build+=(--compatibility manylinux2014)
  (cd "$root" && CARGO_PROFILE_DEV_DEBUG=false maturin build "${build[@]}" \
    --target-dir "$target_dir" --out "$stage/wheel/$target" >&2)
  wheel=("$stage/wheel/$target"/*.whl)
  if [[ "$target" = *windows* ]]; then
    # `uvx toolshelf-mcp` runs the command named like the package: on Windows an .exe, not the
    # shell script the other wheels carry.
    python "$root/scripts/windows_wheel.py" "${wheel[0]}" >&2
  fi
  cp "${wheel[@]}" "$out/"
  echo "binary: $binary ($(stat -c %s "$binary") bytes)" >&2
  built+=("$target=$binary")
done

echo "packing the npm packages and the bundles" >&2
python "$root/scripts/stage_packages.py" "$out" "$stage" \
  "$root/target/interop/node_modules/.bin/mcpb" "${built[@]}"
ls -l "$out" >&2
