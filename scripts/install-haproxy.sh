#!/usr/bin/env bash
# Makes sure HAProxy (Debian's package) is installed, for the test that runs three toolshelf
# replicas behind it, and prints the path of its binary. Installs it with apt-get when run as
# root; otherwise says how to install it.
set -euo pipefail
if command -v haproxy >/dev/null 2>&1; then
  command -v haproxy
  exit 0
fi
if [ -x /usr/sbin/haproxy ]; then
  echo /usr/sbin/haproxy
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "error: the replica test needs HAProxy and cannot install it here (it needs root and apt-get); install it with 'sudo apt-get install haproxy' and run the tests again" >&2
  exit 1
fi
echo "installing HAProxy from Debian's packages" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends haproxy >&2; then
  apt-get update >&2
  apt-get install -y --no-install-recommends haproxy >&2
fi
command -v haproxy 2>/dev/null || echo /usr/sbin/haproxy
