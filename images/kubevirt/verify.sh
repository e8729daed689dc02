#!/usr/bin/env bash
# Check the KubeVirt images made by images/kubevirt/build.sh without a cluster: in a buildah
# container of each image, its binaries load (ldd) and start (--help or --version), its
# entrypoint, user and files are what BUILD.bazel says; in the launcher image, the virtqemud shim
# starts libvirtd with KubeVirt's configuration as virt-launcher does (root with qemu:///system,
# and uid 107 with virt-launcher's session socket), virsh answers `version` and
# `domcapabilities --virttype qemu`, and a diskless TCG domain starts under libvirt and is
# destroyed.
#
# Usage: images/kubevirt/verify.sh [-h]
# Exits non-zero at the first failed check. Needs (root): buildah, runc.
set -euo pipefail
shopt -s inherit_errexit

KUBEVIRT_VERSION=v1.8.0
REGISTRY=localhost/kubevirt
export BUILDAH_RUNTIME="${BUILDAH_RUNTIME:-/usr/sbin/runc}"

log() { printf '[kubevirt-verify] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"

CONTAINERS=()
cleanup() { local c; for c in "${CONTAINERS[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done; }
trap cleanup EXIT

# container <image>: sets C to a new working container of the image.
container() {
  C="$(buildah from --pull=never "$REGISTRY/$1:$KUBEVIRT_VERSION")" || die "no image $1"
  CONTAINERS+=("$C")
}
# has <grep args>: grep reading all of its input (-q would close the pipe early, and pipefail
# would count the writer's SIGPIPE as a failure).
has() { grep "$@" >/dev/null; }
in_c() { buildah run --network host "$C" -- "$@"; }
config() { buildah inspect --type image --format "$2" "$REGISTRY/$1:$KUBEVIRT_VERSION"; }

check_config() { # check_config <image> <entrypoint> <user>
  local ep user
  ep="$(config "$1" '{{.Docker.Config.Entrypoint}}')"
  user="$(config "$1" '{{.Docker.Config.User}}')"
  [[ "$ep" == "[$2]" ]] || die "$1: entrypoint $ep, not $2"
  [[ "$user" == "$3" ]] || die "$1: user '$user', not '$3'"
  log "$1: entrypoint $2, user '${3:-root}'"
}

# check_binaries <image> <binary...>: each loads and prints its help or version.
check_binaries() {
  local image="$1" b path out; shift
  container "$image"
  for b in "$@"; do
    path="$(in_c sh -c "command -v $b")" || die "$image: no $b on the PATH"
    if in_c ldd "$path" 2>&1 | has 'not found'; then
      die "$image: $b has unresolved libraries: $(in_c ldd "$path" | grep 'not found' | tr '\n' ' ')"
    fi
    out="$(in_c "$path" --help 2>&1 || true)"
    grep -qiE 'usage|flags|options|version' <<<"$out" || die "$image: $b --help printed: ${out:0:300}"
  done
  in_c cat /.version | has -x "$KUBEVIRT_VERSION" || die "$image: /.version is not $KUBEVIRT_VERSION"
  log "$image: $* load and start"
}

check_users() { # check_users <image>: qemu is 107:107 and nonroot-user 1001.
  in_c getent passwd qemu | has '^qemu:x:107:107:' || die "$1: no user qemu with uid 107"
  in_c getent passwd nonroot-user | has ':1001:1001:' || die "$1: no nonroot-user with uid 1001"
}

verify_control_plane() {
  check_config virt-operator /usr/bin/virt-operator 1001
  check_binaries virt-operator virt-operator csv-generator
  check_config virt-api /usr/bin/virt-api 1001
  check_binaries virt-api virt-api
  check_config virt-controller /usr/bin/virt-controller 1001
  check_binaries virt-controller virt-controller
}

verify_handler() {
  check_config virt-handler /usr/bin/virt-handler ""
  check_binaries virt-handler virt-handler virt-chroot qemu-img nft findmnt sysctl
  check_users virt-handler
  [[ "$(in_c readlink /var/run)" == ../run ]] || die "virt-handler: /var/run is not ../run"
}

verify_launcher() {
  local caps
  check_config virt-launcher /usr/bin/virt-launcher ""
  check_binaries virt-launcher virt-launcher virt-launcher-monitor virt-probe virt-freezer \
    virt-tail virsh qemu-system-x86_64 qemu-img libvirtd virtlogd
  check_users virt-launcher
  [[ "$(in_c readlink /var/run)" == ../run ]] || die "virt-launcher: /var/run is not ../run"
  # libvirt-hook-client has no --help; container-disk is static.
  in_c sh -c 'ldd /usr/bin/libvirt-hook-client 2>&1 || true' | has 'not found' &&
    die "virt-launcher: libvirt-hook-client does not load"
  in_c sh -c 'ldd /usr/bin/container-disk 2>&1 || true' | has 'not a dynamic executable' ||
    die "virt-launcher: container-disk is not static"
  in_c test -x /usr/bin/container-disk -a -x /usr/bin/node-labeller.sh -a -x /usr/sbin/virtlogd \
    -a -x /usr/libexec/qemu-kvm -a -f /etc/libvirt/qemu.conf -a -f /etc/libvirt/virtqemud.conf \
    -a -s /usr/share/OVMF/OVMF_CODE.fd -a -s /usr/share/OVMF/OVMF_VARS.fd \
    -a -s /usr/share/OVMF/OVMF_CODE.secboot.fd -a -s /usr/share/OVMF/OVMF_VARS.secboot.fd ||
    die "virt-launcher: a file KubeVirt expects is missing"
  in_c stat -c '%u:%g %a' /etc/libvirt/hooks/qemu | has -x '107:107 755' ||
    die "virt-launcher: /etc/libvirt/hooks/qemu is not 107:107 0755"
  caps="$(in_c getcap /usr/bin/virt-launcher-monitor)"
  [[ "$caps" == *cap_net_bind_service* ]] || die "virt-launcher: virt-launcher-monitor has no cap_net_bind_service ($caps)"
  log "virt-launcher: files, users, capabilities"
  buildah copy --quiet --chmod 0755 "$C" "$HERE/verify-libvirt.sh" /tmp/verify-libvirt.sh >/dev/null
  in_c /tmp/verify-libvirt.sh root || die "virt-launcher: libvirt as root"
  in_c /tmp/verify-libvirt.sh nonroot || die "virt-launcher: libvirt as uid 107"
  log "virt-launcher: libvirtd via the shim answers virsh and runs a TCG domain (root and uid 107)"
  # virt-handler's init container: `virtqemud -d` through the shim, then virsh writes the files
  # the handler's node labeller reads (TCG: a device name /proc/misc does not list).
  in_c sh -c 'mkdir -p /var/lib/kubevirt-node-labeller &&
    HYPERVISOR_DEVICE=no-such-device PREFERRED_VIRTTYPE=kvm node-labeller.sh >/tmp/node-labeller.log 2>&1 &&
    test -s /var/lib/kubevirt-node-labeller/virsh_domcapabilities.xml &&
    test -s /var/lib/kubevirt-node-labeller/supported_features.xml &&
    test -s /var/lib/kubevirt-node-labeller/capabilities.xml' ||
    die "virt-launcher: node-labeller.sh failed"
  log "virt-launcher: node-labeller.sh (virt-handler's init container) writes its three files under TCG"
}

verify_control_plane
verify_handler
verify_launcher
log "all checks passed"
