#!/usr/bin/env bash
# Puts Wine 8 (Debian's wine64) into the project's cache folder (default target/wine) for the
# tests that run toolshelf's Windows build, and prints the path of a wrapper that runs a Windows
# program under it (`wine PROGRAM.exe ARGS...`), in a prefix of its own (DEST/prefix, made on
# the first run, ~10 s). Wine and the libraries it needs that the machine lacks come from
# Debian's packages (scripts/fetch-debian.sh: nothing installed, nothing outside the folder
# written), unpacked where Debian's paths do not reach, so the wrapper points Wine at them. It
# also builds DEST/bcryptprimitives.dll (tests/wine/bcryptprimitives.c, with zig from
# target/cross-tools), which a test puts beside the .exe it runs. Set WINE to a wrapper of your
# own to use that one instead.
set -euo pipefail
if [ -n "${WINE:-}" ]; then
  echo "$WINE"
  exit 0
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$root/target/wine}"
wrapper="$dest/wine"
if [ -x "$wrapper" ]; then
  echo "$wrapper"
  exit 0
fi
bash "$root/scripts/fetch-debian.sh" "$dest" wine64 libwine
exec 9>"$dest.lock"
flock 9
if [ -x "$wrapper" ]; then
  echo "$wrapper"
  exit 0
fi
# Debian's wineserver script names /usr/lib/wine; Wine finds the rest from where it lies.
sed -i "s|=/usr/lib/wine/|=$dest/root/usr/lib/wine/|" "$dest/root/usr/lib/wine/wineserver"
libraries="$dest/root/usr/lib/x86_64-linux-gnu:$dest/root/lib/x86_64-linux-gnu"
cat >"$wrapper.$$" <<EOF
#!/bin/sh
# Wine unpacked from Debian's packages by scripts/fetch-wine.sh, in its own prefix; no Mono
# or Gecko installer prompts, no debug channels.
export LD_LIBRARY_PATH="$libraries\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export WINEPREFIX="$dest/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
export WINEDLLPATH="$dest/root/usr/x86_64-w64-mingw32/lib"
exec "$dest/root/usr/lib/wine/wine64" "\$@"
EOF
chmod +x "$wrapper.$$"
# The prefix: Wine's user32 needs zlib1.dll, which Debian's Wine looks for in
# /usr/x86_64-w64-mingw32: WINEDLLPATH names the unpacked folder for the prefix's making, and a
# copy in the prefix's system32 serves every program after.
"$wrapper.$$" wineboot -i >>"$dest/fetch.log" 2>&1 || true
cp "$dest/root/usr/x86_64-w64-mingw32/lib/zlib1.dll" "$dest/prefix/drive_c/windows/system32/"
"$wrapper.$$" wineboot -u >>"$dest/fetch.log" 2>&1 || true
if [ "$("$wrapper.$$" cmd /c echo ready 2>>"$dest/fetch.log" | tr -d '\r')" != ready ]; then
  rm -f "$wrapper.$$"
  echo "error: Wine unpacked into $dest does not run; $dest/fetch.log says why" >&2
  tail -5 "$dest/fetch.log" >&2
  exit 1
fi
tools="$root/target/cross-tools"
bash "$root/scripts/install-python.sh" "$tools" "$root/packaging/cross-requirements.txt"
"$tools/bin/python" -m ziglang cc -target x86_64-windows-gnu -shared -O2 \
  -o "$dest/bcryptprimitives.dll" "$root/tests/wine/bcryptprimitives.c" -ladvapi32
mv "$wrapper.$$" "$wrapper"
echo "$wrapper"
