#!/usr/bin/env bash
# Installs the third-party MCP servers used by the interop tests (exact versions, from
# tests/interop/package.json and its lockfile) into the folder given as $1 (default
# target/interop); with $2, the npm packages of that folder's package.json and lockfile instead
# (tests/clients: the clients' own CLIs). Does nothing when they are already installed at those
# versions.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/target/interop}"
packages="${2:-$root/tests/interop}"
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "error: the interop tests need Node.js 20+ with npm on PATH (e.g. apt-get install nodejs npm)." >&2
  exit 1
fi
mkdir -p "$dest"
# One install at a time: tests that run in parallel (and scripts/package.sh, which one of them
# starts) may ask at once, and two `npm ci` in one folder wreck each other's node_modules.
exec 9>"$dest.lock"
flock 9
if [ -f "$dest/.installed" ] && cmp -s "$dest/.installed" "$packages/package-lock.json"; then
  exit 0
fi
cp "$packages/package.json" "$packages/package-lock.json" "$dest/"
echo "installing the npm packages of $packages into $dest" >&2
# npm's cache in the project's target folder too, not the user's home.
(cd "$dest" && npm_config_cache="$root/target/npm-cache" npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$packages/package-lock.json" "$dest/.installed"
