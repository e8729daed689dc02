# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: kwok and kwokctl.

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
