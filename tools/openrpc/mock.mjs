// Serves the OpenRPC document with @open-rpc/mock-server (HTTP) and talks to it as a client:
//   - `rpc.discover` returns the document;
//   - a method whose recorded example has no params answers with the recorded result;
//   - every other method with examples answers (from an example, or with data the mock makes up
//     from the result schema) with a result valid against the result schema;
//   - params that break the schema get -32602 from the mock's own validation.
// The client is a plain JSON-RPC-over-HTTP call (fetch) whose results are checked against the
// result schemas with ajv; mock-client.mjs runs our Rust client against the same mock over
// websocket and parses the results into our Rust types.
//
// usage: node mock.mjs --document FILE [--port N]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import Ajv from "ajv";
import mockServerModule from "@open-rpc/mock-server/build/index.js";
import schemaUtils from "@open-rpc/schema-utils-js";

const mockServer = mockServerModule.default ?? mockServerModule;
const { parseOpenRPCDocument } = schemaUtils;
const { values } = parseArgs({
  options: { document: { type: "string" }, port: { type: "string", default: "0" } },
});
if (!values.document) {
  console.error("usage: mock.mjs --document FILE [--port N]");
  process.exit(2);
}
const raw = JSON.parse(readFileSync(values.document, "utf8"));
const port = Number(values.port) || 20000 + (process.pid % 20000);
const server = mockServer(port, await parseOpenRPCDocument(JSON.parse(JSON.stringify(raw))));
await server.start();

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: "urn:agentwire:openrpc", components: raw.components });

let id = 1;
async function call(method, params) {
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: id++, method, params }),
  });
  return response.json();
}

let failures = 0;
let checked = 0;
const check = (condition, message) => {
  checked += 1;
  if (condition) console.log(`ok   ${message}`);
  else {
    failures += 1;
    console.error(`FAIL ${message}`);
  }
};

const discovered = await call("rpc.discover", []);
check(discovered.result?.info?.title === raw.info.title, "rpc.discover returns the document");

for (const method of raw.methods) {
  for (const example of method.examples ?? []) {
    const params = Object.fromEntries(example.params.map((p) => [p.name, p.value]));
    const answer = await call(method.name, params);
    if (answer.error) {
      check(false, `${example.name}: error ${JSON.stringify(answer.error).slice(0, 300)}`);
      continue;
    }
    if (example.params.length === 0) {
      check(
        JSON.stringify(answer.result) === JSON.stringify(example.result.value),
        `${example.name}: the recorded result`,
      );
    }
    const validate = ajv.compile({ $ref: `urn:agentwire:openrpc${method.result.schema.$ref}` });
    check(validate(answer.result), `${example.name}: result valid against ${method.result.name}` +
      (validate.errors ? ` ${JSON.stringify(validate.errors).slice(0, 300)}` : ""));
  }
}
const bad = await call("thread/list", { limit: "ten" });
check(bad.error?.code === -32602, `thread/list with limit "ten" is refused with -32602 (${JSON.stringify(bad.error ?? bad.result).slice(0, 120)})`);

await server.stop?.();
console.log(`mock-server: ${checked} checks, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
