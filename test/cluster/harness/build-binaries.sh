#!/usr/bin/env bash
# Build (or reuse from a cache outside the repository) the binaries the cluster
# test harness needs: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, etcd, kwok, kwokctl, helm -- and optionally a moto[server] venv and
# the real-node pieces (kubelet, kube-proxy, kube-router, local-path-provisioner,
# coredns, pause).
#
# Everything is built from source through the Go module proxy (no release
# downloads). See NOTES.md next to this script for timings and background.
#
# Usage: build-binaries.sh [--out FILE] [--only LIST] [--moto] [--force] [-h]
#   --out FILE   also write the KEY=/abs/path lines (see below) to FILE
#   --only LIST  comma-separated subset of: kubernetes,etcd,kwok,helm,moto,
#                node,kube-router,local-path-provisioner,coredns,pause
#                (default: kubernetes,etcd,kwok,helm)
#   --moto       add moto to the selection
#   --real-node  add node,kube-router,local-path-provisioner,coredns,pause
#   --force      rebuild the selected pieces even if the cache looks valid
#
# stdout: one KEY=/absolute/path line per binary (KUBE_APISERVER,
# KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBECTL, ETCD, KWOK, KWOKCTL, HELM,
# MOTO_SERVER, KUBELET, KUBE_PROXY, KUBE_ROUTER, LOCAL_PATH_PROVISIONER, COREDNS,
# PAUSE) plus TOOLS_PATH=<bin dirs joined by ':'>. Progress goes to stderr.
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
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
  esac
done
selected() { [[ ",${ONLY}," == *",$1,"* ]]; }
for p in ${ONLY//,/ }; do
  case "$p" in kubernetes|etcd|kwok|helm|moto|node|kube-router|local-path-provisioner|coredns|pause) ;; *) die "unknown piece in --only: $p" ;; esac
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

# ---- kubernetes (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl)
# k8s_check <bindir> <binary...>: each binary reports K8S_VERSION (kubectl via `version --client`)
k8s_check() {
  local d="$1" b; shift
  for b in "$@"; do
    if [[ "$b" == kubectl ]]; then
      version_ok "$d/kubectl" "Client Version: ${K8S_VERSION}" version --client || return 1
    else
      version_ok "$d/$b" "Kubernetes ${K8S_VERSION}" --version || return 1
    fi
  done
}

# k8s_build <cache dir name> <cmd...>: builds k8s.io/kubernetes/cmd/<cmd> for each cmd through one
# wrapper module (kubernetes' own go.mod replaces its staging modules with ./staging paths, which
# `go install @version` refuses), unless the cache already holds them at K8S_VERSION. Prints the bin dir.
k8s_build() {
  local name="$1"; shift
  local final="$CACHE/${name}-${K8S_VERSION}" minor patch
  [[ "$K8S_VERSION" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "K8S_VERSION must look like v1.Y.Z, got $K8S_VERSION"
  minor="${BASH_REMATCH[1]}"; patch="${BASH_REMATCH[2]}"
  local staging_version="v0.${minor}.${patch}"

  if [[ $FORCE == 0 ]] && k8s_check "$final/bin" "$@"; then
    from_cache "$name" "$K8S_VERSION" "$final"
  else
    local start=$SECONDS
    log "${name} ${K8S_VERSION}: building $* (staging modules at ${staging_version})"
    local gomod info w
    gomod="$(mod_download "k8s.io/kubernetes@${K8S_VERSION}" GoMod)"
    info="$(mod_download "k8s.io/kubernetes@${K8S_VERSION}" Info)"
    [[ -f "$gomod" ]] || die "no go.mod for k8s.io/kubernetes@${K8S_VERSION}"
    w="$(new_tmp "${name}-${K8S_VERSION}")"
    mkdir -p "$w/src" "$w/bin"

    # Staging modules = every `replace k8s.io/x => ./staging/...` in kubernetes' go.mod
    # (block or single-line form). Pin each to the matching v0.Y.Z release.
    local staging
    staging="$(awk '
      $1 == "replace" && $2 == "(" { blk = 1; next }
      blk && $1 == ")"             { blk = 0; next }
      {
        if (blk) l = $0
        else if ($1 == "replace") { l = $0; sub(/^[ \t]*replace[ \t]+/, "", l) }
        else next
        n = split(l, f, " ")
        for (i = 1; i < n; i++) if (f[i] == "=>") { if (f[i+1] ~ /^\.\/staging\//) print f[1]; break }
      }' "$gomod")"
    [[ -n "$staging" ]] || die "found no ./staging replace directives in $gomod"
    log "${name}: $(wc -l <<<"$staging" | tr -d ' ') staging modules: $(tr '\n' ' ' <<<"$staging")"

    local goline godebug
    goline="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
    godebug="$(awk '/^godebug[ \t]*\(/ { blk = 1 } blk { print; if ($1 == ")") blk = 0; next } /^godebug[ \t]/ { print }' "$gomod")"
    {
      printf 'module agentry.local/toolbuild/kubernetes\n\ngo %s\n\n' "$goline"
      [[ -n "$godebug" ]] && printf '%s\n\n' "$godebug"
      printf 'require k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
      while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$staging_version"; done <<<"$staging"
      printf ')\n'
    } >"$w/src/go.mod"

    local pkgs=() getargs=() c p
    for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    for p in "${pkgs[@]}"; do getargs+=("${p}@${K8S_VERSION}"); done
    (cd "$w/src" && timed "${name}: go get" "$GO" get "${getargs[@]}") >&2

    # Same as hack/lib/version.sh + hack/lib/golang.sh (non-debug build).
    local date ldflags="-s -w" pkgpath
    date="$(mod_time "$info")"
    for pkgpath in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X ${pkgpath}.gitVersion=${K8S_VERSION} -X ${pkgpath}.gitMajor=1 -X ${pkgpath}.gitMinor=${minor}"
      [[ -n "$date" ]] && ldflags+=" -X ${pkgpath}.buildDate=${date}"
    done
    (cd "$w/src" && timed "${name}: go build" "$GO" build -p "$GO_BUILD_P" -trimpath \
        -tags selinux,notest,grpcnotrace -ldflags "$ldflags" -o "$w/bin/" "${pkgs[@]}") >&2
    k8s_check "$w/bin" "$@" || die "freshly built ${name} binaries do not report ${K8S_VERSION}"
    rm -rf "$w/src"
    install_dir "$w" "$final"
    built "$name" "$K8S_VERSION" "$start"
  fi
  add_bindir "$final/bin"
}

build_kubernetes() {
  k8s_build kubernetes kube-apiserver kube-controller-manager kube-scheduler kubectl
  local bin="$CACHE/kubernetes-${K8S_VERSION}/bin"
  add_result KUBE_APISERVER "$bin/kube-apiserver"
  add_result KUBE_CONTROLLER_MANAGER "$bin/kube-controller-manager"
  add_result KUBE_SCHEDULER "$bin/kube-scheduler"
  add_result KUBECTL "$bin/kubectl"
}

# ---- node (kubelet, kube-proxy): the same wrapper module, a cache entry of its own ---------
build_node() {
  k8s_build kubernetes-node kubelet kube-proxy
  local bin="$CACHE/kubernetes-node-${K8S_VERSION}/bin"
  add_result KUBELET "$bin/kubelet"
  add_result KUBE_PROXY "$bin/kube-proxy"
}

# ---- etcd ----------------------------------------------------------------------
build_etcd() {
  local final="$CACHE/etcd-${ETCD_VERSION}"
  local want="etcd Version: ${ETCD_VERSION#v}"
  if [[ $FORCE == 0 ]] && version_ok "$final/bin/etcd" "$want" --version; then
    from_cache etcd "$ETCD_VERSION" "$final"
  else
    local start=$SECONDS
    log "etcd ${ETCD_VERSION}: building"
    # go.etcd.io/etcd/server/v3 has `replace ... => ../api` lines, so `go install
    # ...@version` refuses it; a wrapper module ignores the dependency's replaces,
    # and server/v3 already requires api/client/pkg at the same version.
    local gomod w goline
    gomod="$(mod_download "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" GoMod)"
    goline="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
    w="$(new_tmp "etcd-${ETCD_VERSION}")"
    mkdir -p "$w/src" "$w/bin"
    printf 'module agentry.local/toolbuild/etcd\n\ngo %s\n\nrequire go.etcd.io/etcd/server/v3 %s\n' \
      "$goline" "$ETCD_VERSION" >"$w/src/go.mod"
    (cd "$w/src" && timed "etcd: go get" "$GO" get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}") >&2
    # etcd's build script sets only GitSHA (the version is a constant); there is
    # no git checkout here, so record the tag instead of a commit.
    (cd "$w/src" && timed "etcd: go build" "$GO" build -p "$GO_BUILD_P" -trimpath \
        -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${ETCD_VERSION}" \
        -o "$w/bin/etcd" go.etcd.io/etcd/server/v3) >&2
    version_ok "$w/bin/etcd" "$want" --version || die "freshly built etcd does not report ${ETCD_VERSION}"
    rm -rf "$w/src"
    install_dir "$w" "$final"
    built etcd "$ETCD_VERSION" "$start"
  fi
  add_result ETCD "$final/bin/etcd"
  add_bindir "$final/bin"
}

# ---- kwok / kwokctl --------------------------------------------------------------
kwok_check() {
  # prints e.g. "kwokctl version v0.8.0 go1.26.8 (linux/amd64)"
  version_ok "$1/kwok" "kwok version ${KWOK_VERSION}" --version &&
    version_ok "$1/kwokctl" "kwokctl version ${KWOK_VERSION}" --version
}

build_kwok() {
  local final="$CACHE/kwok-${KWOK_VERSION}"
  if [[ $FORCE == 0 ]] && kwok_check "$final/bin"; then
    from_cache kwok "$KWOK_VERSION" "$final"
  else
    local start=$SECONDS
    log "kwok ${KWOK_VERSION}: building"
    local w; w="$(new_tmp "kwok-${KWOK_VERSION}")"
    mkdir -p "$w/bin"
    # sigs.k8s.io/kwok has no replace directives: plain `go install pkg@version`.
    # consts.Version (source default "0.8.0", no "v") is what --version prints and
    # what kwokctl records in cluster configs; hack/releases.sh sets it via -X too.
    (cd "$w" && timed "kwok: go install" env GOBIN="$w/bin" "$GO" install -p "$GO_BUILD_P" -trimpath \
        -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" \
        "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}" "sigs.k8s.io/kwok/cmd/kwokctl@${KWOK_VERSION}") >&2
    kwok_check "$w/bin" || die "freshly built kwok/kwokctl do not report ${KWOK_VERSION}"
    install_dir "$w" "$final"
    built kwok "$KWOK_VERSION" "$start"
  fi
  add_result KWOK "$final/bin/kwok"
  add_result KWOKCTL "$final/bin/kwokctl"
  add_bindir "$final/bin"
}

# ---- helm ------------------------------------------------------------------------
build_helm() {
  local final="$CACHE/helm-${HELM_VERSION}"
  if [[ $FORCE == 0 ]] && version_ok "$final/bin/helm" "${HELM_VERSION}" version --template '{{.Version}}'; then
    from_cache helm "$HELM_VERSION" "$final"
  else
    local start=$SECONDS
    log "helm ${HELM_VERSION}: building"
    local gomod w cgo major minor
    gomod="$(mod_download "helm.sh/helm/v3@${HELM_VERSION}" GoMod)"
    grep -q '=>' "$gomod" && die "helm ${HELM_VERSION} go.mod has replace directives; go install @version will not work"
    # Like helm's Makefile: default .Capabilities.KubeVersion follows its client-go.
    cgo="$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "$gomod")"
    [[ "$cgo" =~ ^v0\.([0-9]+)\. ]] || die "cannot find k8s.io/client-go version in $gomod"
    major=1; minor="${BASH_REMATCH[1]}"
    w="$(new_tmp "helm-${HELM_VERSION}")"
    mkdir -p "$w/bin"
    local ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
    ldflags+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=${major} -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${minor}"
    ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=${major} -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${minor}"
    (cd "$w" && timed "helm: go install" env GOBIN="$w/bin" "$GO" install -p "$GO_BUILD_P" -trimpath \
        -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}") >&2
    version_ok "$w/bin/helm" "${HELM_VERSION}" version --template '{{.Version}}' ||
      die "freshly built helm does not report ${HELM_VERSION}"
    install_dir "$w" "$final"
    built helm "$HELM_VERSION" "$start"
  fi
  add_result HELM "$final/bin/helm"
  add_bindir "$final/bin"
}

# ---- moto (python venv; not relocatable, so a stamp file marks completion) -------
moto_check() {
  [[ -f "$1/.complete" ]] || return 1
  [[ "$("$1/venv/bin/python" -c 'import moto; print(moto.__version__)' 2>/dev/null)" == "$MOTO_VERSION" ]] || return 1
  [[ -x "$1/venv/bin/moto_server" ]]
}

build_moto() {
  local final="$CACHE/moto-${MOTO_VERSION}"
  if [[ $FORCE == 0 ]] && moto_check "$final"; then
    from_cache moto "$MOTO_VERSION" "$final"
  else
    local start=$SECONDS
    log "moto ${MOTO_VERSION}: installing into $final/venv"
    rm -rf "$final"
    mkdir -p "$final"
    timed "moto: venv" "$PYTHON" -m venv "$final/venv" >&2
    timed "moto: pip install" "$final/venv/bin/pip" install --quiet --disable-pip-version-check \
      "moto[server]==${MOTO_VERSION}" >&2
    "$final/venv/bin/python" -c 'import moto; print(moto.__version__)' >"$final/.complete"
    moto_check "$final" || die "moto venv at $final failed its check"
    built moto "$MOTO_VERSION" "$start"
  fi
  add_result MOTO_SERVER "$final/venv/bin/moto_server"
  add_bindir "$final/venv/bin"
}

# ---- real-node pieces built with plain `go install pkg@version` ---------------------
# (their modules have no replace directives; checked with `go mod download -json`)
# go_install_piece <cache name> <version> <check fn> <ldflags> <pkg@version>: builds into the cache
# unless `<check fn> <bindir>` already accepts it; prints nothing, the caller adds results.
go_install_piece() {
  local name="$1" version="$2" check="$3" ldflags="$4" pkg="$5"
  local final="$CACHE/${name}-${version}"
  if [[ $FORCE == 0 ]] && "$check" "$final/bin"; then
    from_cache "$name" "$version" "$final"
  else
    local start=$SECONDS
    log "${name} ${version}: building"
    local w; w="$(new_tmp "${name}-${version}")"
    mkdir -p "$w/bin"
    (cd "$w" && timed "${name}: go install" env GOBIN="$w/bin" "$GO" install -p "$GO_BUILD_P" -trimpath \
        -ldflags "$ldflags" "$pkg") >&2
    "$check" "$w/bin" || die "freshly built ${name} does not report ${version}"
    install_dir "$w" "$final"
    built "$name" "$version" "$start"
  fi
  add_bindir "$final/bin"
}

# "Running <path> version v2.1.0, built on <date>, go1.x": the version sits mid-line.
kube_router_check() {
  [[ -x "$1/kube-router" ]] && "$1/kube-router" --version 2>&1 | grep -qF " version ${KUBE_ROUTER_VERSION}, "
}
build_kube_router() {
  go_install_piece kube-router "$KUBE_ROUTER_VERSION" kube_router_check \
    "-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=${KUBE_ROUTER_VERSION} -X github.com/cloudnativelabs/kube-router/v2/pkg/version.BuildDate=${KUBE_ROUTER_VERSION}" \
    "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@${KUBE_ROUTER_VERSION}"
  add_result KUBE_ROUTER "$CACHE/kube-router-${KUBE_ROUTER_VERSION}/bin/kube-router"
}

local_path_provisioner_check() {
  version_ok "$1/local-path-provisioner" "local-path-provisioner version ${LOCAL_PATH_PROVISIONER_VERSION}" --version
}
build_local_path_provisioner() {
  # scripts/build in the module sets main.VERSION the same way.
  go_install_piece local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION" local_path_provisioner_check \
    "-s -w -X main.VERSION=${LOCAL_PATH_PROVISIONER_VERSION}" \
    "github.com/rancher/local-path-provisioner@${LOCAL_PATH_PROVISIONER_VERSION}"
  add_result LOCAL_PATH_PROVISIONER "$CACHE/local-path-provisioner-${LOCAL_PATH_PROVISIONER_VERSION}/bin/local-path-provisioner"
}

coredns_check() { version_ok "$1/coredns" "CoreDNS-${COREDNS_VERSION#v}" -version; }
build_coredns() {
  # The version is a source constant; GitCommit is unknown without a checkout: record the tag.
  go_install_piece coredns "$COREDNS_VERSION" coredns_check \
    "-s -w -X github.com/coredns/coredns/coremain.GitCommit=${COREDNS_VERSION}" \
    "github.com/coredns/coredns@${COREDNS_VERSION}"
  add_result COREDNS "$CACHE/coredns-${COREDNS_VERSION}/bin/coredns"
}

# ---- pause: Kubernetes' own build/pause/linux/pause.c, static, like its Makefile ------
pause_tag() { awk '$1 == "TAG" && $2 == "?=" { print $3; exit }' "$1/build/pause/Makefile"; }
build_pause() {
  local final="$CACHE/pause-${K8S_VERSION}" dir tag
  command -v "${CC:-gcc}" >/dev/null 2>&1 || die "the pause binary needs a C compiler (apt-get install gcc libc6-dev)"
  dir="$(mod_download "k8s.io/kubernetes@${K8S_VERSION}" Dir)"
  tag="$(pause_tag "$dir")"
  [[ -n "$tag" ]] || die "cannot find the pause TAG in $dir/build/pause/Makefile"
  if [[ $FORCE == 0 ]] && version_ok "$final/bin/pause" "pause.c v${tag}-${K8S_VERSION}" -v; then
    from_cache pause "$tag" "$final"
  else
    local start=$SECONDS
    log "pause ${tag}: compiling $dir/build/pause/linux/pause.c"
    local w; w="$(new_tmp "pause-${K8S_VERSION}")"
    mkdir -p "$w/bin"
    "${CC:-gcc}" -Os -Wall -Werror -static "-DVERSION=v${tag}-${K8S_VERSION}" \
      -o "$w/bin/pause" "$dir/build/pause/linux/pause.c" >&2
    version_ok "$w/bin/pause" "pause.c v${tag}-${K8S_VERSION}" -v || die "freshly built pause does not run"
    install_dir "$w" "$final"
    built pause "$tag" "$start"
  fi
  add_result PAUSE "$final/bin/pause"
}

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
