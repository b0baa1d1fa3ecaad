"""Packs the binaries scripts/package.sh built into OUT: for each target, its npm package
(`toolshelf-mcp-<platform>-<arch>`, with `os`, `cpu` and, on Linux, `libc`) and its MCPB bundle
(`toolshelf-VERSION-<platform>-<arch>.mcpb`); the npm launcher `toolshelf-mcp`, which depends on
every platform's package; and server.json, listing the bundles built with their sha256. Each
binary is first checked for what its target claims (check_binary.py). The table of targets is
packaging/platforms.json.

Usage: stage_packages.py OUT STAGE MCPB TARGET=BINARY...
"""

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out, stage, mcpb, *built = sys.argv[1:]
npm_env = dict(os.environ, npm_config_cache=os.path.join(root, "target", "npm-cache"))


def load(*path):
    with open(os.path.join(root, *path)) as file:
        return json.load(file)


def dump(value, *path):
    with open(os.path.join(*path), "w") as file:
        json.dump(value, file, indent=2)
        file.write("\n")


def npm_pack(folder):
    subprocess.run(["npm", "pack", "--pack-destination", out, "--loglevel=error"], cwd=folder,
                   env=npm_env, check=True, stdout=subprocess.DEVNULL)


platforms = {p["target"]: p for p in load("packaging", "platforms.json")["platforms"]}
launcher = load("packaging", "npm", "toolshelf-mcp", "package.json")
version = launcher["version"]
bundles = []
for pair in built:
    target, binary = pair.split("=", 1)
    platform = platforms[target]
    system, cpu = platform["node"].split("-")
    subprocess.run([os.path.join(root, "target", "cross-tools", "bin", "python"),
                    os.path.join(root, "scripts", "check_binary.py"),
                    target, binary, "--stripped"], check=True)
    file = "toolshelf.exe" if system == "win32" else "toolshelf"

    name = f"toolshelf-mcp-{platform['node']}"
    package = os.path.join(stage, name)
    os.makedirs(os.path.join(package, "bin"))
    shutil.copy(binary, os.path.join(package, "bin", file))
    os.chmod(os.path.join(package, "bin", file), 0o755)
    description = {
        "name": name,
        "version": version,
        "description": f"The toolshelf binary for {platform['system']}; installed by toolshelf-mcp",
        "license": launcher["license"],
        "os": [system],
        "cpu": [cpu],
        **({"libc": ["glibc"]} if system == "linux" else {}),
        "files": [f"bin/{file}", "README.md"],
        "preferUnplugged": True,
    }
    dump(description, package, "package.json")
    with open(os.path.join(root, "packaging", "npm", "platform", "README.md")) as readme:
        text = readme.read().replace("{name}", name).replace("{system}", platform["system"])
    with open(os.path.join(package, "README.md"), "w") as readme:
        readme.write(text)
    npm_pack(package)

    bundle = os.path.join(stage, f"bundle-{platform['node']}")
    os.makedirs(os.path.join(bundle, "server"))
    manifest = load("packaging", "mcpb", "manifest.json")
    manifest["server"]["entry_point"] = f"server/{file}"
    manifest["server"]["mcp_config"]["command"] = f"${{__dirname}}/server/{file}"
    manifest["compatibility"]["platforms"] = [system]
    dump(manifest, bundle, "manifest.json")
    shutil.copy(os.path.join(root, "LICENSE"), bundle)
    shutil.copy(binary, os.path.join(bundle, "server", file))
    os.chmod(os.path.join(bundle, "server", file), 0o755)
    packed = os.path.join(out, f"toolshelf-{version}-{platform['node']}.mcpb")
    subprocess.run([mcpb, "validate", os.path.join(bundle, "manifest.json")], check=True,
                   stdout=sys.stderr)
    subprocess.run([mcpb, "pack", bundle, packed], check=True, stdout=sys.stderr)
    bundles.append(packed)

package = os.path.join(stage, "toolshelf-mcp")
shutil.copytree(os.path.join(root, "packaging", "npm", "toolshelf-mcp"), package)
os.chmod(os.path.join(package, "bin", "toolshelf.js"), 0o755)
npm_pack(package)

# The registry's entry: its one mcpb package stands for each bundle built, by name and sha256.
server = load("packaging", "registry", "server.json")
entries = []
for entry in server["packages"]:
    if entry["registryType"] != "mcpb":
        entries.append(entry)
        continue
    folder = entry["identifier"].rsplit("/", 1)[0]
    for packed in bundles:
        listed = copy.deepcopy(entry)
        listed["identifier"] = f"{folder}/{os.path.basename(packed)}"
        with open(packed, "rb") as file:
            listed["fileSha256"] = hashlib.sha256(file.read()).hexdigest()
        entries.append(listed)
server["packages"] = entries
dump(server, out, "server.json")
