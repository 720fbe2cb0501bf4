// Parses every server message of JSON Lines transcripts (`{"session", "dir", "line"}`, as
// `agentwire app-server --record` writes them) with the zod validators of tools/zod/generate.mjs:
// notifications with ServerNotification, server requests with ServerRequest, answers with the
// response envelope of the request they answer (paired by session and id, looked up in
// meta.json), error answers with JSONRPCError. Methods the bundle does not declare are counted
// and skipped (the reference transcripts use some agentwire does not serve). Then planted bad
// messages, made from real ones, must be rejected.
//
// usage: node check.mjs --validators FILE.mjs --meta META_JSON TRANSCRIPT...
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const { values, positionals } = parseArgs({
  options: { validators: { type: "string" }, meta: { type: "string" } },
  allowPositionals: true,
});
if (!values.validators || !values.meta || positionals.length === 0) {
  console.error("usage: check.mjs --validators FILE.mjs --meta META_JSON TRANSCRIPT...");
  process.exit(2);
}
const zod = await import(pathToFileURL(resolve(values.validators)).href);
const meta = JSON.parse(readFileSync(values.meta, "utf8"));
const byMethod = new Map(meta.methods.map((m) => [m.method, m]));
const definition = (pointer) => zod[pointer.replace("#/definitions/", "")];

let failures = 0;
let checked = 0;
let skipped = 0;
const samples = { notification: null, response: null };
for (const transcript of positionals) {
  const pending = new Map();
  const lines = readFileSync(transcript, "utf8").split("\n").filter((l) => l.trim() !== "");
  for (const [n, text] of lines.entries()) {
    const record = JSON.parse(text);
    let message;
    try {
      message = JSON.parse(record.line);
    } catch {
      continue; // not JSON: the transcript's deliberate garbage
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) continue;
    const where = `${transcript}:${n + 1}`;
    if (record.dir === "client->server") {
      if (message.method !== undefined && message.id !== undefined) {
        pending.set(`${record.session}/${JSON.stringify(message.id)}`, message.method);
      }
      continue;
    }
    let validator;
    let label;
    if (message.method !== undefined) {
      const known = byMethod.get(message.method);
      if (!known) {
        skipped += 1;
        continue;
      }
      validator = message.id !== undefined ? zod.ServerRequest : zod.ServerNotification;
      label = message.method;
      samples.notification ??= message.id === undefined ? message : null;
    } else if (message.error !== undefined) {
      validator = zod.JSONRPCError;
      label = "error";
    } else {
      const method = pending.get(`${record.session}/${JSON.stringify(message.id)}`);
      const known = method && byMethod.get(method);
      if (!known || !known.responseEnvelope) {
        skipped += 1;
        continue;
      }
      validator = definition(known.responseEnvelope);
      label = `${method} result`;
      samples.response ??= { method, message };
    }
    checked += 1;
    const verdict = validator.safeParse(message);
    if (!verdict.success) {
      failures += 1;
      console.error(`FAIL ${where} ${label}: ${JSON.stringify(verdict.error.issues).slice(0, 600)}`);
    }
  }
}
console.log(`zod: ${checked} server messages parsed, ${failures} rejected, ${skipped} of undeclared methods skipped`);

// Planted bad messages must be rejected.
const planted = [];
if (samples.notification) {
  planted.push(["a notification whose method is unknown", zod.ServerNotification,
    { ...samples.notification, method: "thread/nonexistent" }]);
  planted.push(["a notification without params", zod.ServerNotification,
    { method: samples.notification.method }]);
}
if (samples.response) {
  const { method, message } = samples.response;
  const envelope = definition(byMethod.get(method).responseEnvelope);
  planted.push([`an answer to ${method} whose result is a string`, envelope, { ...message, result: "nope" }]);
  planted.push([`an answer to ${method} without an id`, envelope, { result: message.result }]);
}
planted.push(["thread/started with a numeric thread id", zod.ServerNotification,
  { method: "thread/started", params: { thread: { id: 42 } } }]);
planted.push(["an error answer whose code is a string", zod.JSONRPCError,
  { id: 1, error: { code: "-32600", message: "x" } }]);
for (const [what, validator, message] of planted) {
  checked += 1;
  if (validator.safeParse(message).success) {
    failures += 1;
    console.error(`FAIL planted: ${what} was accepted`);
  } else {
    console.log(`ok   planted: ${what} is rejected`);
  }
}
if (checked < 10) {
  console.error("FAIL too few messages checked");
  process.exit(1);
}
process.exit(failures === 0 ? 0 : 1);
