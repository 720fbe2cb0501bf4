"""Parses transcript lines with the Python dataclasses quicktype generates from a flat bundle.

quicktype's `--just-types` output has no decoding code, so this small typed loader builds the
dataclasses from JSON by their annotations (str/int/float/bool/None, Enum, list[X],
dict[str, X], X | Y, Any, nested dataclasses); wire names map to quicktype's snake_case field
names by comparing them without `_` and case. Unknown members are ignored (as zod does); a
missing required member, a wrong JSON type or an enum value the type does not list fail.

Every server message of each transcript is parsed: server requests and notifications with the envelope class
of their method (from meta.json), answers with the response envelope of the request they
answer (paired by session and id; client lines are read only for that pairing). Methods meta.json does not declare, and error answers, are
counted and skipped. Then planted bad messages, made from real ones, must be rejected.

usage: check_python.py MODULE.py META_JSON TRANSCRIPT...
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import importlib.util
import json
import sys
import types
import typing
from typing import Any


class Invalid(Exception):
    pass


def _key(name: str) -> str:
    return name.replace("_", "").lower()


def load(tp: Any, value: Any, where: str) -> Any:
    if tp is Any:
        return value
    if tp is type(None):
        if value is not None:
            raise Invalid(f"{where}: expected null")
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        errors = []
        for option in typing.get_args(tp):
            try:
                return load(option, value, where)
            except Invalid as e:
                errors.append(str(e))
        raise Invalid(f"{where}: matches no branch of {tp} ({'; '.join(errors[:3])})")
    if origin is list:
        if not isinstance(value, list):
            raise Invalid(f"{where}: expected an array")
        (item,) = typing.get_args(tp)
        return [load(item, v, f"{where}/{i}") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise Invalid(f"{where}: expected an object")
        _, item = typing.get_args(tp)
        return {k: load(item, v, f"{where}/{k}") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise Invalid(f"{where}: expected a boolean")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"{where}: expected an integer")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Invalid(f"{where}: expected a number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise Invalid(f"{where}: expected a string")
        return value
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise Invalid(f"{where}: {value!r} is not a value of {tp.__name__}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise Invalid(f"{where}: expected an object for {tp.__name__}")
        hints = typing.get_type_hints(tp)
        by_key = {_key(k): k for k in value}
        args: dict[str, Any] = {}
        for field in dataclasses.fields(tp):
            wire = by_key.get(_key(field.name))
            if wire is None:
                no_default = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
                if no_default:
                    raise Invalid(f"{where}: {tp.__name__} requires `{field.name}`")
                continue
            args[field.name] = load(hints[field.name], value[wire], f"{where}/{wire}")
        return tp(**args)
    raise Invalid(f"{where}: cannot load type {tp!r}")


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("bindings", sys.argv[1])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bindings"] = module
    spec.loader.exec_module(module)
    classes = {_key(name): obj for name, obj in vars(module).items() if isinstance(obj, type)}
    meta = json.load(open(sys.argv[2], encoding="utf-8"))
    by_method = {m["method"]: m for m in meta["methods"]}

    def cls(pointer: str) -> Any:
        name = pointer.rsplit("/", 1)[1]
        found = classes.get(_key(name))
        if found is None:
            raise SystemExit(f"quicktype emitted no class for {name}")
        return found

    checked = skipped = failures = 0
    samples: list[tuple[Any, dict[str, Any]]] = []
    for transcript in sys.argv[3:]:
        pending: dict[tuple[str, str], str] = {}
        for n, text in enumerate(open(transcript, encoding="utf-8").read().splitlines(), 1):
            if not text.strip():
                continue
            record = json.loads(text)
            try:
                message = json.loads(record["line"])
            except (ValueError, TypeError):
                continue  # the malformed input a transcript sends on purpose
            if not isinstance(message, dict):
                continue
            session = json.dumps(record.get("session"))
            method = message.get("method")
            ident = json.dumps(message.get("id"))
            if record.get("dir") != "server->client":
                # client lines only pair answers with requests: the client side of the
                # reference transcripts sends bad input on purpose
                if isinstance(method, str) and "id" in message:
                    pending[(session, ident)] = method
                continue
            if isinstance(method, str):
                entry = by_method.get(method)
                target = entry and entry["envelope"]
            else:
                entry = by_method.get(pending.pop((session, ident), ""))
                target = entry and "result" in message and entry.get("responseEnvelope")
            if not target:
                skipped += 1
                continue
            checked += 1
            try:
                load(cls(target), message, f"{transcript}:{n}")
                if len(samples) < 40 and isinstance(message.get("params") or message.get("result"), dict):
                    samples.append((cls(target), message))
            except Invalid as e:
                failures += 1
                print(f"python: {e}", file=sys.stderr)
    rejected = 0
    for target, message in samples:
        bad = copy.deepcopy(message)
        bad["params" if "params" in bad else "result"] = "planted"
        try:
            load(target, bad, "planted")
            print(f"python: planted bad message accepted by {target.__name__}: {bad}", file=sys.stderr)
            failures += 1
        except Invalid:
            rejected += 1
    print(f"python: {checked} messages parsed, {skipped} skipped (undeclared methods, errors), "
          f"{rejected} planted bad messages rejected, {failures} failures")
    return 1 if failures or checked == 0 or rejected == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
