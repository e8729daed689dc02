# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: the peer
# controller of `npm run bench:peer`, kubernetes-sigs/agent-sandbox, and its Sandbox CRD.

# ---- agent-sandbox (bench only) ------------------------------------------------------
agent_sandbox_check() {
  # prints "agent-sandbox-controller, version v0.5.6 (revision: v0.5.6)" among build details
  version_ok "$1/bin/agent-sandbox-controller" \
    "agent-sandbox-controller, version ${AGENT_SANDBOX_VERSION} (revision: ${AGENT_SANDBOX_VERSION})" --version &&
    [[ -s "$1/crds/agents.x-k8s.io_sandboxes.yaml" ]]
}

build_agent_sandbox() {
  local final="$CACHE/agent-sandbox-${AGENT_SANDBOX_VERSION}"
  if [[ $FORCE == 0 ]] && agent_sandbox_check "$final"; then
    from_cache agent-sandbox "$AGENT_SANDBOX_VERSION" "$final"
  else
    local start=$SECONDS
    log "agent-sandbox ${AGENT_SANDBOX_VERSION}: building"
    # The proxy refuses the module's version list, so the version is always explicit; its go.mod
    # has no replace directives, so a wrapper module resolves exactly its own requirements.
    local gomod dir w goline
    gomod="$(mod_download "sigs.k8s.io/agent-sandbox@${AGENT_SANDBOX_VERSION}" GoMod)"
    dir="$(mod_download "sigs.k8s.io/agent-sandbox@${AGENT_SANDBOX_VERSION}" Dir)"
    grep -q '=>' "$gomod" && die "agent-sandbox ${AGENT_SANDBOX_VERSION} go.mod has replace directives"
    goline="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
    w="$(new_tmp "agent-sandbox-${AGENT_SANDBOX_VERSION}")"
    mkdir -p "$w/src" "$w/bin" "$w/crds"
    printf 'module agentry.local/toolbuild/agent-sandbox\n\ngo %s\n\nrequire sigs.k8s.io/agent-sandbox %s\n' \
      "$goline" "$AGENT_SANDBOX_VERSION" >"$w/src/go.mod"
    (cd "$w/src" && timed "agent-sandbox: go get" "$GO" get "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller@${AGENT_SANDBOX_VERSION}") >&2
    # Its Makefile stamps the version and commit with -X; without a checkout the tag stands for both.
    local pkg="sigs.k8s.io/agent-sandbox/internal/version"
    (cd "$w/src" && timed "agent-sandbox: go build" "$GO" build -p "$GO_BUILD_P" -trimpath \
        -ldflags "-s -w -X ${pkg}.gitVersion=${AGENT_SANDBOX_VERSION} -X ${pkg}.gitSHA=${AGENT_SANDBOX_VERSION}" \
        -o "$w/bin/agent-sandbox-controller" sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller) >&2
    cp "$dir/k8s/crds/agents.x-k8s.io_sandboxes.yaml" "$w/crds/"
    chmod 644 "$w/crds/"*.yaml
    rm -rf "$w/src"
    agent_sandbox_check "$w" || die "freshly built agent-sandbox-controller does not report ${AGENT_SANDBOX_VERSION}"
    install_dir "$w" "$final"
    built agent-sandbox "$AGENT_SANDBOX_VERSION" "$start"
  fi
  add_result AGENT_SANDBOX_CONTROLLER "$final/bin/agent-sandbox-controller"
  add_result AGENT_SANDBOX_CRD "$final/crds/agents.x-k8s.io_sandboxes.yaml"
}
