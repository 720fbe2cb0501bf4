#!/usr/bin/env bash
# Installs the reference server for the side-by-side benchmark (target/release/agentwire-bench):
#   bench/node_modules  from bench/package-lock.json (npm ci: exact versions, integrity-checked),
#                       i.e. @openai/codex 0.171.0 and its static Linux binary
#                       node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
# Idempotent; only the npm registry is contacted. The benchmark runs without it and says so.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$REPO/bench"
CODEX="$BENCH/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

step() { printf '==> %s\n' "$*"; }
die() { printf 'install-bench-tools: error: %s\n' "$*" >&2; exit 1; }

command -v npm >/dev/null || die "npm is not installed"
[ -f "$BENCH/package-lock.json" ] || die "bench/package-lock.json is missing"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "the pinned reference binary is for Linux x86_64 only"

if [ -x "$CODEX" ] && "$CODEX" --version 2>/dev/null | grep -q ' 0\.171\.0$'; then
  step "codex 0.171.0 already installed in bench/node_modules"
else
  step "npm ci --prefix bench (from bench/package-lock.json)"
  npm ci --prefix "$BENCH" --no-audit --no-fund --ignore-scripts
fi

[ -x "$CODEX" ] || die "npm ci did not install $CODEX"
step "$("$CODEX" --version)"
