#!/bin/bash
# Run inside the virt-launcher image by verify.sh: start virtlogd and the virtqemud shim the way
# virt-launcher does (SetupLibvirt, StartVirtqemud, startVirtlogdLogging), then ask virsh for
# the version and the TCG domain capabilities and run a diskless TCG domain.
#
# Usage: verify-libvirt.sh root|nonroot
#   root     as uid 0, URI qemu:///system (virt-launcher with the Root feature gate)
#   nonroot  as uid 107 with virt-launcher's XDG_* environment and its session socket (default)
set -euo pipefail

mode="${1:?usage: verify-libvirt.sh root|nonroot}"
mkdir -p /var/run/libvirt /var/run/kubevirt-private/libvirt /var/log/libvirt/qemu
cp /etc/libvirt/virtqemud.conf /var/run/libvirt/virtqemud.conf
as_launcher=()
case "$mode" in
  root) uri=qemu:///system ;;
  nonroot)
    uri="qemu+unix:///session?socket=/var/run/libvirt/virtqemud-sock"
    cp /etc/libvirt/qemu.conf /var/run/kubevirt-private/libvirt/qemu.conf
    chown -R 107:107 /var/run/libvirt /var/run/kubevirt-private
    export XDG_CACHE_HOME=/var/run/kubevirt-private XDG_CONFIG_HOME=/var/run/kubevirt-private \
      XDG_RUNTIME_DIR=/var/run HOME=/var/run/kubevirt-private
    as_launcher=(setpriv --reuid 107 --regid 107 --clear-groups --)
    ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac

"${as_launcher[@]}" /usr/sbin/virtlogd -d -f /etc/libvirt/virtlogd.conf
"${as_launcher[@]}" /usr/sbin/virtqemud -f /var/run/libvirt/virtqemud.conf >/tmp/virtqemud.log 2>&1 &
virsh() { "${as_launcher[@]}" /usr/bin/virsh -c "$uri" "$@"; }

# On failure: what the daemons and QEMU said.
show_logs() {
  cat /var/log/libvirt/qemu/*.log /var/run/kubevirt-private/libvirt/qemu/log/*.log \
    /tmp/virtqemud.log 2>/dev/null | grep -v MSRFromKVM >&2 || true
}
trap 'show_logs' ERR
# Generous: the first connection probes QEMU's capabilities, slow on a loaded machine.
for _ in $(seq 1 180); do
  virsh version >/dev/null 2>&1 && break
  sleep 1
done
virsh version
caps="$(virsh domcapabilities --virttype qemu --arch x86_64)"
grep -q '<domain>qemu</domain>' <<<"$caps" || { echo "domcapabilities has no qemu domain type" >&2; exit 1; }

cat >/tmp/probe.xml <<'EOF'
<domain type='qemu'>
  <name>kubevirt-image-probe</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <devices>
    <emulator>/usr/libexec/qemu-kvm</emulator>
    <serial type='pty'/>
    <console type='pty'/>
  </devices>
</domain>
EOF
virsh create /tmp/probe.xml
# Running for a few seconds: QEMU started, SeaBIOS runs (there is nothing to boot).
sleep 3
state="$(virsh domstate kubevirt-image-probe 2>&1 || true)"
if [[ "$state" != running* ]]; then
  echo "the probe domain is '$state', not running" >&2
  show_logs
  exit 1
fi
virsh destroy kubevirt-image-probe
echo "libvirt ($mode): version, domcapabilities and a TCG domain: ok"
