#!/usr/bin/env bash
# Build (or reuse) the disk image of KubeVirt workspaces (docs/runtimes.md#the-vm-disk-image): a
# BIOS-bootable Debian disk with systemd, cloud-init (NoCloud), Node and `agentry` on the PATH, git
# and bash, as qcow2 and as a containerDisk (the qcow2 under /disk/ of a scratch image, which CDI's
# registry import reads). No registry, no Docker, no loop device: mmdebstrap, mke2fs -d, GRUB's
# images written into the disk file, buildah.
#
# Usage: images/vm/build-guest-image.sh [--out FILE] [--force] [-h]
#   --out FILE   also write the KEY=value lines (see below) to FILE
#   --force      rebuild the disk even when the cache has it
#
# stdout: KEY=value lines: AGENTRY_GUEST_KEY (12 hex), AGENTRY_GUEST_QCOW2=/abs.qcow2,
# AGENTRY_GUEST_CONTAINERDISK=localhost/agentry-runner-disk:<key12> and
# AGENTRY_GUEST_CONTAINERDISK_ARCHIVE=/abs.tar (a docker-archive). Progress goes to stderr.
#
# The application is the runner image's (images/build.sh --only runner, itself cached): its /app
# (dist/ and the production node_modules) becomes /opt/agentry with /usr/local/bin/agentry linked to
# dist/cli/main.js, and its Node and npm are copied into /usr/local. The disk's key hashes this
# script, the Debian suite and package list, and the runner image's id: an unchanged tree reuses the
# cached qcow2 and archive in seconds.
#
# What the guest does at boot is what the kubevirt runtime's cloud-init says
# (operator/runtimes/cloud-init.ts): the image only carries the software, and limits cloud-init to
# the NoCloud datasource KubeVirt provides (a `cidata` disk) so that it probes nothing else.
#
# Cache: ${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}/vm/ (the two most recent disks kept).
# Environment: AGENTRY_IMAGES_CACHE, DEBIAN_MIRROR (as images/build.sh), GUEST_DISK_HEADROOM_MB
# (free space in the root filesystem, default 1024; cloud-init grows it to the disk's size at boot).
# Needs (root): everything images/build.sh needs, grub-pc-bin, qemu-utils (qemu-img), fdisk (sfdisk),
# e2fsprogs (mke2fs -d).
set -euo pipefail
shopt -s inherit_errexit

DEBIAN_SUITE=bookworm
# systemd and udev to boot, cloud-init and growpart for NoCloud and disk growth, ifupdown and a DHCP
# client for the network cloud-init configures; then what the runner image carries for agents.
GUEST_PACKAGES="systemd-sysv,udev,dbus,kmod,linux-image-amd64,initramfs-tools,e2fsprogs,fdisk,\
cloud-init,cloud-guest-utils,ifupdown,isc-dhcp-client,iproute2,\
bash,ca-certificates,curl,git,jq,less,openssh-client,procps,ripgrep,unzip"
ROOT_LABEL=agentry-root
HEADROOM_MB="${GUEST_DISK_HEADROOM_MB:-1024}"
KEEP_DISKS=2
# The containerDisk convention: the disk file is owned by qemu's uid/gid inside virt-launcher.
QEMU_UID=107

log() { printf '[guest-image] %s\n' "$*" >&2; }
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
for t in buildah mmdebstrap grub-mkimage qemu-img sfdisk mke2fs flock sha256sum; do
  command -v "$t" >/dev/null 2>&1 || die "$t not found"
done
GRUB_DIR=/usr/lib/grub/i386-pc
[[ -f "$GRUB_DIR/boot.img" ]] || die "$GRUB_DIR/boot.img not found (install grub-pc-bin)"
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
CACHE="${AGENTRY_IMAGES_CACHE:-$HOME/.cache/agentry-images}/vm"
mkdir -p "$CACHE/.tmp"
CACHE="$(cd "$CACHE" && pwd -P)"

# The runner image first (it takes images/build.sh's own lock), then ours.
RUNNER_ENV="$(mktemp)"
trap 'rm -f "$RUNNER_ENV"' EXIT
log "runner image: images/build.sh --only runner"
"$ROOT/images/build.sh" --only runner --out "$RUNNER_ENV" >/dev/null
RUNNER_IMAGE="$(sed -n 's/^AGENTRY_IMAGE_RUNNER=//p' "$RUNNER_ENV")"
[[ -n "$RUNNER_IMAGE" ]] || die "images/build.sh named no runner image"
RUNNER_ID="$(buildah inspect --type image --format '{{.FromImageID}}' "$RUNNER_IMAGE")"

# shellcheck source=images/cache-lock.sh
source "$ROOT/images/cache-lock.sh"
# shellcheck source=images/prune-tags.sh
source "$ROOT/images/prune-tags.sh"
lock_cache "$CACHE" images/vm/build-guest-image.sh

KEY="$( { cat "${BASH_SOURCE[0]}"; printf '%s\n' "$DEBIAN_SUITE" "$GUEST_PACKAGES" "$HEADROOM_MB" "$RUNNER_ID"; } |
  sha256sum | cut -c1-12)"
QCOW2="$CACHE/agentry-guest-$KEY.qcow2"
ARCHIVE="$CACHE/agentry-runner-disk-$KEY.tar"
DISK_IMAGE="localhost/agentry-runner-disk:$KEY"

WORK=""
CONTAINER=""
cleanup() {
  [[ -n "$CONTAINER" ]] && buildah rm "$CONTAINER" >/dev/null 2>&1
  [[ -n "$WORK" ]] && rm -rf "$WORK"
  rm -f "$RUNNER_ENV"
}
trap cleanup EXIT

timed() { # timed <label> <cmd...>: run, log wall time
  local label="$1" start=$SECONDS; shift
  "$@"
  log "$label took $((SECONDS - start))s"
}

# add_application <rootfs>: Node, npm and /app of the runner image, as /usr/local and /opt/agentry.
add_application() {
  local rootfs="$1" mnt
  CONTAINER="$(buildah from --pull=never "$RUNNER_IMAGE")"
  mnt="$(buildah mount "$CONTAINER")"
  install -D -m 0755 "$mnt/usr/local/bin/node" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules" "$rootfs/opt"
  cp -a "$mnt/usr/local/lib/node_modules/npm" "$rootfs/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  cp -a "$mnt/app" "$rootfs/opt/agentry"
  chown -R root:root "$rootfs/opt/agentry"
  ln -sf /opt/agentry/dist/cli/main.js "$rootfs/usr/local/bin/agentry"
  buildah umount "$CONTAINER" >/dev/null
  buildah rm "$CONTAINER" >/dev/null
  CONTAINER=""
}

# configure_guest <rootfs>: boot configuration; the rest comes from cloud-init at first boot.
configure_guest() {
  local rootfs="$1" kernel initrd
  kernel="$(cd "$rootfs/boot" && ls vmlinuz-* | sort -V | tail -n1)"
  initrd="initrd.img-${kernel#vmlinuz-}"
  [[ -f "$rootfs/boot/$initrd" ]] || die "no $initrd in the guest (initramfs-tools did not run)"
  printf 'LABEL=%s / ext4 errors=remount-ro 0 1\n' "$ROOT_LABEL" >"$rootfs/etc/fstab"
  printf 'agentry\n' >"$rootfs/etc/hostname"
  # KubeVirt gives a NoCloud `cidata` disk; probing other clouds would only cost boot time.
  printf 'datasource_list: [NoCloud, None]\n' >"$rootfs/etc/cloud/cloud.cfg.d/90-agentry.cfg"
  # Timers that would compete with agents for the VM's CPU (the image is rebuilt, not upgraded).
  local unit
  for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
    ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
  done
  # A fresh machine id per VM (systemd makes one at first boot).
  : >"$rootfs/etc/machine-id"
  rm -f "$rootfs/var/lib/dbus/machine-id"
  mkdir -p "$rootfs/boot/grub/i386-pc"
  cp "$GRUB_DIR"/*.mod "$GRUB_DIR"/*.lst "$rootfs/boot/grub/i386-pc/"
  cat >"$rootfs/boot/grub/grub.cfg" <<EOF
set timeout=0
set default=0
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
menuentry 'Agentry workspace' {
  search --no-floppy --label --set=root $ROOT_LABEL
  linux /boot/$kernel root=LABEL=$ROOT_LABEL ro console=tty0 console=ttyS0,115200n8 net.ifnames=0
  initrd /boot/$initrd
}
EOF
}

# make_disk <rootfs> <raw>: an MBR disk, one ext4 partition from 1 MiB filled from <rootfs>, and
# GRUB's boot.img (MBR code) and core.img (sectors 1.., before the partition). core.img's default
# blocklist starts at sector 2 with the length grub-mkimage wrote, so no grub-install is needed.
make_disk() {
  local rootfs="$1" raw="$2" used_mb size_mb core
  used_mb="$(du -sm --apparent-size "$rootfs" | cut -f1)"
  size_mb=$((used_mb * 5 / 4 + HEADROOM_MB))
  truncate -s "$((size_mb + 1))M" "$raw"
  printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk --quiet "$raw"
  mke2fs -q -t ext4 -L "$ROOT_LABEL" -d "$rootfs" -E offset=1048576 "$raw" "${size_mb}M"
  core="$WORK/core.img"
  # core.img finds the root filesystem by label, then reads /boot/grub/grub.cfg from it.
  printf 'search --no-floppy --label --set=root %s\nset prefix=($root)/boot/grub\n' "$ROOT_LABEL" \
    >"$WORK/early.cfg"
  grub-mkimage -O i386-pc -o "$core" -c "$WORK/early.cfg" -p /boot/grub \
    biosdisk part_msdos ext2 search search_label normal linux configfile echo serial terminal
  [[ $(stat -c %s "$core") -lt $((2047 * 512)) ]] || die "GRUB's core.img does not fit before the partition"
  dd if="$GRUB_DIR/boot.img" of="$raw" bs=440 count=1 conv=notrunc status=none
  dd if="$core" of="$raw" bs=512 seek=1 conv=notrunc status=none
}

# ensure_base_rootfs: sets BASE_TAR to the Debian root filesystem (mmdebstrap of the package list),
# cached on its own key so that a change of the application alone skips the slowest step.
ensure_base_rootfs() {
  local key w
  local -a sources
  key="$( { printf '%s\n' "$DEBIAN_SUITE" "$GUEST_PACKAGES"; declare -f ensure_base_rootfs; } |
    sha256sum | cut -c1-12)"
  BASE_TAR="$CACHE/guest-rootfs-$key.tar"
  if [[ $FORCE == 0 && -s "$BASE_TAR" ]]; then
    log "rootfs: $BASE_TAR is current"
    return
  fi
  mapfile -t sources < <("$ROOT/images/debian-sources.sh" "$DEBIAN_SUITE")
  [[ ${#sources[@]} -gt 0 ]] || die "no '$DEBIAN_SUITE' source in apt's sources lists; set DEBIAN_MIRROR"
  w="$(mktemp -d "$CACHE/.tmp/rootfs.XXXXXX")"
  timed "rootfs: mmdebstrap" mmdebstrap --quiet --variant=minbase --include="$GUEST_PACKAGES" \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
    --format=tar "$DEBIAN_SUITE" "$w/rootfs.tar" "${sources[@]}" >&2
  mv -f "$w/rootfs.tar" "$BASE_TAR"
  rm -rf "$w"
}

build_disk() {
  local rootfs raw
  ensure_base_rootfs
  WORK="$(mktemp -d "$CACHE/.tmp/disk.XXXXXX")"
  rootfs="$WORK/rootfs"
  raw="$WORK/disk.raw"
  mkdir "$rootfs"
  tar -xf "$BASE_TAR" -C "$rootfs" --numeric-owner
  timed "application" add_application "$rootfs"
  configure_guest "$rootfs"
  timed "disk" make_disk "$rootfs" "$raw"
  rm -rf "$rootfs"
  timed "qcow2" qemu-img convert -c -O qcow2 "$raw" "$WORK/disk.qcow2"
  mv -f "$WORK/disk.qcow2" "$QCOW2"
}

# build_container_disk: the qcow2 under /disk/ of a scratch image, and its docker-archive.
build_container_disk() {
  CONTAINER="$(buildah from scratch)"
  buildah add --quiet --chown "$QEMU_UID:$QEMU_UID" "$CONTAINER" "$QCOW2" /disk/disk.qcow2 >/dev/null
  buildah config --label "dev.agentry.guest-key=$KEY" "$CONTAINER"
  buildah commit --quiet --format docker --rm "$CONTAINER" "$DISK_IMAGE" >/dev/null
  CONTAINER=""
  rm -f "$ARCHIVE.partial"
  buildah push --quiet "$DISK_IMAGE" "docker-archive:$ARCHIVE.partial:$DISK_IMAGE" >&2
  mv -f "$ARCHIVE.partial" "$ARCHIVE"
}

START=$SECONDS
if [[ $FORCE == 0 && -s "$QCOW2" ]]; then
  log "disk: $QCOW2 is current (key $KEY)"
else
  log "disk: building key $KEY from $RUNNER_IMAGE"
  build_disk
fi
if [[ $FORCE == 1 || ! -s "$ARCHIVE" ]]; then
  timed "containerDisk" build_container_disk
fi
touch "$QCOW2" "$ARCHIVE"
prune_tags localhost/agentry-runner-disk "$KEEP_DISKS" "$DISK_IMAGE"
# shellcheck disable=SC2012 # names are ours: <stem>-<12 hex>.<ext>
for pattern in 'agentry-guest-????????????.qcow2' 'agentry-runner-disk-????????????.tar' \
  'guest-rootfs-????????????.tar'; do
  ls -1t "$CACHE"/$pattern | tail -n +$((KEEP_DISKS + 1)) | xargs -r rm -f
done
log "done in $((SECONDS - START))s"

RESULTS=(
  "AGENTRY_GUEST_KEY=$KEY"
  "AGENTRY_GUEST_QCOW2=$QCOW2"
  "AGENTRY_GUEST_CONTAINERDISK=$DISK_IMAGE"
  "AGENTRY_GUEST_CONTAINERDISK_ARCHIVE=$ARCHIVE"
)
printf '%s\n' "${RESULTS[@]}"
if [[ -n "$OUT_FILE" ]]; then
  mkdir -p "$(dirname "$OUT_FILE")"
  printf '%s\n' "${RESULTS[@]}" >"$OUT_FILE.tmp.$$"
  mv -f "$OUT_FILE.tmp.$$" "$OUT_FILE"
fi
