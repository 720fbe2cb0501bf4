"""The official MCP Python SDK (`mcp` on PyPI), unchanged, as a client of `agentwire mcp-server`.

    python tools/mcp-smoke/smoke.py target/debug/agentwire

Over stdio, against the fixture model: initialize, tools/list, a `codex` call streaming
`codex/event` notifications, `codex-reply` on the same thread, an approval accepted and one
declined through elicitation, and a cancelled call whose turn is interrupted. Every step asserts
on what came back; the exit status is non-zero when one fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from mcp import types
from mcp.client.extension import NotificationBinding
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SCRIPT = {
    "version": 1,
    "responses": [
        {
            "when": "case-run",
            "steps": [
                {"type": "command", "command": "touch ran.txt", "escalate": True},
                {"type": "message", "deltas": ["ran"]},
            ],
        },
        {
            "when": "case-refused",
            "steps": [
                {"type": "command", "command": "touch refused.txt", "escalate": True},
                {"type": "message", "deltas": ["refused"]},
            ],
        },
        {
            "when": "case-hang",
            "steps": [
                {"type": "command", "command": "touch cancelled.txt", "escalate": True},
                {"type": "message", "deltas": ["never"]},
            ],
        },
        {"steps": [{"type": "message", "deltas": ["Hello ", "from the fixture."]}]},
    ],
}


class CodexEvent(BaseModel):
    """The params of a `codex/event` notification, kept whole."""

    model_config = ConfigDict(extra="allow")


async def settled(condition: Any) -> None:
    """Waits (60 s at most) for `condition()`: notifications reach their binding on a task of
    their own, possibly just after the result they precede."""
    with anyio.move_on_after(60):
        while not condition():
            await anyio.sleep(0.01)


class Checks:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.passed = 0

    def check(self, condition: bool, what: str) -> None:
        if condition:
            self.passed += 1
            print(f"  ok   {what}")
        else:
            self.failures.append(what)
            print(f"  FAIL {what}")


async def main(binary: str) -> int:
    checks = Checks()
    root = Path(tempfile.mkdtemp(prefix="agentwire-mcp-smoke-"))
    home, workspace = root / "home", root / "workspace"
    home.mkdir()
    workspace.mkdir()
    (home / "script.json").write_text(json.dumps(SCRIPT))
    (home / "config.toml").write_text('model_provider = "fixture"\nfixture_script = "script.json"\n')

    events: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    aborted = anyio.Event()

    async def on_event(params: CodexEvent) -> None:
        event = params.model_dump()
        events[event["_meta"]["threadId"]].append(event)
        if event["msg"].get("type") == "turn_aborted":
            aborted.set()

    asked: list[str] = []
    hang_scope: list[anyio.CancelScope] = []

    async def on_elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        message = params.message
        asked.append(message)
        if "cancelled.txt" in message:
            # Cancel the tools/call (the SDK sends notifications/cancelled), and answer only
            # once the server has reported the turn interrupted: the late accept must not run it.
            hang_scope[0].cancel()
            with anyio.fail_after(60):
                await aborted.wait()
            return types.ElicitResult(action="accept")
        if "refused.txt" in message:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept")

    server = StdioServerParameters(
        command=binary,
        args=["mcp-server"],
        env={"AGENTWIRE_HOME": str(home), "RUST_LOG": "warn", "PATH": os.environ.get("PATH", "")},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=120,
            elicitation_callback=on_elicitation,
            notification_bindings=[NotificationBinding(method="codex/event", params_type=CodexEvent, handler=on_event)],
        ) as session:
            print("initialize")
            init = await session.initialize()
            checks.check(init.server_info.name == "agentwire-mcp-server", f"serverInfo.name ({init.server_info.name})")
            checks.check(bool(init.server_info.title), "serverInfo.title is set")
            checks.check(init.capabilities.tools is not None, "tools capability")

            print("tools/list")
            tools = await session.list_tools()
            names = sorted(tool.name for tool in tools.tools)
            checks.check(names == ["codex", "codex-reply"], f"tools are codex and codex-reply ({names})")
            codex = next(tool for tool in tools.tools if tool.name == "codex")
            checks.check(codex.input_schema.get("required") == ["prompt"], "codex requires prompt")
            checks.check(codex.output_schema is not None, "codex has an outputSchema")

            print("codex")
            result = await session.call_tool("codex", {"prompt": "Say hello.", "cwd": str(workspace)})
            checks.check(not result.is_error, "codex succeeds")
            structured = result.structured_content or {}
            thread = structured.get("threadId")
            checks.check(structured.get("content") == "Hello from the fixture.", f"codex content ({structured})")
            checks.check(
                result.content and getattr(result.content[0], "text", None) == "Hello from the fixture.",
                "codex text content",
            )
            await settled(lambda: any(e["msg"].get("type") == "task_complete" for e in events[thread]))
            kinds = [e["msg"].get("type") for e in events[thread]]
            checks.check(kinds[:1] == ["session_configured"], f"first event is session_configured ({kinds[:1]})")
            checks.check("agent_message_content_delta" in kinds, "deltas streamed as codex/event")
            checks.check(kinds[-1:] == ["task_complete"], f"last event is task_complete ({kinds[-1:]})")

            print("codex-reply")
            reply = await session.call_tool("codex-reply", {"threadId": thread, "prompt": "Again."})
            checks.check(not reply.is_error, "codex-reply succeeds")
            checks.check((reply.structured_content or {}).get("threadId") == thread, "codex-reply stays on the thread")

            print("approval accepted through elicitation")
            approve_args = {
                "prompt": "case-run",
                "cwd": str(workspace),
                "approval-policy": "on-request",
                "sandbox": "workspace-write",
            }
            ran = await session.call_tool("codex", approve_args)
            checks.check(any("ran.txt" in m for m in asked), "the host was asked about touch ran.txt")
            checks.check((ran.structured_content or {}).get("content") == "ran", "accepted turn completes")
            checks.check((workspace / "ran.txt").exists(), "the accepted command ran")

            print("approval declined through elicitation")
            refused = await session.call_tool("codex", {**approve_args, "prompt": "case-refused"})
            checks.check((refused.structured_content or {}).get("content") == "refused", "declined turn goes on")
            checks.check(not (workspace / "refused.txt").exists(), "the declined command did not run")

            print("cancellation")
            outcome: list[Any] = []
            with anyio.CancelScope() as scope:
                hang_scope.append(scope)
                outcome.append(await session.call_tool("codex", {**approve_args, "prompt": "case-hang"}))
            checks.check(scope.cancelled_caught and not outcome, "the call was cancelled")
            with anyio.fail_after(60):
                await aborted.wait()
            hung = next(t for t, evs in events.items() if any(e["msg"].get("type") == "turn_aborted" for e in evs))
            checks.check(hung != thread, "turn_aborted reported for the cancelled call's thread")
            checks.check(not (workspace / "cancelled.txt").exists(), "the cancelled turn ran nothing")
            after = await session.call_tool("codex-reply", {"threadId": hung, "prompt": "Still there?"})
            checks.check(not after.is_error, "the interrupted thread takes another turn")

            print("bad arguments")
            bad = await session.call_tool("codex", {"prompt": "x", "colour": "red"})
            checks.check(bool(bad.is_error), "unknown argument is a tool error")

    print(f"mcp python sdk: {checks.passed} passed, {len(checks.failures)} failed")
    for failure in checks.failures:
        print(f"failed: {failure}")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(asyncio.run(main(os.path.abspath(sys.argv[1]))))
