#!/usr/bin/env bash
# Build (or reuse from a cache outside the repository) the binaries the cluster
# test harness needs: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, etcd, kwok, kwokctl, helm -- and optionally a moto[server] venv and
# the real-node pieces (kubelet, kube-proxy, kube-router, local-path-provisioner,
# coredns, pause), or the peer controller of `npm run bench:peer` (agent-sandbox).
#
# Everything is built from source through the Go module proxy (no release
# downloads). See NOTES.md next to this script for timings and background.
#
# Usage: build-binaries.sh [--out FILE] [--only LIST] [--moto] [--real-node]
#                          [--agent-sandbox] [--force] [-h]
#   --out FILE   also write the KEY=/abs/path lines (see below) to FILE
#   --only LIST  comma-separated subset of: kubernetes,etcd,kwok,helm,moto,
#                node,kube-router,local-path-provisioner,coredns,pause,
#                agent-sandbox (default: kubernetes,etcd,kwok,helm)
#   --moto       add moto to the selection
#   --real-node  add node,kube-router,local-path-provisioner,coredns,pause
#   --agent-sandbox  add agent-sandbox (the bench's peer controller and its
#                Sandbox CRD; only the bench needs it)
#   --force      rebuild the selected pieces even if the cache looks valid
#
# stdout: one KEY=/absolute/path line per binary (KUBE_APISERVER,
# KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBECTL, ETCD, KWOK, KWOKCTL, HELM,
# MOTO_SERVER, KUBELET, KUBE_PROXY, KUBE_ROUTER, LOCAL_PATH_PROVISIONER, COREDNS,
# PAUSE, AGENT_SANDBOX_CONTROLLER, AGENT_SANDBOX_CRD) plus TOOLS_PATH=<bin dirs joined by ':'>. Progress goes to stderr.
#
# Cache: ${AGENTRY_TOOLS_CACHE:-$HOME/.cache/agentry-tools}/<tool>-<version>/bin/
# A cache entry is trusted only if every binary exists and its --version output
# shows the pinned version. Go builds happen in <cache>/.tmp and are renamed
# into place only after they succeeded and passed the version check.
set -euo pipefail

# ---- pinned versions (override via environment) -----------------------------
K8S_VERSION="${K8S_VERSION:-v1.37.2}"     # k8s.io/kubernetes; staging modules use v0.Y.Z
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"   # go.etcd.io/etcd/server/v3
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"    # sigs.k8s.io/kwok
HELM_VERSION="${HELM_VERSION:-v3.22.0}"   # helm.sh/helm/v3
MOTO_VERSION="${MOTO_VERSION:-5.2.5}"     # PyPI moto[server]
KUBE_ROUTER_VERSION="${KUBE_ROUTER_VERSION:-v2.1.0}"                        # github.com/cloudnativelabs/kube-router/v2
LOCAL_PATH_PROVISIONER_VERSION="${LOCAL_PATH_PROVISIONER_VERSION:-v0.0.30}" # github.com/rancher/local-path-provisioner
COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"                               # github.com/coredns/coredns
AGENT_SANDBOX_VERSION="${AGENT_SANDBOX_VERSION:-v0.5.6}"                    # sigs.k8s.io/agent-sandbox
# kubelet, kube-proxy and pause follow K8S_VERSION.

CACHE="${AGENTRY_TOOLS_CACHE:-$HOME/.cache/agentry-tools}"
GO="${GO:-go}"
PYTHON="${PYTHON:-python3}"
GO_BUILD_P="${GO_BUILD_P:-2}"             # go build -p (parallel compile/link jobs)
# Never silently download another Go toolchain; fail if a module needs a newer Go.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export CGO_ENABLED=0

log() { printf '[build-binaries] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }

OUT_FILE=""
ONLY="kubernetes,etcd,kwok,helm"
FORCE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT_FILE="${2:?--out needs a file}"; shift 2 ;;
    --out=*) OUT_FILE="${1#*=}"; shift ;;
    --only) ONLY="${2:?--only needs a list}"; shift 2 ;;
    --only=*) ONLY="${1#*=}"; shift ;;
    --moto) ONLY="${ONLY},moto"; shift ;;
    --real-node) ONLY="${ONLY},node,kube-router,local-path-provisioner,coredns,pause"; shift ;;
    --agent-sandbox) ONLY="${ONLY},agent-sandbox"; shift ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
  esac
done
selected() { [[ ",${ONLY}," == *",$1,"* ]]; }
for p in ${ONLY//,/ }; do
  case "$p" in kubernetes|etcd|kwok|helm|moto|node|kube-router|local-path-provisioner|coredns|pause|agent-sandbox) ;; *) die "unknown piece in --only: $p" ;; esac
done

mkdir -p "$CACHE/.tmp"
CACHE="$(cd "$CACHE" && pwd -P)"
TMP_ROOT="$CACHE/.tmp"

# One build at a time per cache (a second invocation waits, then reuses).
LOCKED=0
if command -v flock >/dev/null 2>&1; then
  exec {LOCK_FD}>"$CACHE/.lock"
  if ! flock -n "$LOCK_FD"; then
    log "waiting for another build-binaries.sh holding $CACHE/.lock"
    flock "$LOCK_FD"
  fi
  LOCKED=1
fi

TMP_DIRS=()
cleanup() { local d; for d in "${TMP_DIRS[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT
new_tmp() { # new_tmp <name> -> prints a fresh dir under $TMP_ROOT
  local d; d="$(mktemp -d "$TMP_ROOT/$1.XXXXXX")"; TMP_DIRS+=("$d"); chmod 755 "$d"; printf '%s\n' "$d"
}

# Leftovers of killed runs (while we hold the lock nobody else can be using them).
if [[ $LOCKED == 1 ]]; then
  find "$TMP_ROOT" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null || true
fi

RESULTS=()   # KEY=path
BIN_DIRS=()
add_result() { RESULTS+=("$1=$2"); }
add_bindir() { local d; for d in "${BIN_DIRS[@]}"; do [[ "$d" == "$1" ]] && return; done; BIN_DIRS+=("$1"); }

# ---- helpers -----------------------------------------------------------------
# version_ok <binary> <expected line> <args...>: some output line of `binary args...`
# equals the expected line, or starts with it followed by a space (so v1.37.2
# does not accept v1.37.20).
version_ok() {
  local bin="$1" want="$2" line; shift 2
  [[ -x "$bin" ]] || return 1
  local out; out="$("$bin" "$@" 2>&1)" || return 1
  while IFS= read -r line; do
    [[ "$line" == "$want" || "$line" == "$want "* ]] && return 0
  done <<<"$out"
  return 1
}

# mod_download <module@version> <field: GoMod|Info|Dir> -> path
mod_download() {
  local json
  if ! json="$(cd "$TMP_ROOT" && "$GO" mod download -json "$1")"; then
    printf '%s\n' "$json" >&2
    die "go mod download $1 failed"
  fi
  printf '%s\n' "$json" | sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" | head -n1
}

# module release time from the proxy's .info (used as a reproducible build date)
mod_time() { sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$1"; }

# install_dir <tmpdir> <final dir>: atomic rename of a verified build into the cache
install_dir() {
  local tmp="$1" final="$2" old=""
  if [[ -e "$final" ]]; then
    old="$(mktemp -d "$TMP_ROOT/old.XXXXXX")"; TMP_DIRS+=("$old")
    mv -T "$final" "$old/x"
  fi
  mv -T "$tmp" "$final"
}

# One line per tool, as it is settled and again at the end: its version, and cache or built.
SUMMARY=()
from_cache() { # from_cache <tool> <version> <dir>
  log "$1 $2: from cache ($3)"; SUMMARY+=("$1 $2 (cache)")
}
built() { # built <tool> <version> <start SECONDS>
  log "$1 $2: built in $((SECONDS - $3)) s"; SUMMARY+=("$1 $2 (built in $((SECONDS - $3)) s)")
}

timed() { # timed <label> <cmd...>: run, log wall time
  local label="$1"; shift
  local start=$SECONDS
  "$@"
  log "$label took $((SECONDS - start))s"
}

# ---- the builds, one file per tool family --------------------------------------
BUILD_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/build"
for family in kubernetes etcd kwok helm moto real-node agent-sandbox; do
  # shellcheck source=/dev/null
  source "$BUILD_DIR/$family.sh"
done

# ---- main ------------------------------------------------------------------------
command -v "$GO" >/dev/null 2>&1 || die "go not found (GO=$GO)"
selected kubernetes && build_kubernetes
selected etcd && build_etcd
selected kwok && build_kwok
selected helm && build_helm
selected moto && build_moto
selected node && build_node
selected kube-router && build_kube_router
selected local-path-provisioner && build_local_path_provisioner
selected coredns && build_coredns
selected pause && build_pause
selected agent-sandbox && build_agent_sandbox

summary=""; for entry in "${SUMMARY[@]}"; do summary+="${summary:+, }${entry}"; done
log "ready: ${summary}"

tools_path="$(IFS=:; printf '%s' "${BIN_DIRS[*]}")"
RESULTS+=("TOOLS_PATH=${tools_path}")
printf '%s\n' "${RESULTS[@]}"
if [[ -n "$OUT_FILE" ]]; then
  mkdir -p "$(dirname "$OUT_FILE")"
  printf '%s\n' "${RESULTS[@]}" >"$OUT_FILE.tmp.$$"
  mv -f "$OUT_FILE.tmp.$$" "$OUT_FILE"
fi
