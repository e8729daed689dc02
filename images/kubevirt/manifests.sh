#!/usr/bin/env bash
# Sourced by images/kubevirt/build.sh: kubevirt-operator.yaml made by KubeVirt's own generators,
# as its hack/ scripts make it. Uses build.sh's BIN_DIR, CACHE, REGISTRY, NAMESPACE, KEEP and
# helpers.

# generate_manifests <dir>: hack/generate.sh's generated/ files, then hack/build-manifests.sh's
# two templator passes over release/kubevirt-operator.yaml.in.
generate_manifests() {
  local out="$1" w gen tools="$BIN_DIR/bin"
  new_tmp manifests; w="$NEW_TMP"
  cp -r "$BIN_DIR/manifests" "$w/manifests"
  chmod -R u+w "$w/manifests"
  gen="$w/manifests/generated"
  rm -f "$gen"/*
  "$tools/resource-generator" --type=priorityclass >"$gen/kubevirt-priority-class.yaml"
  "$tools/resource-generator" --type=kv >"$gen/kv-resource.yaml"
  "$tools/resource-generator" --type=networkpolicies --namespace='{{.Namespace}}' \
    >"$gen/kubevirt-network-policies.yaml.in"
  "$tools/resource-generator" --type=kv-cr --namespace='{{.Namespace}}' \
    --pullPolicy='{{.ImagePullPolicy}}' --featureGates='{{.FeatureGates}}' \
    --infraReplicas='{{.InfraReplicas}}' --hypervisor='{{.Hypervisor}}' >"$gen/kubevirt-cr.yaml.in"
  "$tools/resource-generator" --type=operator-rbac --namespace='{{.Namespace}}' \
    >"$gen/rbac-operator.authorization.k8s.yaml.in"
  "$tools/manifest-templator" --process-files --generated-manifests-dir="$gen/" \
    --input-file="$w/manifests/release/kubevirt-operator.yaml.in" >"$w/operator.yaml.in"
  mkdir -p "$w/out"
  "$tools/manifest-templator" --process-vars --input-file="$w/operator.yaml.in" \
    --namespace="$NAMESPACE" --container-prefix="$REGISTRY" --container-tag="$KUBEVIRT_VERSION" \
    --image-pull-policy=IfNotPresent --verbosity=2 --cdi-namespace=cdi --csv-namespace=placeholder \
    --csv-version=0.0.0 --package-name=kubevirt-dev --infra-replicas=0 \
    --kubevirt-logo-path="$(go_module_dir kubevirt.io/kubevirt "$KUBEVIRT_VERSION")/assets/kubevirt_logo.png" \
    --bundle-out-dir="$w/bundle" >"$w/out/kubevirt-operator.yaml"
  sed -i -e '${/^$/d;}' "$w/out/kubevirt-operator.yaml"
  grep -q "image: $REGISTRY/virt-operator:$KUBEVIRT_VERSION" "$w/out/kubevirt-operator.yaml" ||
    die "kubevirt-operator.yaml does not name $REGISTRY/virt-operator:$KUBEVIRT_VERSION"
  cp "$HERE/kubevirt-cr.yaml" "$w/out/kubevirt-cr.yaml"
  rm -rf "$out"
  mv "$w/out" "$out"
}

ensure_manifests() {
  local key dir
  key="$( { printf '%s\n' "$BIN_KEY" "$REGISTRY" "$NAMESPACE"; declare -f generate_manifests
    files_sha kubevirt-cr.yaml; } | sha)"
  dir="$CACHE/manifests-${key:0:12}"
  if [[ $FORCE == 1 || ! -s "$dir/kubevirt-operator.yaml" ]]; then
    timed "manifests" generate_manifests "$dir"
  fi
  touch "$dir"
  prune "$CACHE" 'manifests-????????????' "$KEEP"
  add_result KUBEVIRT_OPERATOR_MANIFEST "$dir/kubevirt-operator.yaml"
  add_result KUBEVIRT_CR_EXAMPLE "$dir/kubevirt-cr.yaml"
}
