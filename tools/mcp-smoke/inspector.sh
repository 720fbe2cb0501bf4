#!/usr/bin/env bash
# The MCP Inspector (@modelcontextprotocol/inspector, pinned in tools/package.json) in CLI mode
# against `agentwire mcp-server`: tools/list over stdio with --strict (schema portability
# problems fail it), a `codex` tools/call on the fixture model, and tools/list over streamable
# HTTP. Every answer is checked.
#     bash tools/mcp-smoke/inspector.sh target/debug/agentwire
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
source "$REPO/tools/mcp-smoke/lib.sh"
INSPECTOR="$REPO/tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
inspect() { "$NODE22" "$INSPECTOR" --cli "$@"; }

echo "inspector: tools/list over stdio (--strict)"
inspect "$BIN" mcp-server -e "AGENTWIRE_HOME=$MCP_HOME" -e RUST_LOG=warn --method tools/list --strict \
  > "$WORK/list.json"
python3 - "$WORK/list.json" <<'PY'
import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
names = sorted(t["name"] for t in tools)
assert names == ["codex", "codex-reply"], names
codex = next(t for t in tools if t["name"] == "codex")
assert codex["inputSchema"]["required"] == ["prompt"], codex
assert codex["inputSchema"]["additionalProperties"] is False, codex
assert set(codex["outputSchema"]["required"]) == {"threadId", "content"}, codex
print("  ok   tools/list:", names)
PY

echo "inspector: tools/call codex over stdio"
inspect "$BIN" mcp-server -e "AGENTWIRE_HOME=$MCP_HOME" -e RUST_LOG=warn --method tools/call \
  --tool-name codex --tool-arg prompt=hello "cwd=$MCP_WORKSPACE" > "$WORK/call.json"
python3 - "$WORK/call.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
assert not result.get("isError"), result
assert result["structuredContent"]["content"] == "Hello from the fixture.", result
assert result["structuredContent"]["threadId"], result
assert result["content"][0]["text"] == "Hello from the fixture.", result
print("  ok   tools/call codex:", result["structuredContent"]["threadId"])
PY

echo "inspector: tools/list over streamable HTTP"
start_http_server
inspect "$MCP_URL" --method tools/list > "$WORK/http-list.json"
python3 - "$WORK/http-list.json" <<'PY'
import json, sys
names = sorted(t["name"] for t in json.load(open(sys.argv[1]))["tools"])
assert names == ["codex", "codex-reply"], names
print("  ok   tools/list over HTTP:", names)
PY
echo "inspector: 3 passed, 0 failed"
