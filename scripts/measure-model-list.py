#!/usr/bin/env python3
"""Round-trip time of `model/list` answered from the catalog cache, over stdio.

Usage: python3 scripts/measure-model-list.py [path/to/agentwire] [requests]

Starts `agentwire app-server` on a scratch $AGENTWIRE_HOME whose default provider is an
OpenAI-compatible server on loopback (a tiny built-in HTTP server answering GET /v1/models with
50 models) plus three models listed in config.toml, sends one `model/list` to fill the cache,
then times `requests` more, one in flight at a time, and prints the median, p90 and p99.
"""

import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/agentwire"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000


class Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(
            {"object": "list", "data": [{"id": f"served-{i:02}"} for i in range(50)]}
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Models)
threading.Thread(target=server.serve_forever, daemon=True).start()
home = tempfile.mkdtemp(prefix="agentwire-model-list-")
with open(os.path.join(home, "config.toml"), "w") as f:
    f.write(
        'model_provider = "local"\nmodel = "cfg-a"\n[model_providers.local]\n'
        f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
        'models = ["cfg-a", "cfg-b", { id = "cfg-c", reasoning_efforts = ["low", "high"] }]\n'
    )
proc = subprocess.Popen(
    [binary, "app-server"],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    env={**os.environ, "AGENTWIRE_HOME": home, "RUST_LOG": "warn"},
)


def call(id_, method, params):
    proc.stdin.write((json.dumps({"id": id_, "method": method, "params": params}) + "\n").encode())
    proc.stdin.flush()
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == id_:
            return message


call(0, "initialize", {"clientInfo": {"name": "measure", "version": "0"}})
proc.stdin.write(b'{"method":"initialized"}\n')
first = call(1, "model/list", {})
assert len(first["result"]["data"]) == 53, first
samples = []
for i in range(count):
    start = time.perf_counter()
    answer = call(2 + i, "model/list", {})
    samples.append((time.perf_counter() - start) * 1e6)
    assert "result" in answer, answer
proc.stdin.close()
proc.wait()
samples.sort()
print(
    f"model/list (cached, 53 models) over stdio, {count} requests: "
    f"median {statistics.median(samples):.0f} µs, p90 {samples[int(count * 0.9)]:.0f} µs, "
    f"p99 {samples[int(count * 0.99)]:.0f} µs"
)
