#!/usr/bin/env python3
"""Third-party check of an agentwire JSON Schema bundle with Python's `jsonschema` (draft-07).

    .tools/venv/bin/python tools/check_bundle.py \
        --bundle generated/schema/json/agentwire_app_server_protocol.schemas.json \
        --transcript ../shared/reference/transcripts/codex-0.171.0-stdio.jsonl

1. Checks the bundle against the draft-07 meta-schema, then builds a validator for every
   definition on its own through `<bundle uri>#/definitions/<X>` (nested namespaces such as `mcp`
   are walked, not treated as schemas) and resolves every `$ref` reachable from it, which is what
   compiling means for a lazily-resolving validator.
2. Replays a wire transcript (JSONL of {session, dir, line}) and validates every message whose
   method the bundle declares (`x-method` + `x-direction` envelopes) against its envelope.
   The expected verdict comes from the transcript: a client request the reference server
   answered with -32600 "Invalid request..." must be rejected, everything else accepted.
3. Prints a summary; exits 1 on any failure, or when fewer than MIN_CHECKED lines were checked.

tools/check-bundle.mjs does the same with ajv; keep the two in step.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import version as dist_version
from urllib.parse import quote

from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import SchemaError
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT7

MIN_CHECKED = 10
MAX_ERRORS_SHOWN = 6
MCP_NAMESPACE = "mcp"
DIRECTIONS = ("clientRequest", "serverRequest", "serverNotification", "clientNotification")
BUNDLE_URI = "urn:agentwire:bundle"

SCHEMA_KEYWORDS = {
    "$id", "$schema", "$ref", "$comment", "title", "description", "default", "readOnly", "writeOnly",
    "examples", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "additionalItems", "items", "maxItems", "minItems",
    "uniqueItems", "contains", "maxProperties", "minProperties", "required", "additionalProperties",
    "definitions", "properties", "patternProperties", "dependencies", "propertyNames", "const",
    "enum", "type", "format", "contentMediaType", "contentEncoding", "if", "then", "else", "allOf",
    "anyOf", "oneOf", "not", "nullable", "deprecated",
}
ANNOTATIONS = {
    "$comment", "title", "description", "default", "examples", "readOnly", "writeOnly", "deprecated",
    "$schema", "$id", "definitions",
}
# Same table as check-bundle.mjs: integer formats are range-checked, other formats pass.
INT_FORMATS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "int": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
}

failures: list[str] = []


def fail(msg: str) -> None:
    failures.append(msg)
    print(f"FAIL {msg}", flush=True)


def is_namespace(value) -> bool:
    if not isinstance(value, dict) or not value:
        return False
    return all(
        k not in SCHEMA_KEYWORDS and not k.startswith("x-") and isinstance(v, dict) for k, v in value.items()
    )


def pointer_token(name: str) -> str:
    return quote(name.replace("~", "~0").replace("/", "~1"), safe="")


def list_definitions(defs: dict, prefix="", tokens=(), namespaces=None):
    """Every definition as (name like "mcp/Foo", fragment pointer, schema)."""
    out = []
    for name, schema in defs.items():
        # `mcp` is documented as a namespace (even when empty); other namespaces are recognised by shape.
        if (not prefix and name == MCP_NAMESPACE and isinstance(schema, dict)) or is_namespace(schema):
            namespaces.append(prefix + name)
            out += list_definitions(schema, f"{prefix}{name}/", (*tokens, pointer_token(name)), namespaces)
        else:
            out.append((prefix + name, "/definitions/" + "/".join((*tokens, pointer_token(name))), schema))
    return out


def walk(node, visit):
    if isinstance(node, list):
        for item in node:
            walk(item, visit)
    elif isinstance(node, dict):
        visit(node)
        for v in node.values():
            walk(v, visit)


def int_format(lo: int, hi: int):
    def check(x) -> bool:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return True  # formats only constrain the type they are about
        return float(x).is_integer() and lo <= x <= hi

    return check


def short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[:n] + "..."


def instance_path(err) -> str:
    return "/" + "/".join(str(p) for p in err.absolute_path) if err.absolute_path else "/"


def format_errors(errors) -> str:
    errors = sorted(errors, key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    shown = [f"{instance_path(e)}: {short(e.message, 200)}" for e in errors[:MAX_ERRORS_SHOWN]]
    if len(errors) > MAX_ERRORS_SHOWN:
        shown.append(f"... {len(errors) - MAX_ERRORS_SHOWN} more")
    return "; ".join(shown)


def reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str):
    return json.loads(text, parse_constant=reject_constant)


def resolve_all_refs(resolver, schema, good: set) -> None:
    """Resolve every $ref reachable from `schema` (following them), raising on a dangling one.

    `good` holds ref targets whose whole closure already resolved; they are not walked again."""
    seen: set = set()
    stack = [(resolver, schema)]
    while stack:
        res, node = stack.pop()
        if isinstance(node, list):
            stack.extend((res, item) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("$id"), str):
            res = res.in_subresource(DRAFT7.create_resource(node))
        ref = node.get("$ref")
        if isinstance(ref, str):
            resolved = res.lookup(ref)  # raises Unresolvable
            key = id(resolved.contents)
            if key not in seen and key not in good:
                seen.add(key)
                stack.append((resolved.resolver, resolved.contents))
        for k, v in node.items():
            if k in ("enum", "const", "default", "examples"):
                continue  # instance data, not schemas
            if isinstance(v, (dict, list)):
                stack.append((res, v))
    good.update(seen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--transcript", required=True)
    args = ap.parse_args()

    # ---- the bundle -------------------------------------------------------------------------
    try:
        with open(args.bundle, encoding="utf-8") as f:
            bundle = loads_strict(f.read())
    except (OSError, ValueError) as e:
        print(f"error: cannot read bundle {args.bundle}: {e}", file=sys.stderr)
        return 1
    if not isinstance(bundle, dict) or not isinstance(bundle.get("definitions"), dict):
        print(f'error: {args.bundle} has no "definitions" object', file=sys.stderr)
        return 1
    if bundle.get("$schema") != "http://json-schema.org/draft-07/schema#":
        fail(f"bundle: $schema is {json.dumps(bundle.get('$schema'))}, expected the draft-07 URI")
    print(f"bundle: {args.bundle}")
    print(
        f"  x-protocol-version={json.dumps(bundle.get('x-protocol-version'))} "
        f"x-experimental-surface={json.dumps(bundle.get('x-experimental-surface'))}"
    )

    formats: set[str] = set()
    keywords: set[str] = set()

    def see(o: dict) -> None:
        for k, v in o.items():
            if k.startswith("x-"):
                keywords.add(k)
            if k == "format" and isinstance(v, str):
                formats.add(v)

    walk(bundle, see)

    ref_siblings: list[str] = []

    def see_ref(o: dict) -> None:
        if isinstance(o.get("$ref"), str):
            extra = [k for k in o if k != "$ref" and k not in ANNOTATIONS and not k.startswith("x-")]
            if extra:
                ref_siblings.append(f"{o['$ref']} + {','.join(extra)}")

    walk(bundle, see_ref)
    warnings = []
    if ref_siblings:
        warnings.append(
            f"{len(ref_siblings)} schema(s) put constraints next to $ref (ignored in draft-07, applied by ajv), "
            f"e.g. {' | '.join(ref_siblings[:3])}"
        )

    format_checker = FormatChecker(formats=())
    for name in formats:
        if name in INT_FORMATS:
            format_checker.checks(name)(int_format(*INT_FORMATS[name]))
    print(
        f"  formats: {', '.join(sorted(formats)) or '(none)'}; range-checked: "
        f"{', '.join(sorted(f for f in formats if f in INT_FORMATS)) or '(none)'}"
    )
    print(f"  annotation keywords: {', '.join(sorted(keywords)) or '(none)'}")

    try:
        Draft7Validator.check_schema(bundle)
    except SchemaError as e:
        print(f"error: the bundle is not a valid draft-07 schema at {'/'.join(map(str, e.absolute_path))}: {e.message}",
              file=sys.stderr)
        return 1

    # Registered under a fixed URI (like ajv's "bundle" key) and under its own $id, if it has one.
    resource = DRAFT7.create_resource(bundle)
    registry = Registry().with_resource(BUNDLE_URI, resource)
    if resource.id():
        registry = registry.with_resource(resource.id(), resource)
    resolver = registry.resolver(base_uri=BUNDLE_URI)
    namespaces: list[str] = []
    definitions = list_definitions(bundle["definitions"], namespaces=namespaces)
    validators: dict[str, Draft7Validator] = {}
    compile_failures = 0
    good: set = set()
    for name, pointer, schema in definitions:
        ref = f"{BUNDLE_URI}#{pointer}"
        try:
            resolved = resolver.lookup(ref)
            if resolved.contents is not schema:
                raise Unresolvable(ref)
            Draft7Validator.check_schema(schema)
            resolve_all_refs(resolved.resolver, schema, good)
            validators[name] = Draft7Validator({"$ref": ref}, registry=registry, format_checker=format_checker)
        except Unresolvable as e:
            compile_failures += 1
            fail(f"compile {name} ({ref}): {type(e).__name__}: cannot resolve reference {getattr(e, 'ref', '?')!r}")
        except SchemaError as e:
            compile_failures += 1
            fail(f"compile {name} ({ref}): invalid schema at {'/'.join(map(str, e.absolute_path))}: {short(e.message, 300)}")
    if isinstance(bundle["definitions"].get(MCP_NAMESPACE), dict) and not bundle["definitions"][MCP_NAMESPACE]:
        warnings.append(f"the {MCP_NAMESPACE} namespace is empty")
    ns = f" (namespaces: {', '.join(namespaces)})" if namespaces else ""
    print(f"  compiled {len(validators)}/{len(definitions)} definitions{ns}")

    # ---- the declared methods --------------------------------------------------------------
    table: dict[str, dict[str, dict[str, str]]] = {d: {} for d in DIRECTIONS}
    declared_count = 0
    for name, schema in bundle["definitions"].items():
        if not isinstance(schema, dict) or not ("x-method" in schema or "x-direction" in schema):
            continue
        method, direction = schema.get("x-method"), schema.get("x-direction")
        if not isinstance(method, str) or direction not in DIRECTIONS:
            fail(f"bundle: {name} has x-method={json.dumps(method)} x-direction={json.dumps(direction)}")
            continue
        is_request = direction.endswith("Request")
        if name.endswith("ResponseEnvelope"):
            role = "response"
        elif name.endswith("RequestEnvelope"):
            role = "request"
        elif name.endswith("NotificationEnvelope"):
            role = "notification"
        elif isinstance(schema.get("properties"), dict) and "result" in schema["properties"]:
            role = "response"
        else:
            role = "request" if is_request else "notification"
        if is_request == (role == "notification"):
            fail(f"bundle: {name} is a {role} envelope but x-direction is {direction}")
            continue
        entry = table[direction].setdefault(method, {})
        if role in entry:
            fail(f"bundle: {direction} {method} has two {role} envelopes: {entry[role]} and {name}")
            continue
        entry[role] = name
        declared_count += 1
        if role != "response":
            m = (schema.get("properties") or {}).get("method")
            declared = None
            if isinstance(m, dict):
                if "const" in m:
                    declared = m["const"]
                elif isinstance(m.get("enum"), list) and len(m["enum"]) == 1:
                    declared = m["enum"][0]
            if declared != method:
                fail(f"bundle: {name} x-method {method} but properties.method allows {json.dumps(m)}")
    for direction in DIRECTIONS:
        for method, entry in table[direction].items():
            if direction.endswith("Request"):
                if "request" not in entry:
                    fail(f"bundle: {direction} {method} has a response envelope but no request envelope")
                if "response" not in entry:
                    fail(f"bundle: {direction} {method} has no ResponseEnvelope")
    nested_declared = sum(
        1 for name, _, schema in definitions if "/" in name and isinstance(schema, dict) and "x-method" in schema
    )
    print(
        "  declared: "
        + ", ".join(f"{len(table[d])} {d}" for d in DIRECTIONS)
        + f" ({declared_count} envelopes)"
        + (f"; {nested_declared} more inside namespaces, not replayed" if nested_declared else "")
    )
    if "JSONRPCError" not in validators:
        fail("bundle: no JSONRPCError definition")

    # ---- the transcript --------------------------------------------------------------------
    try:
        with open(args.transcript, encoding="utf-8") as f:
            raw_lines = f.read().split("\n")
    except OSError as e:
        print(f"error: cannot read transcript {args.transcript}: {e}", file=sys.stderr)
        return 1
    records = []
    for i, raw in enumerate(raw_lines):
        if raw.strip() == "":
            continue
        try:
            rec = loads_strict(raw)
        except ValueError as e:
            print(f"error: {args.transcript}:{i + 1} is not a transcript record: {e}", file=sys.stderr)
            return 1
        if (
            not isinstance(rec, dict)
            or not isinstance(rec.get("session"), str)
            or not isinstance(rec.get("line"), str)
            or rec.get("dir") not in ("client->server", "server->client")
        ):
            print(f"error: {args.transcript}:{i + 1} is not a {{session, dir, line}} record", file=sys.stderr)
            return 1
        r = {"lineNo": i + 1, "session": rec["session"], "dir": rec["dir"], "raw": rec["line"], "json": True}
        try:
            r["msg"] = loads_strict(rec["line"])
        except ValueError:
            r["json"] = False
        records.append(r)
    print(f"transcript: {args.transcript} ({len(records)} lines)")

    def id_key(session, direction, msg_id):
        # json.dumps keeps 1 and "1" apart, as JSON-RPC does.
        return (session, direction, json.dumps(msg_id, sort_keys=True))

    pending = {}
    for r in records:
        m = r.get("msg")
        if not r["json"] or not isinstance(m, dict) or "id" not in m:
            continue
        if isinstance(m.get("method"), str):
            pending[id_key(r["session"], r["dir"], m["id"])] = r
        elif "result" in m or "error" in m:
            other = "server->client" if r["dir"] == "client->server" else "client->server"
            req = pending.pop(id_key(r["session"], other, m["id"]), None)
            if req is not None:
                req["answer"] = r
                r["request"] = req

    counts = {"accepted": 0, "rejected": 0, "failed": 0}
    skipped = {
        "not JSON": 0,
        "not a JSON-RPC message": 0,
        "undeclared method": 0,
        "answer to an undeclared or unknown request": 0,
    }
    skipped_methods: set[str] = set()

    def check(r, def_name, what, expect_reject, reason):
        where = f"[{r['session']}] line {r['lineNo']} {r['dir']} {what} ({def_name})"
        v = validators.get(def_name)
        if v is None:
            counts["failed"] += 1
            fail(f"{where}: definition {def_name} missing or did not compile")
            return
        errors = list(v.iter_errors(r["msg"]))
        ok = not errors
        if ok and not expect_reject:
            counts["accepted"] += 1
        elif not ok and expect_reject:
            counts["rejected"] += 1
        else:
            counts["failed"] += 1
            if ok:
                fail(f"{where}: schema ACCEPTED a message the reference server rejected ({reason})\n"
                     f"      message: {short(r['raw'], 300)}")
            else:
                fail(f"{where}: schema REJECTED a message expected to be valid: {format_errors(errors)}\n"
                     f"      message: {short(r['raw'], 300)}")

    for r in records:
        if not r["json"]:
            skipped["not JSON"] += 1
            continue
        m = r["msg"]
        if not isinstance(m, dict):
            skipped["not a JSON-RPC message"] += 1
            continue
        from_client = r["dir"] == "client->server"
        if isinstance(m.get("method"), str):
            req_dir, note_dir = ("clientRequest", "clientNotification") if from_client else (
                "serverRequest", "serverNotification")
            as_request = table[req_dir].get(m["method"])
            as_note = table[note_dir].get(m["method"])
            use_request = as_request is not None and (as_note is None or "id" in m)
            if use_request and "request" in as_request:
                a = (r.get("answer") or {}).get("msg")
                err = a.get("error") if isinstance(a, dict) else None
                invalid = (
                    from_client
                    and isinstance(err, dict)
                    and err.get("code") == -32600
                    and not isinstance(err.get("code"), bool)
                    and isinstance(err.get("message"), str)
                    and err["message"].startswith("Invalid request")
                )
                check(r, as_request["request"], m["method"], invalid, short(err["message"]) if invalid else "")
            elif as_note is not None:
                check(r, as_note["notification"], m["method"], False, "")
            else:
                skipped["undeclared method"] += 1
                skipped_methods.add(f"{r['dir']} {m['method']}")
        elif "id" in m and ("result" in m or "error" in m):
            req = r.get("request")
            req_dir = "serverRequest" if from_client else "clientRequest"
            entry = table[req_dir].get(req["msg"]["method"]) if req else None
            if "error" in m:
                what = f"error answer to {req['msg']['method'] if req else 'unpaired id ' + json.dumps(m['id'])}"
                check(r, "JSONRPCError", what, False, "")
            elif entry and "response" in entry:
                check(r, entry["response"], f"result of {req['msg']['method']}", False, "")
            else:
                skipped["answer to an undeclared or unknown request"] += 1
        else:
            skipped["not a JSON-RPC message"] += 1

    # ---- summary ---------------------------------------------------------------------------
    checked = counts["accepted"] + counts["rejected"] + counts["failed"]
    skipped_total = sum(skipped.values())
    for w in warnings:
        print(f"WARN {w}")
    if skipped_methods:
        print(f"skipped methods: {', '.join(sorted(skipped_methods))}")
    print("skipped by reason: " + (", ".join(f"{k} {n}" for k, n in skipped.items() if n) or "none"))
    print(
        f"summary (jsonschema {dist_version('jsonschema')}): compiled {len(validators)} definitions"
        + (f" ({compile_failures} FAILED)" if compile_failures else "")
        + f"; checked {checked} lines: {counts['accepted']} accepted, {counts['rejected']} rejected as expected, "
        f"{skipped_total} skipped, {counts['failed']} failed"
    )
    status = 0
    if failures:
        print(f"RESULT: FAILED ({len(failures)} problem(s))")
        status = 1
    if checked < MIN_CHECKED:
        print(f"RESULT: FAILED: only {checked} line(s) checked, at least {MIN_CHECKED} required")
        status = 1
    if status == 0:
        print("RESULT: OK")
    return status


if __name__ == "__main__":
    sys.exit(main())
