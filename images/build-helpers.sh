# shellcheck shell=bash
# Sourced by the image build scripts (images/build.sh, images/cdi/build.sh) once they have set CACHE
# (their cache directory, with .tmp/ and archives/ in it) and defined `log`: temporary directories
# and buildah containers removed on exit, step timing, hashing, image labels, docker-archives and
# the KEY=value results. ensure_archive also reads FORCE (1: write again) and KEEP_ARCHIVES.

TMP_DIRS=()
CONTAINERS=()
cleanup() {
  local c d
  for c in "${CONTAINERS[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  for d in "${TMP_DIRS[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT
# new_tmp <name>: sets NEW_TMP to a fresh directory, removed on exit (not in a subshell: the
# EXIT trap must see it).
new_tmp() { NEW_TMP="$(mktemp -d "$CACHE/.tmp/$1.XXXXXX")"; TMP_DIRS+=("$NEW_TMP"); }

timed() { # timed <label> <cmd...>: run, log wall time
  local label="$1" start=$SECONDS; shift
  "$@"
  log "$label took $((SECONDS - start))s"
}

sha() { sha256sum | cut -c1-64; }
image_id() { buildah inspect --type image --format '{{.FromImageID}}' "$1" 2>/dev/null; }
image_label() { # image_label <image> <label>
  buildah inspect --type image --format "{{index .Docker.Config.Labels \"$2\"}}" "$1" 2>/dev/null
}

# ensure_archive <image> <file stem>: sets ARCHIVE to the image's docker-archive in the cache
# (written once, renamed into place when complete); older ones of the same image are pruned.
ensure_archive() {
  local image="$1" stem="$2" archive w
  archive="$CACHE/archives/$stem.tar"
  if [[ $FORCE == 1 || ! -s "$archive" ]]; then
    new_tmp archive; w="$NEW_TMP"
    timed "$stem: docker-archive" buildah push --quiet "$image" "docker-archive:$w/image.tar:$image" >&2
    mv -f "$w/image.tar" "$archive"
  fi
  touch "$archive"
  # shellcheck disable=SC2012 # names are ours: <stem without key>-<12 hex>.tar
  ls -1t "$CACHE/archives/${stem%-*}"-????????????.tar | tail -n +$((KEEP_ARCHIVES + 1)) | xargs -r rm -f
  # shellcheck disable=SC2034 # the caller's result
  ARCHIVE="$archive"
}

# The KEY=value lines a build reports: add_result KEY VALUE as it goes, print_results at the end
# (stdout, and OUT_FILE when set, replaced whole).
RESULTS=()
add_result() { RESULTS+=("$1=$2"); }
print_results() {
  printf '%s\n' "${RESULTS[@]}"
  if [[ -n "${OUT_FILE:-}" ]]; then
    mkdir -p "$(dirname "$OUT_FILE")"
    printf '%s\n' "${RESULTS[@]}" >"$OUT_FILE.tmp.$$"
    mv -f "$OUT_FILE.tmp.$$" "$OUT_FILE"
  fi
}
