# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: the Kubernetes control plane, kubectl, and the node binaries of the same version.

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
