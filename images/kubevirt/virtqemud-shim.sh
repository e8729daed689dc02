#!/bin/bash
# /usr/sbin/virtqemud in the virt-launcher image: Debian ships only the monolithic libvirtd, while
# virt-launcher (and node-labeller.sh) start the modular QEMU daemon as
#   virtqemud [-d] [-f CONFIG]
# libvirtd with the same QEMU driver serves the same API. virtqemud.conf's keys are libvirtd.conf
# keys, so CONFIG is used as it is, plus the socket directory: libvirtd names its sockets
# libvirt-sock*, and clients dial virtqemud-sock* (virt-launcher's non-root URI
# qemu+unix:///session?socket=/var/run/libvirt/virtqemud-sock) or libvirt-sock (qemu:///system as
# root), so both names lead to the one daemon. Other arguments pass through to libvirtd.
# VIRTQEMUD_SHIM_LIBVIRTD and VIRTQEMUD_SHIM_SOCK_DIR replace the two paths (for its unit test).
set -euo pipefail

libvirtd="${VIRTQEMUD_SHIM_LIBVIRTD:-/usr/sbin/libvirtd}"
sock_dir="${VIRTQEMUD_SHIM_SOCK_DIR:-/var/run/libvirt}"
config=/etc/libvirt/virtqemud.conf
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -f | --config) config="${2:?$1 needs a file}"; shift 2 ;;
    --config=*) config="${1#*=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

[[ -r "$config" ]] || { echo "virtqemud (libvirtd shim): cannot read $config" >&2; exit 1; }
mkdir -p "$sock_dir"
shim_config="$sock_dir/libvirtd-shim.conf"
{
  grep -v '^[[:space:]]*unix_sock_dir[[:space:]]*=' "$config" || true
  printf 'unix_sock_dir = "%s"\n' "$sock_dir"
} >"$shim_config.tmp"
mv -f "$shim_config.tmp" "$shim_config"

ln -sfn libvirt-sock "$sock_dir/virtqemud-sock"
ln -sfn libvirt-sock-ro "$sock_dir/virtqemud-sock-ro"
ln -sfn libvirt-admin-sock "$sock_dir/virtqemud-admin-sock"

exec "$libvirtd" -f "$shim_config" "${args[@]}"
