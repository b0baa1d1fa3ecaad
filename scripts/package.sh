#!/usr/bin/env bash
# Builds toolshelf's packages into the folder OUT:
#   toolshelf-mcp-VERSION.tgz, toolshelf-mcp-linux-x64-VERSION.tgz   npm launcher and binary
#   toolshelf_mcp-VERSION-py3-none-manylinux_2_17_x86_64.whl          PyPI wheel (maturin)
#   toolshelf-VERSION-linux-x64.mcpb                                  Claude Desktop bundle
#   server.json                                                       MCP Registry entry
#
# The binary is built once, by maturin, for Linux x86_64 against glibc 2.17 (zig as the linker,
# from PyPI: no other Rust target is needed), with the release profile (stripped, unwinding
# kept), and the npm package and the bundle carry that same file.
#
# TOOLSHELF_PACKAGE_PROFILE=dev builds with the dev profile for this machine's glibc instead, into
# target/package: what the packaging test does, to check the packages without a release build.
#
# The tools (maturin, zig, uv; the MCPB CLI) are installed into target/ first. Publishing the
# packages is a release step, outside this script and CI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: scripts/package.sh OUT}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
profile="${TOOLSHELF_PACKAGE_PROFILE:-release}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"

tools="$root/target/package-tools"
bash "$root/scripts/install-python.sh" "$tools" "$root/packaging/requirements.txt"
bash "$root/scripts/install-interop.sh"
mcpb="$root/target/interop/node_modules/.bin/mcpb"
export PATH="$tools/bin:$PATH"

stage="$root/target/package-stage"
rm -rf "$stage" && mkdir -p "$stage"

echo "building the wheel and its binary ($profile)" >&2
if [ "$profile" = release ]; then
  target=x86_64-unknown-linux-gnu
  "$tools/bin/python" -c 'import ziglang' 2>/dev/null ||
    "$tools/bin/pip" install --quiet --disable-pip-version-check --no-input ziglang==0.17.0 >&2
  (cd "$root" && maturin build --release --zig --compatibility manylinux2014 --target "$target" \
    --out "$stage/wheel" >&2)
  binary="$root/target/$target/release/toolshelf"
else
  # A target folder of its own: the tests' target/debug stays as cargo test built it. Without
  # debug info: it is stripped anyway, and linking is quicker.
  (cd "$root" && CARGO_PROFILE_DEV_DEBUG=false maturin build --profile "$profile" --strip --target-dir "$root/target/package" \
    --compression-method stored --out "$stage/wheel" >&2)
  binary="$root/target/package/$([ "$profile" = dev ] && echo debug || echo "$profile")/toolshelf"
fi
cp "$stage"/wheel/*.whl "$out/"
echo "binary: $binary ($(stat -c %s "$binary") bytes)" >&2

echo "packing the npm packages" >&2
for package in toolshelf-mcp toolshelf-mcp-linux-x64; do
  cp -r "$root/packaging/npm/$package" "$stage/$package"
done
mkdir -p "$stage/toolshelf-mcp-linux-x64/bin"
cp "$binary" "$stage/toolshelf-mcp-linux-x64/bin/toolshelf"
chmod 755 "$stage/toolshelf-mcp-linux-x64/bin/toolshelf" "$stage/toolshelf-mcp/bin/toolshelf.js"
for package in toolshelf-mcp toolshelf-mcp-linux-x64; do
  (cd "$stage/$package" && npm_config_cache="$root/target/npm-cache" \
    npm pack --pack-destination "$out" --loglevel=error >/dev/null)
done

echo "packing the bundle" >&2
bundle="$stage/bundle"
mkdir -p "$bundle/server"
cp "$root/packaging/mcpb/manifest.json" "$bundle/"
cp "$root/LICENSE" "$bundle/"
cp "$binary" "$bundle/server/toolshelf"
chmod 755 "$bundle/server/toolshelf"
"$mcpb" validate "$bundle/manifest.json" >&2
mcpb_file="$out/toolshelf-$version-linux-x64.mcpb"
"$mcpb" pack "$bundle" "$mcpb_file" >&2

echo "writing server.json" >&2
sha="$(sha256sum "$mcpb_file" | cut -d' ' -f1)"
python3 - "$root/packaging/registry/server.json" "$out/server.json" "$sha" <<'EOF'
import json, sys
source, dest, sha = sys.argv[1:]
server = json.load(open(source))
for package in server["packages"]:
    if package["registryType"] == "mcpb":
        package["fileSha256"] = sha
with open(dest, "w") as out:
    json.dump(server, out, indent=2)
    out.write("\n")
EOF
ls -l "$out" >&2
