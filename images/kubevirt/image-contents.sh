#!/usr/bin/env bash
# Sourced by images/kubevirt/build.sh: what each KubeVirt image holds beyond its Debian root, after
# the component's BUILD.bazel (its tars: binaries, files, owners, capabilities, symlinks) and
# its oci_image (entrypoint, user). Uses build.sh's BIN_DIR, HERE and ensure_root.

# The Debian packages of each root (image_root).
ROOT_MINIMAL_PACKAGES="ca-certificates"
ROOT_HANDLER_PACKAGES="ca-certificates,qemu-utils,nftables,iptables,procps,util-linux,mount"
ROOT_LAUNCHER_PACKAGES="ca-certificates,libvirt-daemon,libvirt-daemon-driver-qemu,libvirt-clients,\
libvirt-daemon-log,qemu-system-x86,qemu-utils,ovmf,seabios,nftables,iptables,procps,util-linux,\
mount,libcap2-bin,xorriso"

# install_files <container> <mode> <dest dir> <file...>
install_files() {
  local c="$1" mode="$2" dest="$3"; shift 3
  buildah copy --quiet --chmod "$mode" "$c" "$@" "$dest/" >/dev/null
}

# assemble_<image> <container> <mount>: the component's files (its BUILD.bazel's tars).
assemble_virt-operator() {
  install_files "$1" 0755 /usr/bin "$BIN_DIR"/bin/{virt-operator,csv-generator}
  buildah config --entrypoint '["/usr/bin/virt-operator"]' --user 1001 "$1"
}
assemble_virt-api() {
  install_files "$1" 0755 /usr/bin "$BIN_DIR/bin/virt-api"
  buildah config --entrypoint '["/usr/bin/virt-api"]' --user 1001 "$1"
}
assemble_virt-controller() {
  install_files "$1" 0755 /usr/bin "$BIN_DIR/bin/virt-controller"
  buildah config --entrypoint '["/usr/bin/virt-controller"]' --user 1001 "$1"
}
assemble_virt-handler() {
  install_files "$1" 0755 /usr/bin "$BIN_DIR"/bin/{virt-handler,virt-chroot}
  install_files "$1" 0644 /etc "$BIN_DIR/nsswitch.conf"
  buildah config --entrypoint '["/usr/bin/virt-handler"]' "$1"
}
assemble_virt-launcher() {
  local c="$1" mnt="$2"
  install_files "$c" 0755 /usr/bin "$BIN_DIR"/bin/{virt-launcher,virt-launcher-monitor,virt-probe} \
    "$BIN_DIR"/bin/{virt-freezer,virt-tail,container-disk,libvirt-hook-client,node-labeller.sh}
  install_files "$c" 0644 /etc/libvirt "$BIN_DIR"/{qemu.conf,virtqemud.conf}
  install_files "$c" 0644 /etc "$BIN_DIR/nsswitch.conf"
  buildah copy --quiet --chmod 0755 --chown 107:107 "$c" "$BIN_DIR/qemu" /etc/libvirt/hooks/qemu >/dev/null
  install_files "$c" 0755 /usr/sbin "$HERE/virtqemud-shim.sh"
  mv "$mnt/usr/sbin/virtqemud-shim.sh" "$mnt/usr/sbin/virtqemud"
  # The paths KubeVirt's CentOS images have: its qemu-kvm and the module directory.
  mkdir -p "$mnt/usr/libexec" "$mnt/usr/lib64/qemu-kvm"
  ln -sfn ../bin/qemu-system-x86_64 "$mnt/usr/libexec/qemu-kvm"
  # The EFI file names virt-launcher looks for in /usr/share/OVMF (pkg/virt-launcher/virtwrap/efi)
  # for Debian's 4 MB builds; secure boot's variables with Microsoft's keys, as CentOS's are.
  ln -sfn OVMF_CODE_4M.fd "$mnt/usr/share/OVMF/OVMF_CODE.fd"
  ln -sfn OVMF_VARS_4M.fd "$mnt/usr/share/OVMF/OVMF_VARS.fd"
  ln -sfn OVMF_CODE_4M.secboot.fd "$mnt/usr/share/OVMF/OVMF_CODE.secboot.fd"
  ln -sfn OVMF_VARS_4M.ms.fd "$mnt/usr/share/OVMF/OVMF_VARS.secboot.fd"
  setcap cap_net_bind_service=+ep "$mnt/usr/bin/virt-launcher-monitor"
  buildah config --entrypoint '["/usr/bin/virt-launcher"]' "$c"
}

# image_root <image>: the root each image is built on.
image_root() {
  case "$1" in
    virt-handler) ensure_root handler "$ROOT_HANDLER_PACKAGES" ;;
    virt-launcher) ensure_root launcher "$ROOT_LAUNCHER_PACKAGES" ;;
    *) ensure_root minimal "$ROOT_MINIMAL_PACKAGES" ;;
  esac
}
