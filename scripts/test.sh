#!/usr/bin/env bash
# The README's test command (`npm test`): type check, lint, then jest in three runs. The real-node
# harness's own teardown test starts and kills nodes of its own, and only one real node may run on a
# machine at a time, so it runs after the run that holds the realnode project's node.
#
# Usage: scripts/test.sh [--results DIR] [jest options...]
#   --results DIR   write each run's jest JSON results into DIR (.ci/run counts them)
set -uo pipefail
cd "$(dirname "$0")/.."

results=""
if [[ ${1:-} == --results ]]; then
  results="${2:?--results needs a directory}"
  shift 2
  mkdir -p "$results"
fi
json() { [[ -n $results ]] && printf -- '--json\n--outputFile=%s/%s.json\n' "$results" "$1"; }

npm run --silent typecheck || exit 1
npm run --silent lint || exit 1

# On 2 cores jest runs every test file in this one process (one worker means in band), and over ~300
# files its heap outgrew Node's default limit (about 4 GB: an out-of-memory abort at 45 min on
# 2026-11-26); the machine has the memory, so the limit is raised rather than the run split.
jest=(node --max-old-space-size=8192 --experimental-vm-modules node_modules/jest/bin/jest.js)
status=0
"${jest[@]}" --selectProjects unit integration browser cluster realnode $(json main) "$@" || status=1
"${jest[@]}" --selectProjects realnode-harness --maxWorkers=1 $(json realnode-harness) "$@" || status=1
# QEMU emulation takes both cores: the VM suite runs alone, after the others.
"${jest[@]}" --selectProjects vm --maxWorkers=1 $(json vm) "$@" || status=1
exit "$status"
