// Checks an OpenRPC document written by `agentwire app-server generate-openrpc` with the OpenRPC
// project's own tools:
//   1. @open-rpc/meta-schema: the document is valid against the OpenRPC 1.x meta-schema (ajv);
//   2. @open-rpc/schema-utils-js: parseOpenRPCDocument validates it and dereferences every $ref
//      (a $ref that does not resolve fails here), and every example's params pass the
//      MethodCallValidator of the dereferenced document;
//   3. against the method index (meta.json of the same surface): every client request is a
//      method, with its `x-since`, and every server request and notification is under the
//      `x-` list of its direction;
//   4. the checks can fail: a copy with a dangling $ref and a copy with a method missing its
//      `name` are both rejected.
// The document must declare OpenRPC 1.2.6 (what `generate-openrpc` writes by default).
//
// usage: node tools/openrpc/check.mjs [--pinned] --document FILE --meta META_JSON
//   --pinned: the document of an older pinned release, which has no recorded examples.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import schemaUtils from "@open-rpc/schema-utils-js";

const { parseOpenRPCDocument, validateOpenRPCDocument, MethodCallValidator, MethodNotFoundError } = schemaUtils;
const metaSchemaVersion = createRequire(import.meta.url)("@open-rpc/meta-schema/package.json").version;

const { values } = parseArgs({
  options: { document: { type: "string" }, meta: { type: "string" }, pinned: { type: "boolean" } },
});
if (!values.document || !values.meta) {
  console.error("usage: check.mjs --document FILE --meta META_JSON");
  process.exit(2);
}
const raw = readFileSync(values.document, "utf8");
const meta = JSON.parse(readFileSync(values.meta, "utf8"));
let failures = 0;
const fail = (message) => {
  failures += 1;
  console.error(`FAIL ${message}`);
};
const ok = (message) => console.log(`ok   ${message}`);

// 1. The meta-schema: @open-rpc/meta-schema (the OpenRPC 1.x schema, with the JSON Schema
// meta-schema it embeds), through schema-utils-js's validateOpenRPCDocument, which registers the
// embedded meta-schema and the specification-extension spec the way the OpenRPC tools do.
const document = JSON.parse(raw);
if (document.openrpc !== "1.2.6") fail(`the document declares openrpc ${document.openrpc}, not 1.2.6`);
const validateMeta = (doc) => {
  const verdict = validateOpenRPCDocument(doc);
  return verdict === true ? true : verdict;
};
{
  const verdict = validateMeta(document);
  if (verdict === true) ok(`valid against @open-rpc/meta-schema ${metaSchemaVersion} (openrpc ${document.openrpc})`);
  else fail(`meta-schema: ${String(verdict.message).slice(0, 3000)}`);
}

// 1b. The older meta-schema @open-rpc/test-coverage 2.2.4 validates with (its own
// schema-utils-js 1.16.2 and meta-schema 1.14.2, whose `openrpc` enum ends at 1.2.6): it must
// accept the document as it is, and refuse the same document declaring 1.3.2 (why we emit 1.2.6).
{
  const coverageRequire = createRequire(createRequire(import.meta.url).resolve("@open-rpc/test-coverage"));
  const older = coverageRequire("@open-rpc/schema-utils-js");
  const olderMeta = coverageRequire("@open-rpc/schema-utils-js/package.json").version;
  const verdict = older.validateOpenRPCDocument(JSON.parse(raw));
  if (verdict === true) ok(`valid for test-coverage's schema-utils-js ${olderMeta} too`);
  else fail(`test-coverage's schema-utils-js ${olderMeta}: ${String(verdict.message).slice(0, 1500)}`);
  const newer = { ...JSON.parse(raw), openrpc: "1.3.2" };
  if (older.validateOpenRPCDocument(newer) === true) fail(`test-coverage's schema-utils-js ${olderMeta} accepted openrpc 1.3.2`);
  else ok(`test-coverage's schema-utils-js ${olderMeta} refuses the same document as openrpc 1.3.2`);
}

// 2. schema-utils-js: validate + dereference, then the examples through MethodCallValidator.
let dereferenced;
try {
  dereferenced = await parseOpenRPCDocument(JSON.parse(raw));
  ok(`parseOpenRPCDocument: valid, ${dereferenced.methods.length} methods, every $ref resolved`);
} catch (error) {
  fail(`parseOpenRPCDocument: ${error.message.slice(0, 2000)}`);
}
if (dereferenced) {
  const validator = new MethodCallValidator(dereferenced);
  let examples = 0;
  for (const method of dereferenced.methods) {
    for (const example of method.examples ?? []) {
      examples += 1;
      const params = Object.fromEntries(example.params.map((p) => [p.name, p.value]));
      const errors = validator.validate(method.name, params);
      if (errors instanceof MethodNotFoundError || errors.length > 0) {
        fail(`example ${example.name}: params rejected: ${JSON.stringify(errors).slice(0, 500)}`);
      }
    }
  }
  const planted = validator.validate("thread/list", { limit: "ten" });
  if (planted instanceof MethodNotFoundError || planted.length === 0) fail("thread/list with limit \"ten\" passed MethodCallValidator");
  else ok("thread/list with limit \"ten\" is rejected by MethodCallValidator");
  if (values.pinned) ok(`an older pinned release: ${examples} examples (none recorded for it)`);
  else if (examples === 0) fail("the document has no examples");
  else ok(`${examples} examples: params accepted by MethodCallValidator`);
}

// 3. Everything of the method table is there, in the right place.
const listOf = {
  clientRequest: document.methods,
  serverRequest: document["x-server-requests"],
  serverNotification: document["x-server-notifications"],
  clientNotification: document["x-client-notifications"],
};
for (const entry of meta.methods) {
  const found = (listOf[entry.direction] ?? []).find((m) => m.name === entry.method);
  if (!found) {
    fail(`${entry.direction} ${entry.method} is missing`);
  } else if (found["x-since"] !== entry.since || found["x-direction"] !== entry.direction) {
    fail(`${entry.method}: x-since/x-direction ${found["x-since"]}/${found["x-direction"]}, want ${entry.since}/${entry.direction}`);
  }
}
const total = Object.values(listOf).reduce((n, list) => n + (list?.length ?? 0), 0);
if (total !== meta.methods.length) fail(`${total} methods in the document, ${meta.methods.length} in meta.json`);
else ok(`all ${total} methods of meta.json, each under its direction with its x-since`);

// 4. Planted defects are rejected.
const dangling = JSON.parse(raw);
dangling.methods[0].result.schema = { $ref: "#/components/schemas/NoSuchType" };
try {
  await parseOpenRPCDocument(dangling);
  fail("a dangling $ref was accepted");
} catch {
  ok("a dangling $ref is rejected");
}
const nameless = JSON.parse(raw);
delete nameless.methods[0].name;
if (validateMeta(nameless) === true) fail("a method without a name passed the meta-schema");
else ok("a method without a name fails the meta-schema");

console.log(failures === 0 ? "openrpc check: ok" : `openrpc check: ${failures} failures`);
process.exit(failures === 0 ? 0 : 1);
