# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: etcd.

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
