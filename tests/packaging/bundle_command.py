"""Unpacks an MCPB bundle as a host does and prints, as JSON, the command its manifest starts.

Usage: bundle_command.py BUNDLE DEST CONFIG. The zip's file modes are restored; `${__dirname}`
becomes DEST and `${user_config.config}` CONFIG. Fails when the manifest's `entry_point` is not
an executable file in the bundle (neither `mcpb validate` nor `mcpb pack` checks that).
"""

import json
import os
import re
import sys
import zipfile

bundle, dest, config = sys.argv[1:]
with zipfile.ZipFile(bundle) as archive:
    for info in archive.infolist():
        path = archive.extract(info, dest)
        mode = info.external_attr >> 16
        if mode:
            os.chmod(path, mode & 0o777)

with open(os.path.join(dest, "manifest.json")) as file:
    manifest = json.load(file)
server = manifest["server"]
entry = os.path.join(dest, server["entry_point"])
if not (os.path.isfile(entry) and os.access(entry, os.X_OK)):
    sys.exit(f"the bundle's entry_point {server['entry_point']} is not an executable file in it")

values = {"__dirname": dest, "user_config.config": config}
missing = [key for key, spec in manifest.get("user_config", {}).items()
           if spec.get("required") and f"user_config.{key}" not in values]
if missing:
    sys.exit(f"no value for the required user_config {missing}")


def expand(text):
    def value(match):
        name = match.group(1)
        if name not in values:
            sys.exit(f"the manifest names ${{{name}}}, which this check does not know")
        return values[name]

    return re.sub(r"\$\{([^}]+)\}", value, text)


mcp = server["mcp_config"]
print(json.dumps({
    "command": expand(mcp["command"]),
    "args": [expand(arg) for arg in mcp.get("args", [])],
    "env": {key: expand(value) for key, value in mcp.get("env", {}).items()},
}))
