"""Checks that the toolbox config in deploy/kubernetes/configmap.yaml is one toolshelf accepts:
valid against the schema `toolshelf schema` prints (given as a file).

Usage: check_configmap.py CONFIGMAP SCHEMA. Prints the problems and exits 1, or exits 0.
"""

import json
import sys

import jsonschema
import yaml


def main(configmap: str, schema: str) -> int:
    with open(configmap) as file:
        resource = yaml.safe_load(file)
    config = json.loads(resource["data"]["toolboxes.json"])
    with open(schema) as file:
        validator = jsonschema.Draft202012Validator(json.load(file))
    problems = [f"{'.'.join(map(str, error.path))}: {error.message}" for error in validator.iter_errors(config)]
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
