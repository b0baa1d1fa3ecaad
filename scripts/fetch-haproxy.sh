#!/usr/bin/env bash
# Puts HAProxy into the project's cache folder (default target/haproxy) for the tests that run
# toolshelf replicas behind it, and prints the path of a wrapper that runs it. HAProxy comes
# from Debian's package and the libraries it needs that the machine lacks
# (scripts/fetch-debian.sh: nothing installed, nothing outside the folder written). Does nothing
# once the wrapper is there. Set HAPROXY to a binary to use that one instead.
set -euo pipefail
if [ -n "${HAPROXY:-}" ]; then
  echo "$HAPROXY"
  exit 0
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/target/haproxy}"
wrapper="$dest/haproxy"
if [ -x "$wrapper" ]; then
  echo "$wrapper"
  exit 0
fi
bash "$root/scripts/fetch-debian.sh" "$dest" haproxy

libraries="$dest/root/usr/lib/x86_64-linux-gnu:$dest/root/lib/x86_64-linux-gnu"
cat >"$wrapper.$$" <<EOF
#!/bin/sh
# HAProxy unpacked from Debian's package by scripts/fetch-haproxy.sh, with its libraries.
LD_LIBRARY_PATH="$libraries\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dest/root/usr/sbin/haproxy" "\$@"
EOF
chmod +x "$wrapper.$$"
if ! "$wrapper.$$" -v >>"$dest/fetch.log" 2>&1; then
  rm -f "$wrapper.$$"
  echo "error: HAProxy unpacked into $dest does not run; $dest/fetch.log says why" >&2
  tail -5 "$dest/fetch.log" >&2
  exit 1
fi
mv "$wrapper.$$" "$wrapper"
echo "$wrapper"
