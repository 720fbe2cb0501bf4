#!/usr/bin/env python3
"""Drives `agentwire app-server` over stdio through one session and prints the exchange.

Usage: scripts/demo.py [PATH_TO_AGENTWIRE]

It starts the server with a fresh temporary AGENTWIRE_HOME (so the built-in defaults apply: the
fixture model provider, no network, no key), performs the handshake, reads the configuration and
the model list as clients do first, starts a thread in a fresh
temporary workspace, runs two turns and prints every message in both directions: one turn that
only talks, and one in which the model runs a command (`ls -a`, confined to the read-only
sandbox) and writes a file with a patch, which the read-only sandbox makes the server ask this
client to approve (the demo accepts). Then it reads the thread back and lists threads. Standard
library only.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/release/agentwire"
DEADLINE = 30.0


def show(direction, message):
    text = json.dumps(message, separators=(",", ":"))
    if len(text) > 220:
        text = text[:217] + "..."
    print(f"{direction} {text}", flush=True)


def main():
    home = tempfile.mkdtemp(prefix="agentwire-demo-")
    env = dict(os.environ, AGENTWIRE_HOME=home, RUST_LOG=os.environ.get("RUST_LOG", "warn"))
    server = subprocess.Popen([BINARY, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    next_id = [0]

    def send(method, params=None, request=True):
        message = {"method": method}
        if request:
            next_id[0] += 1
            message["id"] = next_id[0]
        if params is not None:
            message["params"] = params
        show("->", message)
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        return message.get("id")

    def answer(message):
        reply = {"id": message["id"], "result": {"decision": "accept"}}
        show("->", reply)
        server.stdin.write((json.dumps(reply) + "\n").encode())
        server.stdin.flush()

    def read_until(predicate):
        started = time.monotonic()
        while time.monotonic() - started < DEADLINE:
            line = server.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            message = json.loads(line)
            show("<-", message)
            if "id" in message and message.get("method", "").endswith("/requestApproval"):
                answer(message)
            if predicate(message):
                return message
        raise SystemExit("timed out waiting for the server")

    def call(method, params=None):
        request_id = send(method, params)
        return read_until(lambda m: m.get("id") == request_id and "method" not in m)

    call("initialize", {"clientInfo": {"name": "agentwire-demo", "version": "0.1.0"}})
    send("initialized", request=False)
    # What a client asks first: the effective configuration and the models it can pick.
    call("config/read", {"includeLayers": True})
    call("model/list", {})
    workspace = tempfile.mkdtemp(prefix="agentwire-demo-workspace-")
    started = call("thread/start", {"cwd": workspace})
    thread_id = started.get("result", {}).get("thread", {}).get("id")
    if thread_id:
        for text in ("Say hello.", "Show me the tools."):
            turn = call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
            if "result" in turn:
                read_until(lambda m: m.get("method") == "turn/completed")
        call("thread/read", {"threadId": thread_id, "includeTurns": True})
    call("thread/list", {})
    server.stdin.close()
    code = server.wait(timeout=DEADLINE)
    print(f"server exited with {code}; its home was {home}; the workspace {workspace} holds {sorted(os.listdir(workspace))}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
