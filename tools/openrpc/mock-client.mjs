// Serves the OpenRPC document with @open-rpc/mock-server over a WebSocket and runs our Rust
// client against it (client/examples/openrpc_mock.rs, built by
// `cargo build -p agentwire-client --example openrpc_mock`):
//   1. the document as it is: the client connects with its ws:// transport, does `initialize`
//      (answered from the document's example) and a typed request per example; every result
//      must parse into our Rust types, and the example must exit 0;
//   2. a planted defect: the same document with one recorded result replaced by a value of the
//      wrong shape; the client must fail, naming that method.
//
// The mock server (`@open-rpc/mock-server`'s default export) is an `@open-rpc/server-js` server
// in mock mode with an HTTP transport; server-js also ships a WebSocket transport, which this
// script adds to it (`addDefaultTransport("WebSocketTransport", …)`), one JSON-RPC message per
// text frame, the way agentwire's websocket listener speaks.
//
// usage: node mock-client.mjs --document FILE --client BINARY
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { spawn } from "node:child_process";
import { once } from "node:events";
import mockServerModule from "@open-rpc/mock-server/build/index.js";
import schemaUtils from "@open-rpc/schema-utils-js";

const mockServer = mockServerModule.default ?? mockServerModule;
const { parseOpenRPCDocument } = schemaUtils;
const { values } = parseArgs({
  options: { document: { type: "string" }, client: { type: "string" } },
});
if (!values.document || !values.client) {
  console.error("usage: mock-client.mjs --document FILE --client BINARY");
  process.exit(2);
}
const raw = readFileSync(values.document, "utf8");

// The mock server of `document` on a WebSocket on an ephemeral port; its ws:// URL.
async function serve(document) {
  const log = console.log;
  console.log = () => {}; // server-js announces each transport on stdout
  try {
    const server = mockServer(0, await parseOpenRPCDocument(document));
    server.addDefaultTransport("WebSocketTransport", { port: 0, middleware: [] });
    await server.start();
    const ws = server.transports.find((t) => t.constructor.name === "WebSocketServerTransport");
    const address = ws?.server?.address();
    if (!address?.port) throw new Error("the mock server's WebSocket transport has no port");
    return { server, url: `ws://127.0.0.1:${address.port}` };
  } finally {
    console.log = log;
  }
}

// Runs the Rust client against `url` (asynchronously: the mock answers from this process).
async function runClient(url, documentPath) {
  const child = spawn(values.client, ["--url", url, "--document", documentPath], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const [code] = await once(child, "exit");
  return { code, stdout, stderr };
}

let failures = 0;
const check = (condition, message) => {
  if (condition) console.log(`ok   ${message}`);
  else {
    failures += 1;
    console.error(`FAIL ${message}`);
  }
};

// 1. The document as it is.
{
  const { server, url } = await serve(JSON.parse(raw));
  const run = await runClient(url, values.document);
  const quote = (text) => text.split("\n").filter((l) => l !== "").map((l) => `  client: ${l}\n`).join("");
  process.stdout.write(quote(run.stdout) + quote(run.stderr));
  check(run.code === 0, `the Rust client against the mock at ${url} exits 0 (exit ${run.code})`);
  await server.stop();
}

// 2. A recorded result of the wrong shape must make the client fail, naming the method.
{
  const planted = JSON.parse(raw);
  const method = planted.methods.find((m) => m.name === "model/list");
  const example = method?.examples?.find((e) => e.params.length === 0);
  if (!example) {
    check(false, "the document has a parameterless model/list example to plant a bad result in");
  } else {
    example.result.value = { data: "not a list of models" };
    const dir = mkdtempSync(join(tmpdir(), "openrpc-mock-"));
    const path = join(dir, "planted.openrpc.json");
    writeFileSync(path, JSON.stringify(planted));
    const { server, url } = await serve(planted);
    const run = await runClient(url, path);
    const said = (run.stderr + run.stdout).split("\n").filter((l) => l.includes("model/list")).join(" | ");
    check(run.code !== 0 && said.length > 0,
      `a model/list result of the wrong shape fails the client, naming the method (exit ${run.code}: ${said.slice(0, 300)})`);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`mock-server x Rust client: ${failures === 0 ? "ok" : `${failures} failed`}`);
process.exit(failures === 0 ? 0 : 1);
