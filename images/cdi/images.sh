# shellcheck shell=bash
# Sourced by images/cdi/build.sh: the Debian roots and CDI's seven images, as cmd/*/BUILD.bazel
# describes them (CentOS roots there; Debian's packages here). Needs from the caller: CDI_VERSION,
# REGISTRY, DEBIAN_SUITE, BASE_PACKAGES, IMPORTER_PACKAGES, CDI_UID, CACHE, FORCE, ROOT, CDI_BIN,
# CDI_BIN_KEY, log, die, and images/build-helpers.sh.

# component|root|entrypoint (space separated)|workdir|extra programs in /usr/bin
CDI_IMAGE_SPECS=(
  "operator|base|/usr/bin/cdi-operator|/home/cdi-operator|csv-generator"
  "controller|base|/usr/bin/cdi-controller -alsologtostderr|/home/cdi-controller|"
  "apiserver|base|/usr/bin/cdi-apiserver -alsologtostderr|/home/cdi-apiserver|"
  "uploadproxy|base|/usr/bin/cdi-uploadproxy -alsologtostderr|/home/cdi-uploadproxy|"
  "importer|importer|/usr/bin/cdi-importer -alsologtostderr||openstack-populator ovirt-populator cdi-containerimage-server cdi-image-size-detection cdi-source-update-poller"
  "cloner|base|/usr/bin/cloner_startup.sh||"
  "uploadserver|importer|/usr/bin/cdi-uploadserver -alsologtostderr||"
)

# ensure_root <name> <packages>: sets ROOTFS_TAR to a cached mmdebstrap minbase tar of the suite.
ensure_root() {
  local name="$1" packages="$2" key tar w
  local -a sources
  key="$(printf '%s\n' "$DEBIAN_SUITE" "$packages" "$(declare -f ensure_root)" | sha)"
  tar="$CACHE/roots/$name-${key:0:12}.tar"
  if [[ $FORCE == 1 || ! -s "$tar" ]]; then
    mapfile -t sources < <("$ROOT/images/debian-sources.sh" "$DEBIAN_SUITE")
    [[ ${#sources[@]} -gt 0 ]] || die "no '$DEBIAN_SUITE' source in apt's sources lists; set DEBIAN_MIRROR"
    new_tmp "root-$name"; w="$NEW_TMP"
    # No documentation, man pages or locales: these roots only run programs.
    timed "root $name: mmdebstrap" mmdebstrap --quiet --variant=minbase --include="$packages" \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --format=tar "$DEBIAN_SUITE" "$w/root.tar" "${sources[@]}" >&2
    mv -f "$w/root.tar" "$tar"
    find "$CACHE/roots" -name "$name-*.tar" ! -name "${tar##*/}" -delete
  fi
  ROOTFS_TAR="$tar"
}

# cloner_startup.sh is in the module (cmd/cdi-cloner); the binaries' cache has only Go programs.
cdi_cloner_script() {
  local dir
  dir="$(GOSUMDB=off GOFLAGS=-mod=mod go mod download -json "$CDI_MODULE@$CDI_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  printf '%s\n' "$dir/cmd/cdi-cloner/cloner_startup.sh"
}

# ensure_root_image <name> <packages>: sets ROOT_IMAGE to localhost/kubevirt/cdi-root-<name>:<key12>,
# the root's one layer, which every image on that root shares (containerd stores it once).
ensure_root_image() {
  local name="$1" packages="$2" image c mnt
  ensure_root "$name" "$packages"
  image="$REGISTRY/cdi-root-$name:$(basename "$ROOTFS_TAR" .tar | sed 's/.*-//')"
  if [[ $FORCE == 1 ]] || ! buildah inspect --type image "$image" >/dev/null 2>&1; then
    c="$(buildah from scratch)"; CONTAINERS+=("$c")
    buildah add --quiet "$c" "$ROOTFS_TAR" / >/dev/null
    mnt="$(buildah mount "$c")"
    # CentOS's CA bundle path, which CDI's code and docs name, beside Debian's.
    mkdir -p "$mnt/etc/pki/ca-trust/extracted/pem"
    ln -sf /etc/ssl/certs/ca-certificates.crt "$mnt/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"
    buildah umount "$c" >/dev/null
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
    timed "root $name: image" buildah commit --quiet --format docker --rm "$c" "$image" >/dev/null
    CONTAINERS=()
  fi
  ROOT_IMAGE="$image"
}

# build_cdi_image <component> <root image> <entrypoint> <workdir> <programs> <key> <image>
build_cdi_image() {
  local component="$1" root_image="$2" entrypoint="$3" workdir="$4" programs="$5" key="$6" image="$7"
  local c mnt p entry_json="" word
  c="$(buildah from --pull=never "$root_image")"; CONTAINERS+=("$c")
  mnt="$(buildah mount "$c")"
  for p in $programs; do install -m 0755 "$CDI_BIN/$p" "$mnt/usr/bin/$p"; done
  [[ "$component" != cloner ]] || install -m 0755 "$(cdi_cloner_script)" "$mnt/usr/bin/cloner_startup.sh"
  [[ -z "$workdir" ]] || install -d -m 0755 "$mnt$workdir"
  buildah umount "$c" >/dev/null
  for word in $entrypoint; do entry_json+="${entry_json:+,}\"$word\""; done
  buildah config --user "$CDI_UID" --entrypoint "[$entry_json]" \
    ${workdir:+--workingdir "$workdir"} \
    --label "dev.agentry.cdi-key=$key" --label "io.kubevirt.cdi.version=$CDI_VERSION" "$c"
  buildah commit --quiet --format docker --rm "$c" "$image" >/dev/null
  CONTAINERS=()
}

ensure_all_images() {
  local spec component rootname entrypoint workdir extra programs root_image key image images_file
  local -A roots
  ensure_root_image base "$BASE_PACKAGES"; roots[base]="$ROOT_IMAGE"
  ensure_root_image importer "$IMPORTER_PACKAGES"; roots[importer]="$ROOT_IMAGE"
  images_file="$CACHE/manifests/images-$CDI_VERSION.txt"
  : >"$images_file.tmp"
  for spec in "${CDI_IMAGE_SPECS[@]}"; do
    IFS='|' read -r component rootname entrypoint workdir extra <<<"$spec"
    root_image="${roots[$rootname]}"
    programs="cdi-$component $extra"
    image="$REGISTRY/cdi-$component:$CDI_VERSION"
    key="$(printf '%s\n' "$spec" "$root_image" "$CDI_BIN_KEY" "$CDI_UID" \
      "$(declare -f ensure_root_image build_cdi_image cdi_cloner_script)" | sha)"
    if [[ $FORCE == 0 && "$(image_label "$image" dev.agentry.cdi-key)" == "$key" ]]; then
      log "$component: $image is current (key ${key:0:12})"
    else
      log "$component: building $image (key ${key:0:12})"
      timed "$component: image" build_cdi_image "$component" "$root_image" "$entrypoint" "$workdir" \
        "$programs" "$key" "$image"
    fi
    ensure_archive "$image" "cdi-$component-$CDI_VERSION-${key:0:12}"
    add_result "CDI_IMAGE_${component^^}_ARCHIVE" "$ARCHIVE"
    printf '%s\n' "$image" >>"$images_file.tmp"
  done
  mv -f "$images_file.tmp" "$images_file"
  add_result CDI_IMAGES "$images_file"
}
