# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: helm.

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
