"""Writes one key of a ConfigMap in a (multi-document) manifest to a file.

Usage: configmap_key.py MANIFEST CONFIGMAP KEY OUT.
"""

import sys

import yaml


def main(manifest: str, name: str, key: str, out: str) -> None:
    with open(manifest) as file:
        for resource in yaml.safe_load_all(file):
            if resource and resource.get("kind") == "ConfigMap" and resource["metadata"]["name"] == name:
                with open(out, "w") as written:
                    written.write(resource["data"][key])
                return
    sys.exit(f"no ConfigMap {name} with key {key} in {manifest}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
