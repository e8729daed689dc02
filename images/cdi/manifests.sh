# shellcheck shell=bash
# Sourced by images/cdi/build.sh: CDI's install manifests, rendered by its own generator
# (tools/manifest-generator, as hack/build/build-manifests.sh runs it) with our image names, plus
# the examples beside this script. Needs from the caller: CDI_VERSION, CDI_MODULE, REGISTRY, CACHE,
# HERE, CDI_BIN, CDI_BIN_KEY, log, die, sha, new_tmp, add_result.

CDI_NAMESPACE=cdi
CDI_PULL_POLICY=IfNotPresent
# KWOK's fake nodes share the cluster with the real node: CDI's pods (operator, infra, workload)
# must only land on the real one.
REAL_NODE_LABEL='agentry.dev/real-node: "true"'

# cdi_generator <args...>: tools/manifest-generator with every image named, as hack/build does.
cdi_generator() {
  local i="$REGISTRY/cdi"
  "$CDI_BIN/manifest-generator" -docker-repo="$REGISTRY" -docker-tag="$CDI_VERSION" \
    -operator-version="$CDI_VERSION" -deploy-cluster-resources=true \
    -operator-image="$i-operator:$CDI_VERSION" -controller-image="$i-controller:$CDI_VERSION" \
    -importer-image="$i-importer:$CDI_VERSION" -cloner-image="$i-cloner:$CDI_VERSION" \
    -apiserver-image="$i-apiserver:$CDI_VERSION" -uploadproxy-image="$i-uploadproxy:$CDI_VERSION" \
    -uploadserver-image="$i-uploadserver:$CDI_VERSION" \
    -ovirt-populator-image="$i-importer:$CDI_VERSION" \
    -verbosity=1 -pull-policy="$CDI_PULL_POLICY" -cr-name=cdi -namespace="$CDI_NAMESPACE" "$@"
}

# add_real_node_selector <file>: the operator Deployment's pod template gets the real node's
# label as its nodeSelector (upstream: kubernetes.io/os only).
add_real_node_selector() {
  local file="$1"
  awk -v label="$REAL_NODE_LABEL" '
    /^kind: Deployment$/ { deployment = 1 }
    /^---$/ { deployment = 0 }
    { print }
    deployment && /^      nodeSelector:$/ { print "        " label; added++ }
    END { if (added != 1) exit 1 }
  ' "$file" >"$file.new" || die "the generated cdi-operator Deployment has no single nodeSelector"
  mv -f "$file.new" "$file"
}

# render_cdi_manifests <module dir> <out dir>
render_cdi_manifests() {
  local module="$1" out="$2" generated
  generated="$out/generated"
  mkdir -p "$generated"
  cdi_generator -resource-type=operator -resource-group=everything \
    >"$generated/operator-everything.yaml.in"
  cdi_generator -template="$module/manifests/templates/release/cdi-operator.yaml.in" \
    -generated-manifests-path="$generated" >"$out/cdi-operator.yaml"
  add_real_node_selector "$out/cdi-operator.yaml"
  cdi_generator -template="$module/manifests/templates/release/cdi-cr.yaml.in" \
    -generated-manifests-path="$generated" >"$out/cdi-cr.yaml"
  # infra (controller, apiserver, uploadproxy) and workload (importer, cloner, upload server pods)
  sed -i "s|^\(      \)kubernetes.io/os: linux\$|&\n\1$REAL_NODE_LABEL|" "$out/cdi-cr.yaml"
  [[ "$(grep -c 'agentry.dev/real-node' "$out/cdi-cr.yaml")" == 2 ]] ||
    die "cdi-cr.yaml: expected the real-node label under infra and workload"
  grep -q "imagePullPolicy: $CDI_PULL_POLICY" "$out/cdi-cr.yaml" || die "cdi-cr.yaml: no imagePullPolicy"
  rm -rf "$generated"
}

ensure_manifests() {
  local module key dir w name
  module="$(cdi_module_dir)"
  key="$( { printf '%s\n' "$CDI_VERSION" "$REGISTRY" "$CDI_BIN_KEY" "$REAL_NODE_LABEL"
    declare -f cdi_generator add_real_node_selector render_cdi_manifests; } | sha)"
  dir="$CACHE/manifests/$CDI_VERSION-${key:0:12}"
  if [[ $FORCE == 1 || ! -f "$dir/cdi-cr.yaml" ]]; then
    new_tmp manifests; w="$NEW_TMP"
    render_cdi_manifests "$module" "$w"
    rm -rf "$dir"
    mv "$w" "$dir"
    log "manifests: rendered into $dir"
    find "$CACHE/manifests" -mindepth 1 -maxdepth 1 -type d -name "$CDI_VERSION-*" \
      ! -name "${dir##*/}" -exec rm -rf {} +
  fi
  # The examples are plain files in the repository; copied so that every path is in one place.
  for name in storage-profile-local-path.yaml datavolume-containerdisk.yaml; do
    install -m 0644 "$HERE/$name" "$dir/$name"
  done
  add_result CDI_OPERATOR_MANIFEST "$dir/cdi-operator.yaml"
  add_result CDI_CR_MANIFEST "$dir/cdi-cr.yaml"
  add_result CDI_STORAGE_PROFILE_MANIFEST "$dir/storage-profile-local-path.yaml"
  add_result CDI_DATAVOLUME_EXAMPLE "$dir/datavolume-containerdisk.yaml"
}
