# shellcheck shell=bash
# Sourced by ../build-binaries.sh, whose helpers (log, die, version_ok, mod_download, new_tmp,
# install_dir, from_cache, built, timed, add_result, add_bindir) and settings it uses: the moto[server] venv.

# ---- moto (python venv; not relocatable, so a stamp file marks completion) -------
moto_check() {
  [[ -f "$1/.complete" ]] || return 1
  [[ "$("$1/venv/bin/python" -c 'import moto; print(moto.__version__)' 2>/dev/null)" == "$MOTO_VERSION" ]] || return 1
  [[ -x "$1/venv/bin/moto_server" ]]
}

build_moto() {
  local final="$CACHE/moto-${MOTO_VERSION}"
  if [[ $FORCE == 0 ]] && moto_check "$final"; then
    from_cache moto "$MOTO_VERSION" "$final"
  else
    local start=$SECONDS
    log "moto ${MOTO_VERSION}: installing into $final/venv"
    rm -rf "$final"
    mkdir -p "$final"
    timed "moto: venv" "$PYTHON" -m venv "$final/venv" >&2
    timed "moto: pip install" "$final/venv/bin/pip" install --quiet --disable-pip-version-check \
      "moto[server]==${MOTO_VERSION}" >&2
    "$final/venv/bin/python" -c 'import moto; print(moto.__version__)' >"$final/.complete"
    moto_check "$final" || die "moto venv at $final failed its check"
    built moto "$MOTO_VERSION" "$start"
  fi
  add_result MOTO_SERVER "$final/venv/bin/moto_server"
  add_bindir "$final/venv/bin"
}
