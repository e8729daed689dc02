# Sourced by the image build scripts: one build at a time per cache directory.
# lock_cache <cache dir> <script name>: holds <cache dir>/.lock until the script exits (a second run
# waits, then reuses what the first made), then clears <cache dir>/.tmp, the leftovers of killed runs
# (nobody else can be using them while we hold the lock). Needs a `log` function.
lock_cache() {
  local cache="$1" who="$2"
  exec {CACHE_LOCK_FD}>"$cache/.lock"
  if ! flock -n "$CACHE_LOCK_FD"; then
    log "waiting for another $who holding $cache/.lock"
    flock "$CACHE_LOCK_FD"
  fi
  find "$cache/.tmp" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
}
