#!/usr/bin/env bash
# Check the images images/cdi/build.sh made, without a cluster: in a container of each image (as
# its user, 1001), every CDI program starts and answers --help, the entrypoint is what BUILD.bazel
# says, and in the importer and upload server qemu-img and nbdkit run with every shared library
# resolved, nbdkit has the curl plugin and the filters the importer uses, and `sh` and `cp` are
# there for the pullMethod: node init container.
#
# Usage: images/cdi/verify.sh [-h]
# stdout: one line per check; exit 1 on the first failure. Needs (root): buildah, runc.
set -euo pipefail
shopt -s inherit_errexit

CDI_VERSION=v1.64.0
REGISTRY=localhost/kubevirt
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"

log() { printf '[cdi-verify] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
[[ "${1:-}" != -h && "${1:-}" != --help ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0; }

CONTAINER=""
trap '[[ -z "$CONTAINER" ]] || buildah rm "$CONTAINER" >/dev/null 2>&1 || true' EXIT

# in_image <cmd...>: run in the current container as the image's user, no network.
in_image() { buildah run --network none "$CONTAINER" -- "$@"; }

# starts <program>: `<program> --help` exits 0 (Go's flag package) or prints usage (klog/cobra).
starts() {
  local out
  out="$(in_image "/usr/bin/$1" --help 2>&1)" || [[ "$out" == *Usage* || "$out" == *usage* ]] ||
    die "$1 --help: ${out:0:300}"
  printf 'ok %s: %s --help\n' "$component" "$1"
}

check_importer_tools() {
  local lib out
  for lib in /usr/bin/qemu-img /usr/sbin/nbdkit /usr/bin/nbdkit; do
    in_image test -x "$lib" 2>/dev/null || continue
    out="$(in_image ldd "$lib")"
    [[ "$out" != *"not found"* ]] || die "$component: $lib: unresolved libraries: $out"
  done
  in_image qemu-img --version | head -n1
  in_image nbdkit --version
  in_image nbdkit --dump-plugin curl >/dev/null || die "$component: nbdkit has no curl plugin"
  for out in xz gzip tar retry cacheextents readahead; do
    in_image nbdkit --filter="$out" null --dump-plugin >/dev/null || die "$component: nbdkit filter $out"
  done
  printf 'ok %s: qemu-img, nbdkit (curl; xz gzip tar retry cacheextents readahead)\n' "$component"
}

for component in operator controller apiserver uploadproxy importer cloner uploadserver; do
  image="$REGISTRY/cdi-$component:$CDI_VERSION"
  CONTAINER="$(buildah from --pull=never "$image")" || die "no image $image (run images/cdi/build.sh)"
  user="$(buildah inspect --type image --format '{{.Docker.Config.User}}' "$image")"
  entry="$(buildah inspect --type image --format '{{.Docker.Config.Entrypoint}}' "$image")"
  [[ "$user" == 1001 ]] || die "$image runs as '$user', not 1001"
  printf 'ok %s: user %s, entrypoint %s\n' "$component" "$user" "$entry"
  case "$component" in
    operator) programs="cdi-operator csv-generator" ;;
    importer) programs="cdi-importer openstack-populator ovirt-populator cdi-containerimage-server cdi-image-size-detection cdi-source-update-poller" ;;
    cloner) programs="cdi-cloner"; in_image test -x /usr/bin/cloner_startup.sh || die "no cloner_startup.sh"
      in_image sh -c 'command -v blockdev du bash' >/dev/null || die "cloner: blockdev/du/bash missing" ;;
    *) programs="cdi-$component" ;;
  esac
  for p in $programs; do starts "$p"; done
  case "$component" in
    importer)
      check_importer_tools
      in_image sh -c 'command -v cp' >/dev/null || die "importer: no sh/cp for the node-pull init container"
      ! in_image ldd /usr/bin/cdi-containerimage-server >/dev/null 2>&1 ||
        die "cdi-containerimage-server is dynamically linked; it must run in images without libc"
      printf 'ok importer: sh, cp; cdi-containerimage-server static\n' ;;
    uploadserver) check_importer_tools ;;
  esac
  buildah rm "$CONTAINER" >/dev/null
  CONTAINER=""
done
printf 'all CDI images verified\n'
