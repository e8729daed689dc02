#!/usr/bin/env bash
# Run CDI's `pullMethod: node` registry import without a cluster, as the import controller lays out
# the importer pod (pkg/controller/import-controller.go), and check the volume gets the disk:
#   init    (importer image)  sh -c "cp /usr/bin/cdi-containerimage-server /shared/server"
#   server  (the DISK image)  /shared/server -p 8100 -image-dir /disk -ready-file … -done-file …
#   importer (importer image) IMPORTER_SOURCE=http, endpoint http://localhost:8100/disk.img, node
# all as uid 107, in one network namespace of our own (loopback only), /shared and /data as
# directories here. Then `qemu-img compare` of the disk's /disk/* with the imported /data/disk.img.
#
# Usage: images/cdi/verify-import.sh DISK_IMAGE [-h]
#   DISK_IMAGE  a containerDisk image in buildah's storage, e.g. the AGENTRY_GUEST_CONTAINERDISK
#               images/vm/build-guest-image.sh prints (localhost/agentry-runner-disk:<key12>)
# stdout: the importer's last lines and the comparison; exit 1 if the import or the comparison
# fails. Needs (root): buildah, runc, unshare, ip, qemu-img; images/cdi/build.sh run before.
set -euo pipefail
shopt -s inherit_errexit

IMPORTER_IMAGE=localhost/kubevirt/cdi-importer:v1.64.0
QEMU_UID=107 # CDI's pods run every container as 107 (SetRestrictedSecurityContext)
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"

log() { printf '[cdi-verify-import] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }
[[ $# == 1 && "$1" != -h && "$1" != --help ]] || { usage; [[ "${1:-}" == -h || "${1:-}" == --help ]]; exit; }
DISK_IMAGE="$1"

WORK="$(mktemp -d)"
CONTAINERS=()
cleanup() {
  local c
  for c in "${CONTAINERS[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/shared" "$WORK/data"
chmod 0777 "$WORK/shared"                     # an emptyDir
chown "$QEMU_UID:$QEMU_UID" "$WORK/data"      # the volume, fsGroup 107
install -m 0666 /dev/null "$WORK/termination-log"

disk="$(buildah from --pull=never "$DISK_IMAGE")" || die "no image $DISK_IMAGE"
CONTAINERS+=("$disk")
importer="$(buildah from --pull=never "$IMPORTER_IMAGE")" || die "no image $IMPORTER_IMAGE (run images/cdi/build.sh)"
CONTAINERS+=("$importer")
mnt="$(buildah mount "$disk")"
mapfile -t disk_files < <(find "$mnt/disk" -mindepth 1 -maxdepth 1 2>/dev/null)
[[ ${#disk_files[@]} == 1 ]] || die "$DISK_IMAGE must hold exactly one file under /disk/"
cp "${disk_files[0]}" "$WORK/source"
buildah umount "$disk" >/dev/null

buildah run --user "$QEMU_UID" -v "$WORK/shared:/shared" "$importer" -- \
  sh -c "cp /usr/bin/cdi-containerimage-server /shared/server" || die "the init step failed"

# Both containers share a network namespace made here, as a pod's containers do.
cat >"$WORK/pod.sh" <<EOF
set -u
ip link set lo up
buildah run --network host --user $QEMU_UID -v "$WORK/shared:/shared" "$disk" -- \
  /shared/server -p 8100 -image-dir /disk -ready-file /shared/ready -done-file /shared/done \
  >"$WORK/server.log" 2>&1 &
buildah run --network host --user $QEMU_UID -v "$WORK/shared:/shared" -v "$WORK/data:/data" \
  -v "$WORK/termination-log:/dev/termination-log" \
  --env IMPORTER_SOURCE=http --env IMPORTER_ENDPOINT=http://localhost:8100/disk.img \
  --env IMPORTER_CONTENTTYPE=kubevirt --env IMPORTER_IMAGE_SIZE=8Gi \
  --env IMPORTER_PULL_METHOD=node --env IMPORTER_READY_FILE=/shared/ready \
  --env IMPORTER_DONE_FILE=/shared/done --env PREALLOCATION=false \
  --env FILESYSTEM_OVERHEAD=0.055 --env OWNER_UID=verify-import --env INSECURE_TLS=false \
  "$importer" -- /usr/bin/cdi-importer -alsologtostderr -v=1 >"$WORK/importer.log" 2>&1
code=\$?
wait
exit \$code
EOF
start=$SECONDS
unshare --net bash "$WORK/pod.sh" || { tail -n 30 "$WORK/importer.log" >&2; die "the importer failed"; }
log "import took $((SECONDS - start))s"
tail -n 3 "$WORK/importer.log"
printf 'termination message: %s\n' "$(cat "$WORK/termination-log")"
grep -q 'Importer has completed' "$WORK/server.log" || die "the server saw no done file"
# The importer grows the raw image to the volume's size; compare the contents only.
qemu-img compare -F raw "$WORK/source" "$WORK/data/disk.img" | grep -v 'size mismatch' ||
  die "the imported disk differs from the image's"
printf 'ok: %s imported through pullMethod: node\n' "$DISK_IMAGE"
