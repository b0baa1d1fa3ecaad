#!/usr/bin/env bash
# Puts HAProxy into the project's cache folder (default target/haproxy) for the tests that run
# toolshelf replicas behind it, and prints the path of a wrapper that runs it. HAProxy comes
# from Debian's package and the libraries it needs that the machine lacks, downloaded with
# apt-get into that folder (its own package lists too) and unpacked with dpkg-deb: nothing is
# installed, no service enabled, nothing outside the folder written. Does nothing once the
# wrapper is there. Set HAPROXY to a binary to use that one instead.
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
# Tests run in parallel: one fetches, the others wait for it and use what it fetched.
mkdir -p "$(dirname "$dest")"
exec 9>"$dest.lock"
flock 9
if [ -x "$wrapper" ]; then
  echo "$wrapper"
  exit 0
fi
for tool in apt-get apt-cache dpkg-deb dpkg-query flock; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: the replica tests fetch HAProxy with Debian's tools and $tool is missing; install HAProxy yourself and run the tests with HAPROXY=/path/to/haproxy" >&2
    exit 1
  fi
done

work="$dest.partial"
rm -rf "$work"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
log="$work/fetch.log"
apt=(-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1)
fail() {
  echo "error: could not fetch HAProxy into $dest ($1); apt-get said:" >&2
  cat "$log" >&2
  exit 1
}
apt-get "${apt[@]}" -q update >"$log" 2>&1 || fail "apt-get update"

# HAProxy, and the library packages it needs that are not installed here, with theirs in
# turn (a library installed here has its own).
depends() {
  apt-cache "${apt[@]}" depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances --no-pre-depends "$1" 2>>"$log" |
    sed -n 's/^ *|\{0,1\}Depends: \(lib[^ <>]*\)$/\1/p'
}
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}
packages=(haproxy)
queue=(haproxy)
while [ "${#queue[@]}" -gt 0 ]; do
  next=("${queue[@]}")
  queue=()
  for package in "${next[@]}"; do
    while read -r library; do
      if ! installed "$library" && [[ " ${packages[*]} " != *" $library "* ]]; then
        packages+=("$library")
        queue+=("$library")
      fi
    done < <(depends "$package")
  done
done
(cd "$work/debs" && apt-get "${apt[@]}" -q download "${packages[@]}" >>"$log" 2>&1) ||
  fail "apt-get download ${packages[*]}"
for deb in "$work/debs"/*.deb; do
  dpkg-deb -x "$deb" "$work/root"
done

libraries="$dest/root/usr/lib/x86_64-linux-gnu:$dest/root/lib/x86_64-linux-gnu"
cat >"$work/haproxy" <<EOF
#!/bin/sh
# HAProxy unpacked from Debian's package by scripts/fetch-haproxy.sh, with its libraries.
LD_LIBRARY_PATH="$libraries\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dest/root/usr/sbin/haproxy" "\$@"
EOF
chmod +x "$work/haproxy"
rm -rf "$work/lists" "$work/cache" "$work/debs" "$dest"
mv "$work" "$dest"
if ! "$wrapper" -v >>"$dest/fetch.log" 2>&1; then
  rm -f "$wrapper"
  echo "error: HAProxy unpacked into $dest does not run; $dest/fetch.log says why" >&2
  tail -5 "$dest/fetch.log" >&2
  exit 1
fi
echo "$wrapper"
