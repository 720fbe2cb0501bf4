#!/usr/bin/env python3
"""Records the exchanges the OpenRPC document's examples come from.

Runs `agentwire app-server --record FILE` over stdio with a fresh AGENTWIRE_HOME and sends one
request for each method that a fresh server can answer without earlier state (no thread, turn or
process ids of this session in the params), so that `@open-rpc/test-coverage` can replay every
example against another fresh server (tools/openrpc/coverage.mjs). Writes the transcript to
codegen/openrpc/exchanges.jsonl; then run `cargo run -p agentwire-codegen -- write`.

usage: scripts/record-openrpc-examples.py [AGENTWIRE_BINARY]   (default: target/debug/agentwire)
"""

import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "codegen", "openrpc", "exchanges.jsonl")

# (method, params). Paths are ones every Linux machine has, so a replay elsewhere is valid.
CALLS = [
    ("initialize", {"clientInfo": {"name": "openrpc-examples", "version": "1.0.0"}}),
    ("thread/list", {"limit": 10}),
    ("thread/loaded/list", {}),
    ("thread/start", {"cwd": "/"}),
    ("model/list", {}),
    ("app/list", {}),
    ("config/read", {"includeLayers": False}),
    ("account/read", {"refreshToken": False}),
    ("getAuthStatus", {"includeToken": False, "refreshToken": False}),
    ("mcpServerStatus/list", {}),
    ("config/mcpServer/reload", None),
    ("fs/getMetadata", {"path": "/"}),
    ("fuzzyFileSearch", {"query": "passwd", "roots": ["/etc"], "cancellationToken": None}),
]


def main() -> int:
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target", "debug", "agentwire")
    with tempfile.TemporaryDirectory(prefix="openrpc-examples-") as home:
        record = os.path.join(home, "record.jsonl")
        env = dict(os.environ, AGENTWIRE_HOME=home, RUST_LOG="warn")
        server = subprocess.Popen(
            [binary, "app-server", "--record", record],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert server.stdin is not None and server.stdout is not None
        for n, (method, params) in enumerate(CALLS, start=1):
            message = {"id": n, "method": method}
            if params is not None:
                message["params"] = params
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            while True:
                line = server.stdout.readline()
                if not line:
                    print(f"server closed its output while {method} was pending", file=sys.stderr)
                    return 1
                answer = json.loads(line)
                if answer.get("id") == n and "method" not in answer:
                    break
            status = "error " + json.dumps(answer["error"]) if "error" in answer else "ok"
            print(f"{method}: {status}", file=sys.stderr)
            if method == "initialize":
                server.stdin.write(json.dumps({"method": "initialized"}) + "\n")
                server.stdin.flush()
        server.stdin.close()
        server.wait(timeout=30)
        with open(record, encoding="utf-8") as source:
            lines = source.readlines()
    # Only what the examples need: no timestamps (so a re-recording diffs by content only) and a
    # session name independent of the run.
    with open(OUT, "w", encoding="utf-8") as out:
        for line in lines:
            entry = json.loads(line)
            out.write(json.dumps({"session": "openrpc-examples", "dir": entry["dir"], "line": entry["line"]}) + "\n")
    print(f"wrote {len(lines)} messages to {os.path.relpath(OUT, REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
