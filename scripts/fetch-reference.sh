#!/usr/bin/env bash
# Produces the reference material the tests compare agentwire with, from its source (the npm
# registry only; pinned, integrity-checked by package-lock.json):
#   - codex 0.171.0 (bench/package-lock.json, installed by scripts/install-bench-tools.sh) and
#     codex 0.153.4 (tools/reference/package-lock.json, the last release with `mcp-server`);
#   - OUT/codex-app-server-schema/: `codex app-server generate-json-schema --out DIR` (stable);
#   - OUT/codex-app-server-schema-experimental/: the same with `--experimental` (every method);
#   - OUT/codex-mcp-tools.json and OUT/transcripts/*.jsonl: recorded by tools/reference/capture.mjs
#     (a small client and a loopback mock model; see that file).
# OUT defaults to .tools/reference (gitignored); it is written to a temporary directory first and
# renamed into place when complete, so a present OUT is always whole. Idempotent: a complete OUT
# made from the same pins is kept (pass --force to redo it). The tests find OUT through
# tests/reference-material (which runs this script itself when no reference material exists).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/.tools/reference"
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -*) printf 'usage: fetch-reference.sh [--force] [OUT]\n' >&2; exit 2 ;;
    *) OUT="$arg" ;;
  esac
done
APP_SERVER="$REPO/bench/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
MCP_TOOLS="$REPO/tools/reference"
MCP_SERVER="$MCP_TOOLS/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
# What OUT was made from: both lockfiles and the capture script.
STAMP="$(cat "$REPO/bench/package-lock.json" "$MCP_TOOLS/package-lock.json" "$MCP_TOOLS/capture.mjs" \
  "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"

step() { printf '==> %s\n' "$*"; }
die() { printf 'fetch-reference: error: %s\n' "$*" >&2; exit 1; }

if [ "$FORCE" -eq 0 ] && [ -f "$OUT/STAMP" ] && [ "$(cat "$OUT/STAMP")" = "$STAMP" ]; then
  step "reference material in $OUT is up to date"
  exit 0
fi

command -v node >/dev/null || die "node is not installed"
bash "$REPO/scripts/install-bench-tools.sh"
if [ -x "$MCP_SERVER" ] && "$MCP_SERVER" --version 2>/dev/null | grep -q ' 0\.153\.4$'; then
  step "codex 0.153.4 already installed in tools/reference/node_modules"
else
  step "npm ci --prefix tools/reference (from tools/reference/package-lock.json)"
  npm ci --prefix "$MCP_TOOLS" --no-audit --no-fund --ignore-scripts
fi
[ -x "$MCP_SERVER" ] || die "npm ci did not install $MCP_SERVER"

mkdir -p "$(dirname "$OUT")"
WORK="$(mktemp -d "$OUT.tmp.XXXXXX")"
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
HOME_DIR="$(mktemp -d)"
trap 'rm -rf "$WORK" "$HOME_DIR"' EXIT

step "codex app-server generate-json-schema (0.171.0)"
CODEX_HOME="$HOME_DIR" HOME="$HOME_DIR" "$APP_SERVER" app-server generate-json-schema \
  --out "$WORK/codex-app-server-schema" >/dev/null 2>"$WORK/generate.log" \
  || die "generate-json-schema failed: $(cat "$WORK/generate.log")"
rm -f "$WORK/generate.log"
printf '%s — output of: codex app-server generate-json-schema --out DIR (no --experimental), by scripts/fetch-reference.sh\n' \
  "$("$APP_SERVER" --version)" >"$WORK/codex-app-server-schema/SOURCE.txt"

step "codex app-server generate-json-schema --experimental (0.171.0)"
CODEX_HOME="$HOME_DIR" HOME="$HOME_DIR" "$APP_SERVER" app-server generate-json-schema \
  --out "$WORK/codex-app-server-schema-experimental" --experimental >/dev/null 2>"$WORK/generate.log" \
  || die "generate-json-schema --experimental failed: $(cat "$WORK/generate.log")"
rm -f "$WORK/generate.log"
printf '%s — output of: codex app-server generate-json-schema --out DIR --experimental, by scripts/fetch-reference.sh\n' \
  "$("$APP_SERVER" --version)" >"$WORK/codex-app-server-schema-experimental/SOURCE.txt"

step "tools/reference/capture.mjs: the MCP tools list and the transcripts"
node "$MCP_TOOLS/capture.mjs" --app-server "$APP_SERVER" --mcp-server "$MCP_SERVER" --out "$WORK"

printf '%s\n' "$STAMP" >"$WORK/STAMP"
rm -rf "$OUT"
mv "$WORK" "$OUT"
trap 'rm -rf "$HOME_DIR"' EXIT
step "reference material written to $OUT"
