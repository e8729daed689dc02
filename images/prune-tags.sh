# shellcheck shell=bash
# Sourced by the image build scripts. prune_tags <repository> <keep> <current tag>: removes from
# buildah's storage all but the <keep> newest tags of one of our content-keyed repositories, never
# <current tag>. Every source change makes a new tag, and with the vfs storage driver each image is
# a full copy: without this, a developer's machine fills up (24 GB after a few days here).
prune_tags() {
  local repo="$1" keep="$2" current="$3"
  buildah images --format '{{.CreatedAtRaw}}|{{.Name}}:{{.Tag}}' 2>/dev/null |
    grep -F "|$repo:" | sort -r | cut -d'|' -f2- | grep -vxF "$current" |
    tail -n +"$keep" | xargs -r buildah rmi >/dev/null 2>&1 || true
}
