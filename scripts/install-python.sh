#!/usr/bin/env bash
# Installs the Python MCP clients the tests use (exact versions, from tests/python/requirements.txt,
# or the requirements file given as $2) into a virtual environment in the folder given as $1
# (default target/pyenv). Does nothing when they are already installed at those versions.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/target/pyenv}"
requirements="${2:-$root/tests/python/requirements.txt}"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "error: the client tests need Python 3.10+ with the venv module (e.g. apt-get install python3 python3-venv)." >&2
  exit 1
fi
# One install at a time: tests that run in parallel may ask for the same environment at once.
mkdir -p "$(dirname "$dest")"
exec 9>"$dest.lock"
flock 9
if [ -f "$dest/.installed" ] && cmp -s "$dest/.installed" "$requirements"; then
  exit 0
fi
echo "installing $requirements into $dest" >&2
rm -rf "$dest"
"$python" -m venv "$dest"
"$dest/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements" >&2
cp "$requirements" "$dest/.installed"
