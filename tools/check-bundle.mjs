#!/usr/bin/env node
// Third-party check of an agentwire JSON Schema bundle with ajv (the library API, as a client
// author would use it):
//
//   node tools/check-bundle.mjs --bundle generated/schema/json/agentwire_app_server_protocol.schemas.json \
//                               --transcript ../shared/reference/transcripts/codex-0.171.0-stdio.jsonl
//
// 1. Adds the bundle under the id "bundle" and compiles every definition on its own through
//    `bundle#/definitions/<X>` (nested namespaces such as `mcp` are walked, not compiled).
// 2. Replays a wire transcript (JSONL of {session, dir, line}) and validates every message whose
//    method the bundle declares (`x-method` + `x-direction` envelopes) against its envelope.
//    The expected verdict comes from the transcript: a client request the reference server
//    answered with -32600 "Invalid request..." must be rejected, everything else accepted.
// 3. Prints a summary; exits 1 on any failure, or when fewer than MIN_CHECKED lines were checked.
//
// tools/check_bundle.py does the same with Python's jsonschema; keep the two in step.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const Ajv = require("ajv");

const MIN_CHECKED = 10;
const MAX_ERRORS_SHOWN = 6;
const MCP_NAMESPACE = "mcp";
const DIRECTIONS = ["clientRequest", "serverRequest", "serverNotification", "clientNotification"];

// Draft-07 keywords: an object under `definitions` that uses none of them (nor any `x-*`
// annotation) and whose members are all objects is a namespace (like `mcp`), not a schema.
const SCHEMA_KEYWORDS = new Set([
  "$id", "$schema", "$ref", "$comment", "title", "description", "default", "readOnly", "writeOnly",
  "examples", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
  "maxLength", "minLength", "pattern", "additionalItems", "items", "maxItems", "minItems",
  "uniqueItems", "contains", "maxProperties", "minProperties", "required", "additionalProperties",
  "definitions", "properties", "patternProperties", "dependencies", "propertyNames", "const",
  "enum", "type", "format", "contentMediaType", "contentEncoding", "if", "then", "else", "allOf",
  "anyOf", "oneOf", "not", "nullable", "deprecated",
]);
// Keywords that do not constrain anything: allowed next to `$ref` without ambiguity.
const ANNOTATIONS = new Set([
  "$comment", "title", "description", "default", "examples", "readOnly", "writeOnly", "deprecated",
  "$schema", "$id", "definitions",
]);

// Integer formats schemars emits for Rust integer types; checked for range, so a negative number
// in a `uint32` field is caught. Other formats are accepted without checking (as JSON Schema
// allows for unknown formats); both checkers treat formats identically.
const INT_FORMATS = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  int: [-(2 ** 63), 2 ** 63 - 1],
  uint8: [0, 2 ** 8 - 1],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, 2 ** 64 - 1],
  uint: [0, 2 ** 64 - 1],
};

function usage(msg) {
  if (msg) console.error(`error: ${msg}`);
  console.error("usage: node check-bundle.mjs --bundle PATH --transcript PATH");
  process.exit(2);
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    const [key, inline] = eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    if (key === "-h" || key === "--help") usage();
    if (key !== "--bundle" && key !== "--transcript") usage(`unknown argument ${a}`);
    const value = inline ?? argv[++i];
    if (value === undefined) usage(`${key} needs a value`);
    out[key.slice(2)] = value;
  }
  if (!out.bundle || !out.transcript) usage("both --bundle and --transcript are required");
  return out;
}

function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isNamespace(v) {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  if (keys.length === 0) return false;
  return keys.every((k) => !SCHEMA_KEYWORDS.has(k) && !k.startsWith("x-") && isPlainObject(v[k]));
}

// RFC 6901 token, then made safe for a URI fragment.
function pointerToken(name) {
  return encodeURIComponent(name.replace(/~/g, "~0").replace(/\//g, "~1"));
}

// Every definition as {name: "mcp/Foo", ref: "bundle#/definitions/mcp/Foo", schema}.
function listDefinitions(defs, prefix = "", tokens = [], namespaces = []) {
  const out = [];
  for (const [name, schema] of Object.entries(defs)) {
    // `mcp` is documented as a namespace (even when empty); other namespaces are recognised by shape.
    if ((prefix === "" && name === MCP_NAMESPACE && isPlainObject(schema)) || isNamespace(schema)) {
      namespaces.push(prefix + name);
      out.push(...listDefinitions(schema, `${prefix}${name}/`, [...tokens, pointerToken(name)], namespaces));
    } else {
      const ptr = [...tokens, pointerToken(name)].join("/");
      out.push({ name: prefix + name, ref: `bundle#/definitions/${ptr}`, schema });
    }
  }
  return out;
}

function collect(node, visit) {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, visit);
  } else if (isPlainObject(node)) {
    visit(node);
    for (const v of Object.values(node)) collect(v, visit);
  }
}

function formatErrors(errors) {
  const list = (errors ?? []).slice(0, MAX_ERRORS_SHOWN).map((e) => {
    const extra = e.keyword === "const" ? ` (${JSON.stringify(e.params.allowedValue)})`
      : e.keyword === "enum" ? ` (${JSON.stringify(e.params.allowedValues)})`
      : e.keyword === "additionalProperties" ? ` (${e.params.additionalProperty})` : "";
    return `${e.instancePath || "/"}: ${e.message}${extra}`;
  });
  if ((errors ?? []).length > MAX_ERRORS_SHOWN) list.push(`... ${errors.length - MAX_ERRORS_SHOWN} more`);
  return list.join("; ");
}

function short(text, n = 160) {
  return text.length > n ? `${text.slice(0, n)}...` : text;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const failures = [];
  const warnings = [];
  const fail = (msg) => {
    failures.push(msg);
    console.log(`FAIL ${msg}`);
  };

  // ---- the bundle -------------------------------------------------------------------------
  let bundle;
  try {
    bundle = JSON.parse(readFileSync(args.bundle, "utf8"));
  } catch (e) {
    console.error(`error: cannot read bundle ${args.bundle}: ${e.message}`);
    process.exit(1);
  }
  if (!isPlainObject(bundle) || !isPlainObject(bundle.definitions)) {
    console.error(`error: ${args.bundle} has no "definitions" object`);
    process.exit(1);
  }
  if (bundle.$schema !== "http://json-schema.org/draft-07/schema#") {
    fail(`bundle: $schema is ${JSON.stringify(bundle.$schema)}, expected the draft-07 URI`);
  }
  console.log(`bundle: ${args.bundle}`);
  console.log(`  x-protocol-version=${JSON.stringify(bundle["x-protocol-version"])} ` +
    `x-experimental-surface=${JSON.stringify(bundle["x-experimental-surface"])}`);

  const keywords = new Set();
  const formats = new Set();
  collect(bundle, (o) => {
    for (const [k, v] of Object.entries(o)) {
      if (k.startsWith("x-")) keywords.add(k);
      if (k === "format" && typeof v === "string") formats.add(v);
    }
  });

  // $ref with constraining siblings: draft-07 says the siblings are ignored, ajv applies them,
  // Python's jsonschema ignores them. Either way a third party may get a different answer.
  const refSiblings = [];
  collect(bundle, (o) => {
    if (typeof o.$ref !== "string") return;
    const extra = Object.keys(o).filter((k) => k !== "$ref" && !ANNOTATIONS.has(k) && !k.startsWith("x-"));
    if (extra.length) refSiblings.push(`${o.$ref} + ${extra.join(",")}`);
  });
  if (refSiblings.length) {
    warnings.push(`${refSiblings.length} schema(s) put constraints next to $ref (ignored in draft-07, ` +
      `applied by ajv), e.g. ${refSiblings.slice(0, 3).join(" | ")}`);
  }

  const ajvFormats = {};
  for (const f of formats) {
    const range = INT_FORMATS[f];
    ajvFormats[f] = range
      ? { type: "number", validate: (x) => Number.isInteger(x) && x >= range[0] && x <= range[1] }
      : true; // known to exist, not checked
  }
  const ajv = new Ajv({
    strict: true, // unknown keywords are errors; x-* are registered below as annotations
    strictTypes: false, // union types and tuples are fine in draft-07
    strictTuples: false,
    strictRequired: false, // `required` naming a property declared elsewhere (allOf, flatten) is legal
    allErrors: true,
    validateFormats: true,
    formats: ajvFormats,
  });
  for (const k of keywords) ajv.addKeyword(k);
  console.log(`  formats: ${[...formats].sort().join(", ") || "(none)"}; range-checked: ` +
    `${[...formats].filter((f) => INT_FORMATS[f]).sort().join(", ") || "(none)"}`);
  console.log(`  annotation keywords: ${[...keywords].sort().join(", ") || "(none)"}`);

  try {
    ajv.addSchema(bundle, "bundle");
  } catch (e) {
    console.error(`error: ajv rejected the bundle: ${e.message}`);
    process.exit(1);
  }

  const namespaces = [];
  const definitions = listDefinitions(bundle.definitions, "", [], namespaces);
  const validators = new Map();
  let compileFailures = 0;
  for (const d of definitions) {
    try {
      const v = ajv.getSchema(d.ref);
      if (typeof v !== "function") throw new Error("not found");
      validators.set(d.name, v);
    } catch (e) {
      compileFailures++;
      fail(`compile ${d.name} (${d.ref}): ${short(e.message, 400)}`);
    }
  }
  if (isPlainObject(bundle.definitions[MCP_NAMESPACE]) && Object.keys(bundle.definitions[MCP_NAMESPACE]).length === 0) {
    warnings.push(`the ${MCP_NAMESPACE} namespace is empty`);
  }
  console.log(`  compiled ${validators.size}/${definitions.length} definitions` +
    (namespaces.length ? ` (namespaces: ${namespaces.join(", ")})` : ""));

  // ---- the declared methods --------------------------------------------------------------
  // method tables: direction -> method -> {request|notification, response}
  const table = Object.fromEntries(DIRECTIONS.map((d) => [d, new Map()]));
  let declaredCount = 0;
  for (const [name, schema] of Object.entries(bundle.definitions)) {
    if (!isPlainObject(schema) || !("x-method" in schema || "x-direction" in schema)) continue;
    const method = schema["x-method"];
    const direction = schema["x-direction"];
    if (typeof method !== "string" || !DIRECTIONS.includes(direction)) {
      fail(`bundle: ${name} has x-method=${JSON.stringify(method)} x-direction=${JSON.stringify(direction)}`);
      continue;
    }
    const isRequest = direction.endsWith("Request");
    let role;
    if (name.endsWith("ResponseEnvelope")) role = "response";
    else if (name.endsWith("RequestEnvelope")) role = "request";
    else if (name.endsWith("NotificationEnvelope")) role = "notification";
    else role = schema.properties && "result" in schema.properties ? "response" : isRequest ? "request" : "notification";
    if (isRequest === (role === "notification")) {
      fail(`bundle: ${name} is a ${role} envelope but x-direction is ${direction}`);
      continue;
    }
    const entry = table[direction].get(method) ?? {};
    if (entry[role]) {
      fail(`bundle: ${direction} ${method} has two ${role} envelopes: ${entry[role]} and ${name}`);
      continue;
    }
    entry[role] = name;
    table[direction].set(method, entry);
    declaredCount++;
    if (role !== "response") {
      const m = schema.properties?.method;
      const declared = m?.const ?? (Array.isArray(m?.enum) && m.enum.length === 1 ? m.enum[0] : undefined);
      if (declared !== method) fail(`bundle: ${name} x-method ${method} but properties.method allows ${JSON.stringify(m)}`);
    }
  }
  for (const direction of DIRECTIONS) {
    for (const [method, entry] of table[direction]) {
      const isRequest = direction.endsWith("Request");
      if (isRequest && !entry.request) fail(`bundle: ${direction} ${method} has a response envelope but no request envelope`);
      if (isRequest && !entry.response) fail(`bundle: ${direction} ${method} has no ResponseEnvelope`);
    }
  }
  // Methods declared inside a namespace (e.g. mcp) belong to another surface: not replayed here.
  let nestedDeclared = 0;
  for (const d of definitions) if (d.name.includes("/") && isPlainObject(d.schema) && "x-method" in d.schema) nestedDeclared++;
  console.log(`  declared: ${DIRECTIONS.map((d) => `${table[d].size} ${d}`).join(", ")} (${declaredCount} envelopes)` +
    (nestedDeclared ? `; ${nestedDeclared} more inside namespaces, not replayed` : ""));
  if (!validators.has("JSONRPCError")) fail("bundle: no JSONRPCError definition");

  // ---- the transcript --------------------------------------------------------------------
  let text;
  try {
    text = readFileSync(args.transcript, "utf8");
  } catch (e) {
    console.error(`error: cannot read transcript ${args.transcript}: ${e.message}`);
    process.exit(1);
  }
  const records = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    let rec;
    try {
      rec = JSON.parse(raw);
    } catch (e) {
      console.error(`error: ${args.transcript}:${i + 1} is not a transcript record: ${e.message}`);
      process.exit(1);
    }
    if (!isPlainObject(rec) || typeof rec.session !== "string" || typeof rec.line !== "string" ||
        (rec.dir !== "client->server" && rec.dir !== "server->client")) {
      console.error(`error: ${args.transcript}:${i + 1} is not a {session, dir, line} record`);
      process.exit(1);
    }
    let msg;
    let json = true;
    try {
      msg = JSON.parse(rec.line);
    } catch {
      json = false;
    }
    records.push({ lineNo: i + 1, session: rec.session, dir: rec.dir, raw: rec.line, json, msg });
  });
  console.log(`transcript: ${args.transcript} (${records.length} lines)`);

  // Pair each request with its answer (same session, same id, opposite direction, next answer).
  const key = (r) => `${r.session}\u0000${r.dir}\u0000${JSON.stringify(r.msg.id)}`;
  const pending = new Map();
  for (const r of records) {
    if (!r.json || !isPlainObject(r.msg) || !("id" in r.msg)) continue;
    if (typeof r.msg.method === "string") {
      pending.set(key(r), r);
    } else if ("result" in r.msg || "error" in r.msg) {
      const other = r.dir === "client->server" ? "server->client" : "client->server";
      const k = `${r.session}\u0000${other}\u0000${JSON.stringify(r.msg.id)}`;
      const req = pending.get(k);
      if (req) {
        req.answer = r;
        r.request = req;
        pending.delete(k);
      }
    }
  }

  const counts = { accepted: 0, rejected: 0, failed: 0 };
  const skipped = { "not JSON": 0, "not a JSON-RPC message": 0, "undeclared method": 0, "answer to an undeclared or unknown request": 0 };
  const skippedMethods = new Set();

  const check = (r, defName, what, expectReject, reason) => {
    const v = validators.get(defName);
    const where = `[${r.session}] line ${r.lineNo} ${r.dir} ${what} (${defName})`;
    if (!v) {
      counts.failed++;
      fail(`${where}: definition ${defName} missing or did not compile`);
      return;
    }
    const ok = v(r.msg);
    if (ok && !expectReject) counts.accepted++;
    else if (!ok && expectReject) counts.rejected++;
    else {
      counts.failed++;
      if (ok) fail(`${where}: schema ACCEPTED a message the reference server rejected (${reason})\n      message: ${short(r.raw, 300)}`);
      else fail(`${where}: schema REJECTED a message expected to be valid: ${formatErrors(v.errors)}\n      message: ${short(r.raw, 300)}`);
    }
  };

  for (const r of records) {
    if (!r.json) {
      skipped["not JSON"]++;
      continue;
    }
    const m = r.msg;
    if (!isPlainObject(m)) {
      skipped["not a JSON-RPC message"]++;
      continue;
    }
    const fromClient = r.dir === "client->server";
    if (typeof m.method === "string") {
      const [reqDir, noteDir] = fromClient ? ["clientRequest", "clientNotification"] : ["serverRequest", "serverNotification"];
      const asRequest = table[reqDir].get(m.method);
      const asNote = table[noteDir].get(m.method);
      // Declared kind decides; only if a method were declared as both does the id break the tie.
      const useRequest = asRequest && (!asNote || "id" in m);
      if (useRequest && asRequest.request) {
        const a = r.answer?.msg;
        const invalid = fromClient && isPlainObject(a?.error) && a.error.code === -32600 &&
          typeof a.error.message === "string" && a.error.message.startsWith("Invalid request");
        check(r, asRequest.request, m.method, invalid, invalid ? short(a.error.message) : "");
      } else if (asNote) {
        check(r, asNote.notification, m.method, false, "");
      } else {
        skipped["undeclared method"]++;
        skippedMethods.add(`${r.dir} ${m.method}`);
      }
    } else if ("id" in m && ("result" in m || "error" in m)) {
      const req = r.request;
      const reqDir = fromClient ? "serverRequest" : "clientRequest";
      const entry = req ? table[reqDir].get(req.msg.method) : undefined;
      if ("error" in m) {
        check(r, "JSONRPCError", `error answer to ${req ? req.msg.method : "unpaired id " + JSON.stringify(m.id)}`, false, "");
      } else if (entry?.response) {
        check(r, entry.response, `result of ${req.msg.method}`, false, "");
      } else {
        skipped["answer to an undeclared or unknown request"]++;
      }
    } else {
      skipped["not a JSON-RPC message"]++;
    }
  }

  // ---- summary ---------------------------------------------------------------------------
  const checked = counts.accepted + counts.rejected + counts.failed;
  const skippedTotal = Object.values(skipped).reduce((a, b) => a + b, 0);
  for (const w of warnings) console.log(`WARN ${w}`);
  if (skippedMethods.size) console.log(`skipped methods: ${[...skippedMethods].sort().join(", ")}`);
  console.log(`skipped by reason: ${Object.entries(skipped).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`);
  console.log(`summary (ajv ${require("ajv/package.json").version}): compiled ${validators.size} definitions` +
    (compileFailures ? ` (${compileFailures} FAILED)` : "") +
    `; checked ${checked} lines: ${counts.accepted} accepted, ${counts.rejected} rejected as expected, ` +
    `${skippedTotal} skipped, ${counts.failed} failed`);
  let status = 0;
  if (failures.length) {
    console.log(`RESULT: FAILED (${failures.length} problem(s))`);
    status = 1;
  }
  if (checked < MIN_CHECKED) {
    console.log(`RESULT: FAILED: only ${checked} line(s) checked, at least ${MIN_CHECKED} required`);
    status = 1;
  }
  if (status === 0) console.log("RESULT: OK");
  process.exitCode = status; // let stdout drain instead of process.exit()
}

main();
