#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing, so that a fresh machine
# runs the tests with no manual step (the real node, the image builds and the workspace sandbox need
# system packages). Needs root and apt; without them it names what to install and fails.
#
# Usage: scripts/ensure-packages.sh PACKAGE...
set -euo pipefail

missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-packages: missing Debian packages: ${missing[*]} (install them as root: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "ensure-packages: installing ${missing[*]}" >&2
# One machine-wide lock: two test processes installing at once would fail on dpkg's own lock.
exec 9>/var/lock/agentry-ensure-packages.lock
flock 9
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
