#!/usr/bin/env bash
# Build (or reuse) KubeVirt v1.8.0 here, with no registry and no Docker engine: its Go binaries
# from the Go module proxy, its five default images on Debian 13 (trixie) roots made by
# mmdebstrap and buildah, and its install manifest made by KubeVirt's own generators. For the
# real-node KubeVirt suite and by hand (`npm run images:kubevirt`). See images/kubevirt/README.md.
#
# Usage: images/kubevirt/build.sh [--out FILE] [--only LIST] [--force] [-h]
#   --out FILE   also write the KEY=value lines (see below) to FILE
#   --only LIST  comma-separated subset of the images: virt-operator,virt-api,virt-controller,
#                virt-handler,virt-launcher (default: all five)
#   --force      rebuild binaries, roots and images without any cache
#
# stdout: KEY=value lines: KUBEVIRT_IMAGE_<NAME>_ARCHIVE=/abs.tar for each image (NAME:
# VIRT_OPERATOR, VIRT_API, VIRT_CONTROLLER, VIRT_HANDLER, VIRT_LAUNCHER), a docker-archive of
# localhost/kubevirt/<name>:v1.8.0 for `ctr -n k8s.io images import`; KUBEVIRT_IMAGES (the image
# names, space-separated); KUBEVIRT_OPERATOR_MANIFEST (kubevirt-operator.yaml: namespace
# kubevirt, CRD, RBAC, the virt-operator Deployment; images localhost/kubevirt/*:v1.8.0,
# IfNotPresent); KUBEVIRT_CR_EXAMPLE (a KubeVirt CR with useEmulation and the real-node
# placement); KUBEVIRT_VIRTCTL. Progress and each step's wall time go to stderr.
#
# 1. Binaries: the modules kubevirt.io/kubevirt, kubevirt.io/api and kubevirt.io/client-go at
#    v1.8.0 (the last two are KubeVirt's staging/ directories, which its module zip leaves out)
#    in a writable tree, libguestfs.org/libnbd replaced by libnbd-stub/ (its cgo needs libnbd's
#    headers; only the NBD backup path uses it), our fixes in patches/ applied (its README says
#    why), `go build` of the commands, `gcc -static` of
#    container-disk, and the manifest tools. Cached in
#    ${AGENTRY_TOOLS_CACHE:-$HOME/.cache/agentry-tools}/kubevirt-v1.8.0/<key12>/.
# 2. Roots: `mmdebstrap --variant=minbase` of trixie from the mirror in apt's sources (bookworm's
#    entries with the suite renamed, or $DEBIAN_MIRROR): "minimal" for operator, api and
#    controller, "handler" (qemu-img, nftables, mount tools) and "launcher" (libvirt 11.3 with the
#    QEMU driver, QEMU 10.0, virtlogd, OVMF). Each becomes a buildah image
#    localhost/kubevirt/root-<name>:<key12>, rebuilt only when its recipe changes.
# 3. Images: a root plus the binaries and files of each component's BUILD.bazel (users qemu=107
#    and nonroot-user=1001, entrypoints, capabilities, /var/run -> ../run), committed as
#    localhost/kubevirt/<name>:v1.8.0 with the key as a label; archives in
#    ${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}/kubevirt/archives/.
# 4. Manifests: resource-generator and manifest-templator run as hack/generate.sh and
#    hack/build-manifests.sh do, into .../kubevirt/manifests-<key12>/.
#
# What each image holds is in image-contents.sh, the manifest steps in manifests.sh (both sourced).
# Concurrent runs are serialized with flock on the images cache's kubevirt/ directory.
# Environment: AGENTRY_IMAGES_CACHE, AGENTRY_TOOLS_CACHE (above); DEBIAN_MIRROR; BUILDAH_RUNTIME
# (default /usr/sbin/runc).
# Needs (root): go, gcc with static glibc, libvirt-dev (virt-launcher's cgo), buildah, runc,
# mmdebstrap, setcap, flock, sha256sum.
set -euo pipefail
shopt -s inherit_errexit

KUBEVIRT_VERSION=v1.8.0
REGISTRY=localhost/kubevirt
# shellcheck disable=SC2034 # used by manifests.sh
NAMESPACE=kubevirt
DEBIAN_SUITE=trixie
ALL_IMAGES=virt-operator,virt-api,virt-controller,virt-handler,virt-launcher
# Commands built with cgo (virt-launcher links libvirt; the node-side ones run in Debian roots)
# and the static ones (BUILD.bazel's `static = "on"`; csv-generator rides in the operator image).
CGO_COMMANDS=(cmd/virt-launcher cmd/virt-launcher/libvirt-hook-client cmd/virt-launcher-monitor
  cmd/virt-handler cmd/virt-chroot cmd/virt-probe cmd/virt-freezer cmd/virt-tail cmd/virtctl)
STATIC_COMMANDS=(cmd/virt-operator cmd/virt-api cmd/virt-controller tools/csv-generator
  tools/manifest-templator tools/resource-generator)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$HERE/../.." && pwd -P)"
IMAGES_CACHE="${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}"
TOOLS_CACHE="${AGENTRY_TOOLS_CACHE:-$HOME/.cache/agentry-tools}"
CACHE="$IMAGES_CACHE/kubevirt"
BIN_CACHE="$TOOLS_CACHE/kubevirt-$KUBEVIRT_VERSION"
KEEP=2
KEEP_ARCHIVES=$KEEP # build-helpers.sh's ensure_archive
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"
export GOWORK=off GOFLAGS="-buildvcs=false -mod=mod" GOTOOLCHAIN=local

log() { printf '[kubevirt] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }

OUT_FILE=""
ONLY="$ALL_IMAGES"
FORCE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT_FILE="${2:?--out needs a file}"; shift 2 ;;
    --out=*) OUT_FILE="${1#*=}"; shift ;;
    --only) ONLY="${2:?--only needs a list}"; shift 2 ;;
    --only=*) ONLY="${1#*=}"; shift ;;
    --force) FORCE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
  esac
done
for p in ${ONLY//,/ }; do
  [[ ",$ALL_IMAGES," == *",$p,"* ]] || die "unknown image in --only: $p"
done
for t in go gcc buildah mmdebstrap setcap flock sha256sum; do
  command -v "$t" >/dev/null 2>&1 || die "$t not found"
done
[[ -x "$BUILDAH_RUNTIME" ]] || die "BUILDAH_RUNTIME $BUILDAH_RUNTIME is not executable"
[[ -f /usr/include/libvirt/libvirt.h ]] || die "libvirt-dev is not installed (virt-launcher's cgo)"

mkdir -p "$CACHE/archives" "$CACHE/.tmp" "$BIN_CACHE"
CACHE="$(cd "$CACHE" && pwd -P)"
# shellcheck source=images/cache-lock.sh disable=SC1091
source "$ROOT/images/cache-lock.sh"
lock_cache "$CACHE" images/kubevirt/build.sh

# shellcheck source=images/build-helpers.sh
source "$ROOT/images/build-helpers.sh"
# shellcheck source=images/prune-tags.sh
source "$ROOT/images/prune-tags.sh"

# kill_tree <pid>: the process and its descendants (the background Go build).
kill_tree() {
  local p
  for p in $(pgrep -P "$1"); do kill_tree "$p"; done
  kill "$1" 2>/dev/null || true
}
# On exit the Go build stops too, then build-helpers' cleanup.
stop_binaries() {
  if [[ -n "${BIN_PID:-}" ]] && kill -0 "$BIN_PID" 2>/dev/null; then
    kill_tree "$BIN_PID"
    wait "$BIN_PID" || true
  fi
}
trap 'stop_binaries; cleanup' EXIT

files_sha() { (cd "$HERE" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha; }
# prune <dir> <glob> <keep>: removes all but the <keep> most recently used matches.
prune() {
  # shellcheck disable=SC2012,SC2086 # names are ours, without blanks; $2 is a glob
  (cd "$1" && ls -1td -- $2 2>/dev/null | tail -n +$(($3 + 1)) | xargs -r rm -rf)
}
# commit_replacing <container> <image>: commits, and removes the image the name held before (with
# vfs each image is a full copy; a rebuilt fixed tag would leave it behind, untagged).
commit_replacing() {
  local old new
  old="$(image_id "$2" || true)"
  buildah commit --quiet --format docker --rm "$1" "$2" >/dev/null
  new="$(image_id "$2")"
  if [[ -n "$old" && "$old" != "$new" ]]; then buildah rmi "$old" >/dev/null 2>&1 || true; fi
}

# ---- 1. binaries ---------------------------------------------------------------------
# go_module_dir <module> <version>: the module's directory in Go's module cache.
go_module_dir() {
  (cd / && go mod download -json "$1@$2") | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# kubevirt_tree <dir>: a writable KubeVirt tree at <dir>/src with its staging modules and the
# libnbd stub.
kubevirt_tree() {
  local w="$1" src="$1/src" m
  cp -r "$(go_module_dir kubevirt.io/kubevirt "$KUBEVIRT_VERSION")" "$src"
  mkdir -p "$src/staging/src/kubevirt.io"
  for m in api client-go; do
    cp -r "$(go_module_dir "kubevirt.io/$m" "$KUBEVIRT_VERSION")" "$src/staging/src/kubevirt.io/$m"
  done
  cp -r "$HERE/libnbd-stub" "$w/libnbd"
  chmod -R u+w "$w"
  (cd "$src" && go mod edit -replace libguestfs.org/libnbd=../libnbd)
  # Our fixes of v1.8.0 (patches/README.md says why each is needed), in order.
  for m in "$HERE"/patches/*.patch; do patch --quiet -d "$src" -p1 <"$m"; done
}

build_binaries() { # build_binaries <dest>
  local dest="$1" w ldflags v=kubevirt.io/client-go/version
  new_tmp bin; w="$NEW_TMP"
  timed "binaries: source tree" kubevirt_tree "$w"
  # What hack/version.sh stamps (buildDate fixed: the same tree gives the same binaries), and
  # stripped (-s -w), as Bazel's release binaries are: images a fifth smaller.
  ldflags="-s -w -X $v.gitVersion=$KUBEVIRT_VERSION -X $v.gitTreeState=clean"
  ldflags+=" -X $v.buildDate=1970-01-01T00:00:00Z"
  (
    cd "$w/src"
    # -trimpath: Go's build cache then serves any checkout path (and binaries hold no build path).
    timed "binaries: go build (cgo)" go build -trimpath -ldflags "$ldflags" -o "$w/bin/" \
      "${CGO_COMMANDS[@]/#/./}"
    CGO_ENABLED=0 timed "binaries: go build (static)" go build -trimpath -ldflags "$ldflags" \
      -o "$w/bin/" "${STATIC_COMMANDS[@]/#/./}"
    # container-disk runs in a scratch-like container disk image: static, as hack/build-go.sh does.
    gcc -static -O2 -o "$w/bin/container-disk" cmd/container-disk-v2alpha/main.c
  ) >&2
  mkdir -p "$w/out"
  mv "$w/bin" "$w/out/bin"
  cp -r "$w/src/manifests" "$w/out/manifests"
  cp "$w/src/cmd/virt-launcher/"{qemu.conf,virtqemud.conf,nsswitch.conf,qemu} "$w/out/"
  cp "$w/src/cmd/virt-launcher/node-labeller/node-labeller.sh" "$w/out/bin/"
  rm -rf "$dest"
  mv "$w/out" "$dest"
  rm -rf "$w"
}

# ensure_binaries: sets BIN_KEY and BIN_DIR; when they are not built yet, builds them in the
# background (BIN_PID; Go compiles while mmdebstrap downloads).
ensure_binaries() {
  local key
  key="$( { printf '%s\n' "$KUBEVIRT_VERSION" "$(go env GOVERSION)" "${CGO_COMMANDS[@]}" \
    "${STATIC_COMMANDS[@]}"; declare -f build_binaries kubevirt_tree go_module_dir
    files_sha libnbd-stub patches; } | sha)"
  BIN_KEY="${key:0:12}"
  BIN_DIR="$BIN_CACHE/$BIN_KEY"
  BIN_PID=""
  if [[ $FORCE == 0 && -x "$BIN_DIR/bin/virt-launcher" ]]; then
    log "binaries: $BIN_DIR is current"
  else
    log "binaries: building into $BIN_DIR"
    timed "binaries" build_binaries "$BIN_DIR" &
    BIN_PID=$!
  fi
  add_result KUBEVIRT_VIRTCTL "$BIN_DIR/bin/virtctl"
}

wait_binaries() {
  if [[ -n "$BIN_PID" ]]; then
    wait "$BIN_PID" || die "building the binaries failed"
  fi
  touch "$BIN_DIR"
  prune "$BIN_CACHE" '????????????' "$KEEP"
}

# ---- 2. Debian roots -----------------------------------------------------------------
# debian_sources: trixie's sources as mmdebstrap arguments: apt's own, else bookworm's entries
# from apt's sources with the suite renamed (the same mirror serves both).
debian_sources() {
  local s
  s="$("$ROOT/images/debian-sources.sh" "$DEBIAN_SUITE")"
  [[ -n "$s" ]] || s="$("$ROOT/images/debian-sources.sh" bookworm | sed -E "s/ bookworm(-[a-z]+)? / $DEBIAN_SUITE\1 /")"
  printf '%s\n' "$s"
}

# The users of KubeVirt's images (BUILD.bazel passwd entries) exist before the packages are
# installed, so no package's postinst takes their ids. /var/run is relative: virt-handler reads a
# launcher's sockets through /proc/<pid>/root/var/run (cmd/virt-launcher/BUILD.bazel).
# (No useradd yet at that stage: the entries are written as base-passwd's are.)
# shellcheck disable=SC2016 # $1 is mmdebstrap's, expanded by its hook shell
ROOT_ESSENTIAL_HOOK='printf "qemu:x:107:107:qemu:/home/qemu:/bin/bash\nnonroot-user:x:1001:1001::/home/nonroot-user:/bin/bash\n" >>"$1/etc/passwd" && printf "qemu:x:107:\nnonroot-user:x:1001:\n" >>"$1/etc/group"'
# shellcheck disable=SC2016
ROOT_CUSTOMIZE_HOOK='rm -f "$1/var/run" && ln -s ../run "$1/var/run"'

build_root() { # build_root <image> <key> <packages>
  local image="$1" key="$2" packages="$3" w c
  local -a sources
  mapfile -t sources < <(debian_sources)
  [[ ${#sources[@]} -gt 0 ]] || die "no Debian source in apt's sources lists; set DEBIAN_MIRROR"
  new_tmp root; w="$NEW_TMP"
  timed "$image: mmdebstrap" mmdebstrap --quiet --variant=minbase --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --essential-hook="$ROOT_ESSENTIAL_HOOK" --customize-hook="$ROOT_CUSTOMIZE_HOOK" \
    --format=tar "$DEBIAN_SUITE" "$w/rootfs.tar" "${sources[@]}" >&2
  c="$(buildah from scratch)"; CONTAINERS+=("$c")
  buildah add --quiet "$c" "$w/rootfs.tar" / >/dev/null
  rm -f "$w/rootfs.tar"
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --label "dev.agentry.kubevirt-root-key=$key" "$c"
  commit_replacing "$c" "$image"
  CONTAINERS=()
}

# ensure_root <name> <packages>: sets ROOT_IMAGE (once per run and root).
declare -A ROOT_IMAGES=()
ensure_root() {
  local name="$1" packages="$2" key image
  if [[ -n "${ROOT_IMAGES[$name]:-}" ]]; then ROOT_IMAGE="${ROOT_IMAGES[$name]}"; return; fi
  key="$( { printf '%s\n' "$DEBIAN_SUITE" "$packages" "$ROOT_ESSENTIAL_HOOK" "$ROOT_CUSTOMIZE_HOOK"
    declare -f build_root debian_sources; } | sha)"
  image="$REGISTRY/root-$name:${key:0:12}"
  if [[ $FORCE == 0 && "$(image_label "$image" dev.agentry.kubevirt-root-key)" == "$key" ]]; then
    log "root $name: $image is current"
  else
    log "root $name: building $image"
    timed "root $name" build_root "$image" "$key" "$packages"
  fi
  prune_tags "$REGISTRY/root-$name" "$KEEP" "$image"
  ROOT_IMAGES[$name]="$image"
  ROOT_IMAGE="$image"
}

# ---- 3. images -----------------------------------------------------------------------
# shellcheck source=images/kubevirt/image-contents.sh disable=SC1091
source "$HERE/image-contents.sh"

build_image() { # build_image <name> <root image> <tag> <key>
  local name="$1" root="$2" tag="$3" key="$4" c mnt
  c="$(buildah from --pull=never "$root")"; CONTAINERS+=("$c")
  mnt="$(buildah mount "$c")"
  printf '%s\n' "$KUBEVIRT_VERSION" >"$mnt/.version"
  "assemble_$name" "$c" "$mnt"
  buildah umount "$c" >/dev/null
  buildah config --label "dev.agentry.kubevirt-key=$key" \
    --label "io.kubevirt.version=$KUBEVIRT_VERSION" "$c"
  commit_replacing "$c" "$tag"
  CONTAINERS=()
}

ensure_image() { # ensure_image <name>
  local name="$1" tag="$REGISTRY/$1:$KUBEVIRT_VERSION" key result
  image_root "$name"
  key="$( { printf '%s\n' "$name" "$ROOT_IMAGE" "$BIN_KEY"; declare -f build_image install_files \
    "assemble_$name"; if [[ $name == virt-launcher ]]; then files_sha virtqemud-shim.sh; fi; } | sha)"
  if [[ $FORCE == 0 && "$(image_label "$tag" dev.agentry.kubevirt-key)" == "$key" ]]; then
    log "$name: $tag is current"
  else
    log "$name: building $tag"
    timed "$name: image" build_image "$name" "$ROOT_IMAGE" "$tag" "$key"
  fi
  ensure_archive "$tag" "$name-$KUBEVIRT_VERSION-${key:0:12}"
  result="KUBEVIRT_IMAGE_$(tr 'a-z-' 'A-Z_' <<<"$name")_ARCHIVE"
  add_result "$result" "$ARCHIVE"
  IMAGE_NAMES+=("$tag")
}

# ---- 4. manifests --------------------------------------------------------------------
# shellcheck source=images/kubevirt/manifests.sh disable=SC1091
source "$HERE/manifests.sh"

# ---- main ----------------------------------------------------------------------------
START=$SECONDS
IMAGE_NAMES=()
ensure_binaries
for p in ${ONLY//,/ }; do image_root "$p"; done
wait_binaries
for p in ${ONLY//,/ }; do ensure_image "$p"; done
ensure_manifests
add_result KUBEVIRT_IMAGES "${IMAGE_NAMES[*]}"
log "done in $((SECONDS - START))s"

print_results
