# shellcheck shell=bash
# Sourced by images/cdi/build.sh: CDI's Go binaries, built from the Go module (no Bazel).
# Needs from the caller: CDI_VERSION, TOOLS_CACHE, FORCE, HERE (this directory), log, die, timed,
# sha, new_tmp.

# The programs the images carry (cmd/*/BUILD.bazel `files`), plus the manifest generator.
# cdi-containerimage-server is copied into containerDisk images that may have no libc: every binary
# is built with CGO_ENABLED=0, so all are static (upstream links that one statically on purpose).
CDI_PROGRAMS=(
  cmd/cdi-operator cmd/cdi-controller cmd/cdi-apiserver cmd/cdi-uploadproxy cmd/cdi-importer
  cmd/cdi-cloner cmd/cdi-uploadserver cmd/openstack-populator cmd/ovirt-populator
  tools/cdi-containerimage-server tools/cdi-image-size-detection tools/cdi-source-update-poller
  tools/csv-generator tools/manifest-generator
)
CDI_MODULE=kubevirt.io/containerized-data-importer
CDI_API_MODULE=kubevirt.io/containerized-data-importer-api

# cdi_module_dir: the module's directory in Go's module cache, downloaded if absent. sum.golang.org
# has no entry for CDI, hence GOSUMDB=off (the proxy still serves the zip and its hash).
cdi_module_dir() {
  local mod dir first=""
  for mod in "$CDI_MODULE@$CDI_VERSION" "$CDI_API_MODULE@$CDI_VERSION"; do
    dir="$(GOSUMDB=off GOFLAGS=-mod=mod go mod download -json "$mod" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -d "$dir" ]] || die "go mod download $mod gave no directory"
    first="${first:-$dir}"
  done
  printf '%s\n' "$first"
}

# cdi_source <dir>: a writable copy of the module at <dir>/src with CDI's own go.mod/go.sum and two
# replacements: the API module (upstream a staging/ directory that the module zip leaves out, being
# a module of its own) by its published version, and libguestfs.org/libnbd (cgo against headers
# Debian does not ship for Go; only the VDDK import path uses it) by the stub beside this script.
# Module zips drop vendor/ contents but keep vendor/modules.txt, which would force -mod=vendor.
cdi_source() {
  local dir="$1" module
  module="$(cdi_module_dir)"
  cp -r "$module" "$dir/src"
  chmod -R u+w "$dir/src"
  rm -rf "$dir/src/vendor"
  cp -r "$HERE/libnbd-stub" "$dir/libnbd-stub"
  (cd "$dir/src" && go mod edit \
    -replace "$CDI_API_MODULE=$CDI_API_MODULE@$CDI_VERSION" \
    -replace "libguestfs.org/libnbd=../libnbd-stub")
}

build_cdi_binaries() { # build_cdi_binaries <out dir>
  local out="$1" w ldflags pkg="$CDI_MODULE/pkg/version"
  new_tmp cdi-src; w="$NEW_TMP"
  cdi_source "$w"
  # What hack/build/version.sh stamps; no git tree here, so the version names the commit.
  ldflags="-s -w -X $pkg.gitVersion=$CDI_VERSION -X $pkg.gitTreeState=clean"
  ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
  mkdir -p "$w/bin"
  (cd "$w/src" && GOSUMDB=off GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 GOOS=linux \
    go build -trimpath -tags strictfipsruntime -ldflags "$ldflags" -o "$w/bin/" \
    "${CDI_PROGRAMS[@]/#/./}") >&2
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  mv "$w/bin" "$out"
}

# ensure_cdi_binaries: sets CDI_BIN to a directory holding every program in CDI_PROGRAMS, cached
# under TOOLS_CACHE/cdi-<version>/<key12>/ by version, this recipe, the stub and Go's version.
ensure_cdi_binaries() {
  local key dir
  key="$( { printf '%s\n' "$CDI_VERSION" "${CDI_PROGRAMS[@]}" "$(go env GOVERSION)"
    declare -f cdi_module_dir cdi_source build_cdi_binaries
    cat "$HERE/libnbd-stub/go.mod" "$HERE/libnbd-stub/libnbd.go"; } | sha)"
  dir="$TOOLS_CACHE/cdi-$CDI_VERSION/${key:0:12}"
  if [[ $FORCE == 0 && -f "$dir/.complete" ]]; then
    log "binaries: $dir is current"
  else
    log "binaries: building CDI $CDI_VERSION (key ${key:0:12}); about 9 minutes cold on 2 cores"
    timed "binaries: go build" build_cdi_binaries "$dir/bin"
    touch "$dir/.complete"
    # Older builds of this version are of no further use.
    find "$TOOLS_CACHE/cdi-$CDI_VERSION" -mindepth 1 -maxdepth 1 ! -name "${key:0:12}" -exec rm -rf {} +
  fi
  # shellcheck disable=SC2034 # both read by build.sh's other steps
  CDI_BIN="$dir/bin" CDI_BIN_KEY="$key"
}
