# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: the real-node pieces: kube-router, local-path-provisioner, coredns, pause.

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
