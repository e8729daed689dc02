#!/usr/bin/env bash
# Print the Debian sources for a suite as mmdebstrap mirror arguments, read from apt's own sources
# lists (one-line and deb822 formats), so that no mirror host is written down in this repository.
#
# Usage: images/debian-sources.sh SUITE [FILE...]
#   FILE  apt sources lists to read (default: /etc/apt/sources.list, /etc/apt/sources.list.d/*.list
#         and *.sources)
#
# stdout: one "deb URI SUITE main" line for SUITE, SUITE-updates and SUITE-security each, the first
# source that lists it, in the order found. Nothing when no source lists them. With DEBIAN_MIRROR
# set, only "deb $DEBIAN_MIRROR SUITE main" (the lists are not read).
set -euo pipefail

suite="${1:?usage: debian-sources.sh SUITE [FILE...]}"
shift
if [[ -n "${DEBIAN_MIRROR:-}" ]]; then
  printf 'deb %s %s main\n' "$DEBIAN_MIRROR" "$suite"
  exit 0
fi
files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && files+=("$f")
  done
fi
[[ ${#files[@]} -gt 0 ]] || exit 0

awk -v suite="$suite" '
  function emit(uri, s) {
    if ((s == suite || s == suite "-updates" || s == suite "-security") && !seen[s]++)
      print "deb " uri " " s " main"
  }
  # deb822 stanza: every URI with every suite, for stanzas of type deb
  function flush(   i, j, nu, ns, u, s) {
    if (types ~ /(^| )deb( |$)/) {
      nu = split(uris, u, " "); ns = split(suites, s, " ")
      for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) emit(u[i], s[j])
    }
    types = uris = suites = ""
  }
  FNR == 1 { flush() }
  /^[ \t]*#/ { next }
  FILENAME ~ /\.sources$/ {
    if ($0 ~ /^[ \t]*$/) { flush(); next }
    field = tolower($1); $1 = ""
    if (field == "types:") types = $0
    else if (field == "uris:") uris = $0
    else if (field == "suites:") suites = $0
    next
  }
  # one-line form: deb [options] URI SUITE COMPONENT...
  $1 == "deb" {
    i = 2
    if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
    emit($i, $(i + 1))
  }
  END { flush() }
' "${files[@]}"
