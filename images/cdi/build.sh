#!/usr/bin/env bash
# Build (or reuse) CDI (the Containerized Data Importer, which KubeVirt's DataVolumes need) v1.64.0
# with no registry, no Docker and no Bazel: its Go binaries from the Go module, its seven images on
# Debian roots made by mmdebstrap, and its install manifests from its own generator. For the real
# node (test/realnode): import the archives with `ctr -n k8s.io images import`, apply the operator
# manifest, then the CR. See images/cdi/README.md.
#
# Usage: images/cdi/build.sh [--out FILE] [--force] [-h]
#   --out FILE   also write the KEY=value lines (see below) to FILE
#   --force      rebuild the binaries, roots, images and archives without any cache
#
# stdout: KEY=/abs/path lines: CDI_IMAGE_<NAME>_ARCHIVE per image (NAME: OPERATOR, CONTROLLER,
# APISERVER, UPLOADPROXY, IMPORTER, CLONER, UPLOADSERVER; docker-archives naming
# localhost/kubevirt/cdi-<name>:v1.64.0), CDI_OPERATOR_MANIFEST (namespace `cdi`, CRDs, RBAC, the
# cdi-operator Deployment), CDI_CR_MANIFEST (the CDI resource: pods only on nodes labelled
# agentry.dev/real-node=true), CDI_STORAGE_PROFILE_MANIFEST (local-path: RWO, Filesystem),
# CDI_DATAVOLUME_EXAMPLE (a DataVolume importing a containerDisk image through the kubelet), and
# CDI_IMAGES (a file listing the seven image names). Progress and step times go to stderr.
#
# 1. Binaries: kubevirt.io/containerized-data-importer@v1.64.0 (GOSUMDB=off: sum.golang.org has no
#    entry) copied writable, built with CGO_ENABLED=0 (images/cdi/binaries.sh; libnbd stubbed).
# 2. Roots: Debian bookworm minbase (+ ca-certificates), and for the importer and upload server also
#    qemu-utils (qemu-img), nbdkit (its curl plugin and filters) and curl; each cached as a tar.
# 3. Images: per cmd/*/BUILD.bazel: the binaries in /usr/bin, user 1001, the same entrypoints.
# 4. Manifests: tools/manifest-generator over manifests/templates/release (images/cdi/manifests.sh).
#
# Cache: ${AGENTRY_TOOLS_CACHE:-$HOME/.cache/agentry-tools}/cdi-v1.64.0/<key12>/bin (binaries);
# ${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}/cdi/ (roots/, archives/, manifests/). Every
# key hashes the version and the recipe; a run with nothing changed takes seconds. Images live in
# buildah's storage. Concurrent runs are serialized with flock on the cache.
# Environment: AGENTRY_IMAGES_CACHE, AGENTRY_TOOLS_CACHE, DEBIAN_MIRROR (as images/build.sh),
# BUILDAH_RUNTIME (default /usr/sbin/runc).
# Needs (root): go, buildah, runc, mmdebstrap, flock, sha256sum.
set -euo pipefail
shopt -s inherit_errexit

CDI_VERSION=v1.64.0
REGISTRY=localhost/kubevirt
DEBIAN_SUITE=bookworm
BASE_PACKAGES="ca-certificates"
# What rpm/BUILD.bazel's cdi_importer_base and cdi_uploadserver_base add that we use: qemu-img to
# convert, nbdkit with its curl plugin to read http (and pullMethod: node) sources, curl.
IMPORTER_PACKAGES="ca-certificates,qemu-utils,nbdkit,curl"
CDI_UID=1001
KEEP_ARCHIVES=1 # seven archives of ~1.6 GB in all: only the current ones
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"

log() { printf '[cdi] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }

OUT_FILE=""
FORCE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT_FILE="${2:?--out needs a file}"; shift 2 ;;
    --out=*) OUT_FILE="${1#*=}"; shift ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
  esac
done
for t in go buildah mmdebstrap flock sha256sum; do
  command -v "$t" >/dev/null 2>&1 || die "$t not found"
done
[[ -x "$BUILDAH_RUNTIME" ]] || die "BUILDAH_RUNTIME $BUILDAH_RUNTIME is not executable"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$HERE/../.." && pwd -P)"
CACHE="${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}/cdi"
TOOLS_CACHE="${AGENTRY_TOOLS_CACHE:-$HOME/.cache/agentry-tools}"
mkdir -p "$CACHE/.tmp" "$CACHE/roots" "$CACHE/archives" "$CACHE/manifests" "$TOOLS_CACHE"
CACHE="$(cd "$CACHE" && pwd -P)"
TOOLS_CACHE="$(cd "$TOOLS_CACHE" && pwd -P)"

# shellcheck source=images/cache-lock.sh
source "$ROOT/images/cache-lock.sh"
lock_cache "$CACHE" images/cdi/build.sh

# shellcheck source=images/build-helpers.sh
source "$ROOT/images/build-helpers.sh"

# shellcheck source=images/cdi/binaries.sh
source "$HERE/binaries.sh"
# shellcheck source=images/cdi/images.sh
source "$HERE/images.sh"
# shellcheck source=images/cdi/manifests.sh
source "$HERE/manifests.sh"

START=$SECONDS
# Every path here is absolute; `go mod download` must run outside any module.
cd /
ensure_cdi_binaries
ensure_all_images
ensure_manifests
log "done in $((SECONDS - START))s"

print_results
