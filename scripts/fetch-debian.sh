#!/usr/bin/env bash
# Unpacks Debian packages into a folder of the project's cache, for tests that need a program
# the machine lacks (HAProxy, Wine): usage `fetch-debian.sh DEST PACKAGE...`. The packages, and
# the library packages they need that are not installed here (with theirs in turn), are
# downloaded with apt-get into DEST (its own package lists too) and unpacked with dpkg-deb into
# DEST/root: nothing is installed, no service enabled, nothing outside DEST written. Does
# nothing once DEST/root is there; parallel callers wait for the one that fetches.
set -euo pipefail
dest="${1:?usage: fetch-debian.sh DEST PACKAGE...}"
shift
[ -d "$dest/root" ] && exit 0
mkdir -p "$(dirname "$dest")"
exec 9>"$dest.lock"
flock 9
[ -d "$dest/root" ] && exit 0
for tool in apt-get apt-cache dpkg-deb dpkg-query flock; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: fetching $* needs Debian's tools and $tool is missing" >&2
    exit 1
  fi
done

work="$dest.partial"
rm -rf "$work"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
log="$work/fetch.log"
apt=(-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1)
fail() {
  echo "error: could not fetch $* into $dest; apt-get said:" >&2
  cat "$log" >&2
  exit 1
}
apt-get "${apt[@]}" -q update >"$log" 2>&1 || fail "the package lists"

depends() {
  apt-cache "${apt[@]}" depends --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances --no-pre-depends "$1" 2>>"$log" |
    sed -n 's/^ *|\{0,1\}Depends: \(lib[^ <>]*\)$/\1/p'
}
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}
packages=("$@")
queue=("$@")
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
  fail "${packages[*]}"
for deb in "$work/debs"/*.deb; do
  dpkg-deb -x "$deb" "$work/root"
done
rm -rf "$work/lists" "$work/cache" "$work/debs" "$dest"
mv "$work" "$dest"
