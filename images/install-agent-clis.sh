#!/bin/sh
# Install the agent CLIs the runner image was asked for, and fail the build naming the CLI when an
# asked-for install fails (a build that silently lacks a CLI shows up only when a prompt fails).
#
# Usage: install-agent-clis.sh CLI...   (CLI: claude-code, codex, gemini, opencode)
# For each CLI, INSTALL_<CLI> (true/false, empty = false) says whether to install it and
# <CLI>_VERSION which version, e.g. INSTALL_CODEX=true CODEX_VERSION=0.169.0 (the Dockerfile's
# build arguments). After `npm install -g`, the CLI's command must be on PATH.
set -eu

fail() {
  echo "install-agent-clis: $*" >&2
  exit 1
}

[ "$#" -gt 0 ] || fail "usage: install-agent-clis.sh CLI... (claude-code, codex, gemini, opencode)"

installed=0
for cli in "$@"; do
  # cli -> build arguments, npm package, the command it puts on PATH
  case "$cli" in
    claude-code) install="${INSTALL_CLAUDE_CODE:-}" version="${CLAUDE_CODE_VERSION:-}" package=@anthropic-ai/claude-code command=claude ;;
    codex) install="${INSTALL_CODEX:-}" version="${CODEX_VERSION:-}" package=@openai/codex command=codex ;;
    gemini) install="${INSTALL_GEMINI:-}" version="${GEMINI_CLI_VERSION:-}" package=@google/gemini-cli command=gemini ;;
    opencode) install="${INSTALL_OPENCODE:-}" version="${OPENCODE_VERSION:-}" package=opencode-ai command=opencode ;;
    *) fail "unknown agent CLI '$cli' (known: claude-code, codex, gemini, opencode)" ;;
  esac
  case "$install" in
    true) ;;
    false | '') continue ;;
    *) fail "$cli: the install switch must be true or false, not '$install'" ;;
  esac
  [ -n "$version" ] || fail "$cli: asked for, but no version given"
  echo "install-agent-clis: installing $cli ($package@$version)" >&2
  npm install -g --no-audit --no-fund "$package@$version" >&2 ||
    fail "$cli: npm install -g $package@$version failed"
  command -v "$command" >/dev/null 2>&1 ||
    fail "$cli: $package@$version installed, but its command '$command' is not on PATH"
  installed=1
done
# The image keeps the CLIs, not npm's download cache.
[ "$installed" = 0 ] || npm cache clean --force >/dev/null 2>&1 || true
