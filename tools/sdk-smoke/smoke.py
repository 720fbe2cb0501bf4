"""Third-party Python SDKs for the Codex app-server, run unchanged against `agentwire app-server`.

Each SDK is someone else's client (pinned in requirements.txt): it spawns the binary the way it
would spawn `codex app-server`, does its own handshake, and calls the methods a new user calls
first: configuration read and written, models listed, a thread started and a turn run on the
built-in fixture model, the thread read back, the account read. Every step checks what came
back; the SDKs' own response models (pydantic, where they have them) parse every answer too.

    python smoke.py /path/to/agentwire          # every SDK
    python smoke.py /path/to/agentwire NAME...  # some of them

Exit status 0 when every step of every SDK passed. The user `config.toml` is compared byte for
byte around each write: its comments must survive.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable

# A user config with comments, blank lines and an unusual key order: the writes below must leave
# all of it as it was, apart from the keys they set.
USER_CONFIG = """\
# my agentwire settings
model = "fixture"          # the built-in scripted model

approval_policy = "on-request"

# sandbox for commands
sandbox_mode = "read-only"
"""


class Failure(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Failure(what)


def fresh_home() -> tuple[Path, dict[str, str]]:
    home = Path(tempfile.mkdtemp(prefix="agentwire-sdk-"))
    (home / "config.toml").write_text(USER_CONFIG)
    env = dict(os.environ)
    env["AGENTWIRE_HOME"] = str(home)
    env["RUST_LOG"] = "warn"
    return home, env


def check_written(home: Path, key_line: str) -> None:
    text = (home / "config.toml").read_text()
    for line in USER_CONFIG.splitlines():
        if line.startswith("#") or not line.strip():
            check(line in text.splitlines(), f"config.toml lost the line {line!r}:\n{text}")
    check(key_line in text, f"config.toml lacks {key_line!r} after the write:\n{text}")


def model_ids(answer: Any) -> list[str]:
    data = answer.get("data") if isinstance(answer, dict) else getattr(answer, "data", None)
    ids = []
    for model in data or []:
        if isinstance(model, dict):
            ids.append(model.get("id") or model.get("model"))
        else:
            ids.append(getattr(model, "id", None) or getattr(model, "model", None))
    return ids


# ---- codex-app-server-client (sync, pydantic models) ------------------------------------------


def app_server_client(binary: str, steps: Callable[[str], Any]) -> None:
    from codex_app_server_client import SyncCodexClient
    from codex_app_server_client.types.misc import ConfigValueWriteParams
    from codex_app_server_client.types.threads import ThreadReadParams, ThreadStartParams, TurnStartParams

    home, env = fresh_home()
    client = SyncCodexClient(codex_bin=binary, env=env)
    # The SDK parses each notification into its own typed event before handing it over.
    completed: list[dict[str, Any]] = []
    client.on_notification(
        "turn/completed", lambda method, event: completed.append(event.model_dump(by_alias=True))
    )
    with steps("handshake"):
        client.start()
    try:
        with steps("config/read"):
            config = client.config_read()
            check(config.config.get("model") == "fixture", f"effective model: {config.config}")
        with steps("config/value/write"):
            written = client.config_value_write(
                ConfigValueWriteParams(key_path="model_reasoning_effort", value="high", merge_strategy="replace")
            )
            check(bool(written.version), f"write answer: {written}")
            check_written(home, 'model_reasoning_effort = "high"')
        with steps("model/list"):
            models = client.model_list()
            check("fixture" in model_ids(models.model_dump()), f"models: {models}")
        with steps("thread/start + turn/start"):
            thread = client.thread_start(ThreadStartParams(cwd=str(home)))
            thread_id = thread.thread.id
            client.turn_start(TurnStartParams(thread_id=thread_id, input=[{"type": "text", "text": "hello"}]))
            wait_for(lambda: completed, "turn/completed")
            check(completed[0]["turn"]["status"] == "completed", f"turn: {completed[0]}")
        with steps("thread/read"):
            read = client.thread_read(ThreadReadParams(thread_id=thread_id, include_turns=True))
            check(len(read.thread.turns) == 1, f"turns: {read.thread.turns}")
        with steps("account/read"):
            client.account_read()
    finally:
        client.close()


def wait_for(ready: Callable[[], Any], what: str, seconds: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise Failure(f"no {what} within {seconds} s")
        time.sleep(0.01)


# ---- codex-app-server-sdk (async) ---------------------------------------------------------------


def app_server_sdk(binary: str, steps: Callable[[str], Any]) -> None:
    from codex_app_server_sdk import CodexClient

    home, env = fresh_home()

    async def run() -> None:
        client = CodexClient.connect_stdio(command=[binary, "app-server"], env=env)
        with steps("handshake"):
            await client.start()
            await client.initialize()
        try:
            with steps("config/read"):
                config = await client.read_config(include_layers=True)
                check(config["config"].get("model") == "fixture", f"effective: {config['config']}")
                check(isinstance(config.get("layers"), list) and config["layers"], f"layers: {config}")
            with steps("config/batchWrite"):
                await client.batch_write_config(
                    [{"keyPath": "model_reasoning_summary", "value": "concise", "mergeStrategy": "replace"}]
                )
                check_written(home, 'model_reasoning_summary = "concise"')
            with steps("model/list"):
                models = await client.list_models()
                check("fixture" in model_ids(models), f"models: {models}")
            with steps("chat_once (thread/start + turn)"):
                result = await client.chat_once("hello")
                check(bool(result.final_text), f"no agent text: {result}")
            with steps("thread/read"):
                read = await client.read_thread(result.thread_id)
                check(read["thread"]["id"] == result.thread_id, f"thread: {read}")
        finally:
            await client.close()

    asyncio.run(run())


# ---- codex-python-sdk (async) -------------------------------------------------------------------


def python_sdk(binary: str, steps: Callable[[str], Any]) -> None:
    from codex_python_sdk import AsyncCodexAgenticClient

    home, env = fresh_home()

    async def run() -> None:
        client = AsyncCodexAgenticClient(codex_command=binary, env=env, process_cwd=str(home))
        with steps("handshake"):
            await client.connect()
        try:
            with steps("config/read"):
                config = await client.config_read(cwd=str(home))
                check(config["config"].get("sandbox_mode") == "read-only", f"effective: {config['config']}")
            with steps("config/value/write"):
                await client.config_value_write("approval_policy", "never", merge_strategy="replace")
                check_written(home, 'approval_policy = "never"')
                config = await client.config_read()
                check(config["config"].get("approval_policy") == "never", f"after write: {config['config']}")
            with steps("model/list"):
                models = await client.model_list()
                check("fixture" in model_ids(models), f"models: {models}")
            with steps("responses_create (thread/start + turn)"):
                response = await client.responses_create(prompt="hello")
                check(bool(response.text), f"no agent text: {response}")
            with steps("command/exec"):
                answer = await client.command_exec(["echo", "sdk"], cwd=str(home))
                check(answer.get("exitCode") == 0 and "sdk" in answer.get("stdout", ""), f"exec: {answer}")
        finally:
            await client.close()

    asyncio.run(run())


# ---- codex-python-sdk-unofficial (async; response models generated from the reference schema) ----


def agent_sdk(binary: str, steps: Callable[[str], Any]) -> None:
    from codex_agent_sdk import AppServerClient, AppServerConfig, query
    from codex_agent_sdk.events import AgentTextDeltaEvent, TurnCompletedEvent
    from codex_agent_sdk.generated.stable import ConfigReadResponse, ModelListResponse

    home, env = fresh_home()
    server = AppServerConfig(codex_bin=binary, env=env, cwd=str(home))

    async def run() -> None:
        async with AppServerClient(server) as client:
            with steps("handshake"):
                await client.initialize()
            with steps("config/read (typed)"):
                config = await client.request(
                    "config/read", {"includeLayers": True}, response_model=ConfigReadResponse
                )
                check(config.config.model == "fixture", f"effective: {config.config}")
            with steps("model/list (typed)"):
                models = await client.request("model/list", {}, response_model=ModelListResponse)
                check("fixture" in [m.id for m in models.data], f"models: {models}")
        with steps("query (ephemeral thread + turn)"):
            text, completed = [], []
            async for event in query(prompt="hello", app_server=server):
                if isinstance(event, AgentTextDeltaEvent):
                    text.append(event.text_delta)
                if isinstance(event, TurnCompletedEvent):
                    completed.append(event)
            check(completed and "".join(text), f"text {text!r}, completed {completed}")

    asyncio.run(run())


SDKS: dict[str, Callable[[str, Callable[[str], Any]], None]] = {
    "codex-app-server-client": app_server_client,
    "codex-app-server-sdk": app_server_sdk,
    "codex-python-sdk": python_sdk,
    "codex-python-sdk-unofficial": agent_sdk,
}


class Steps:
    """Runs each named step, printing PASS or FAIL with the reason."""

    def __init__(self, sdk: str) -> None:
        self.sdk = sdk
        self.failed = 0
        self.passed = 0

    def __call__(self, name: str) -> "Steps._Step":
        return Steps._Step(self, name)

    class _Step:
        def __init__(self, steps: "Steps", name: str) -> None:
            self.steps, self.name = steps, name

        def __enter__(self) -> None:
            return None

        def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
            if error is None:
                self.steps.passed += 1
                print(f"PASS {self.steps.sdk}: {self.name}")
                return False
            self.steps.failed += 1
            print(f"FAIL {self.steps.sdk}: {self.name}: {type(error).__name__}: {error}")
            if not isinstance(error, Failure):
                traceback.print_exception(kind, error, trace, limit=4)
            raise Failure(f"{self.name} failed") from error


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or list(SDKS)
    passed = failed = 0
    for name in names:
        steps = Steps(name)
        try:
            SDKS[name](binary, steps)
        except Failure:
            pass
        except Exception as error:  # an SDK that cannot even start counts as a failure
            steps.failed += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}")
            traceback.print_exc(limit=4)
        passed += steps.passed
        failed += steps.failed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
