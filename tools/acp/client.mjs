// An ACP client on the official TypeScript SDK (@agentclientprotocol/sdk, pinned in
// tools/package.json) that drives `agentwire acp` through one scenario and prints a JSON report.
//
//   node tools/acp/client.mjs SCENARIO AGENTWIRE_BINARY
//
// The agent is spawned with this process's environment (AGENTWIRE_HOME and the model are the
// caller's) and talks over its stdio. Every message either side sends is validated against the
// ACP JSON Schema the SDK ships (schema/v1/schema.json, draft 2020-12) with ajv: the envelope
// against the side's message union, then params / result against the method's own definition
// (found by the definitions' `x-method` and `x-side` members). Problems are listed in the
// report's `schemaErrors`; the caller asserts on the report.
//
// Scenarios (ACP_CWD is the session's working directory):
//   prompt      initialize, session/new, session/set_mode to ACP_MODE (when set), one prompt
//               ("hello"); a permission request is answered with the option ACP_PERMISSION
//               names (allow-once / allow-always / reject-once; reject-once by default)
//   cancel      as prompt; session/cancel once the first agent_message_chunk arrived
//   load        initialize, session/load of ACP_SESSION (its history replayed), then a prompt
//   invalid     requests with bad params, an unknown session and an unknown method, then a
//               good session/new (the agent must still answer)
//   tools       initialize offering the file system and terminals (ACP_OFFER: a comma list of
//               `read`, `write`, `terminal`; all three by default, `none` for none),
//               session/new with the MCP servers of ACP_MCP_SERVERS (JSON, `[]` by default),
//               session/set_mode to ACP_MODE (when set), one prompt ("use the tools"). The
//               client serves fs/read_text_file and fs/write_text_file on the real disk and
//               runs terminal/create's commands as child processes; every request the agent
//               sends it is listed in the report's `clientRequests`
//   lifecycle   session/new; session/set_config_option (model ACP_MODEL, reasoning effort
//               ACP_EFFORT, mode read-only, then an unknown option and an unknown value); a
//               prompt; session/list; session/close (twice) and a prompt after it;
//               session/resume; a prompt
//   concurrent  session/new with the MCP servers of ACP_MCP_SERVERS, and session/list sent
//               while it starts them; once the list is answered, the file `listed` is made in
//               ACP_CWD; `order` lists which answer came first; then a prompt ("hello")

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const [scenario, binary] = process.argv.slice(2);
if (!scenario || !binary) {
  console.error("usage: client.mjs SCENARIO AGENTWIRE_BINARY");
  process.exit(2);
}
const cwd = process.env.ACP_CWD ?? process.cwd();

// ---- schema ------------------------------------------------------------------------------
// The package's `exports` do not list its schema files: read it from the installed package.
const require = createRequire(import.meta.url);
const schemaPath = require
  .resolve("@agentclientprotocol/sdk")
  .replace(/dist\/v1\/stable\/acp\.js$/, "schema/v1/schema.json");
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema, "acp");
const sideIndex = (title) => schema.anyOf.findIndex((s) => s.title === title);
const envelope = {
  agent: ajv.compile({ $ref: `acp#/anyOf/${sideIndex("Agent")}` }),
  client: ajv.compile({ $ref: `acp#/anyOf/${sideIndex("Client")}` }),
};
// method → {Request, Response, Notification} definition names, per handling side.
const defs = {};
for (const [name, def] of Object.entries(schema.$defs)) {
  const method = def["x-method"];
  if (!method) continue;
  const kind = ["Request", "Response", "Notification"].find((k) => name.endsWith(k));
  if (!kind) continue;
  defs[`${def["x-side"]}:${method}:${kind}`] = name;
}
const compiled = new Map();
function validator(name) {
  if (!compiled.has(name)) compiled.set(name, ajv.compile({ $ref: `acp#/$defs/${name}` }));
  return compiled.get(name);
}

const schemaErrors = [];
const invalidSent = [];
const transcript = [];
// Requests each side sent, by id: their method (to validate the answer's result).
const sent = { agent: new Map(), client: new Map() };

function check(from, message) {
  transcript.push({ from, message });
  const problems = [];
  if (!envelope[from](message)) {
    problems.push({ against: `${from} envelope`, errors: envelope[from].errors });
  }
  const receiver = from === "agent" ? "client" : "agent";
  let def;
  let value;
  if (typeof message.method === "string" && "id" in message) {
    sent[from].set(JSON.stringify(message.id), message.method);
    def = defs[`${receiver}:${message.method}:Request`];
    value = message.params;
  } else if (typeof message.method === "string") {
    def = defs[`${receiver}:${message.method}:Notification`];
    value = message.params;
  } else if ("result" in message) {
    const method = sent[receiver].get(JSON.stringify(message.id));
    def = method && defs[`${from}:${method}:Response`];
    value = message.result;
    if (!method) problems.push({ against: "request ids", errors: ["an answer to no request"] });
  }
  if (def) {
    const validate = validator(def);
    if (!validate(value)) problems.push({ against: def, errors: validate.errors });
  } else if (typeof message.method === "string" && !message.method.startsWith("_")) {
    // Unknown methods are only expected where the scenario sends them on purpose.
    if (!(from === "client" && message.method === "agentwire/unknown")) {
      problems.push({ against: "method table", errors: [`no schema for ${message.method}`] });
    }
  }
  if (!problems.length) return;
  // The invalid scenario breaks the schema on purpose on the client's side; the agent's
  // answers to it must still follow the schema.
  if (from === "client" && scenario === "invalid") invalidSent.push({ message, problems });
  else schemaErrors.push({ from, message, problems });
}

// ---- the agent process -------------------------------------------------------------------
const child = spawn(binary, ["acp"], { stdio: ["pipe", "pipe", "pipe"], env: process.env });
let stderr = "";
child.stderr.on("data", (chunk) => (stderr += chunk));
let exited = null;
child.on("exit", (code, signal) => (exited = { code, signal }));

// What the agent writes, line by line, validated as it arrives (the SDK parses its own copy).
let pending = "";
child.stdout.on("data", (chunk) => {
  pending += chunk.toString("utf8");
  let newline;
  while ((newline = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    if (!line.trim()) continue;
    try {
      check("agent", JSON.parse(line));
    } catch (e) {
      schemaErrors.push({ from: "agent", line, problems: [{ against: "JSON", errors: [String(e)] }] });
    }
  }
});

const base = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const writer = base.writable.getWriter();
const stream = {
  readable: base.readable,
  writable: new WritableStream({
    write(message) {
      check("client", message);
      return writer.write(message);
    },
    close() {
      return writer.close();
    },
  }),
};

// ---- the client --------------------------------------------------------------------------
const updates = [];
const permissions = [];
const waiters = [];
function onUpdate(params) {
  updates.push(params);
  for (const w of [...waiters]) {
    if (w.test(params)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(params);
    }
  }
}
function waitUpdate(test) {
  const found = updates.find(test);
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => waiters.push({ test, resolve }));
}

// ---- the client's file system and terminals (the tools scenario) -----------------------
const clientRequests = [];
const offer = new Set(
  (process.env.ACP_OFFER ?? (scenario === "tools" ? "read,write,terminal" : "none")).split(","),
);
const terminals = new Map();
let nextTerminal = 1;

function readText({ path, line, limit }) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw acp.RequestError.resourceNotFound(path);
  }
  if (line == null && limit == null) return text;
  const lines = text.split("\n");
  const start = (line ?? 1) - 1;
  return lines.slice(start, limit == null ? undefined : start + limit).join("\n");
}

function createTerminal({ command, args, cwd: dir, env, outputByteLimit }) {
  const id = `term-${nextTerminal++}`;
  const extra = Object.fromEntries((env ?? []).map((v) => [v.name, v.value]));
  const proc = spawn(command, args ?? [], {
    cwd: dir ?? cwd,
    env: { ...process.env, ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const terminal = { proc, output: "", truncated: false, exit: null };
  const append = (chunk) => {
    terminal.output += chunk.toString("utf8");
    // Cut from the start, keeping at most outputByteLimit bytes (on a character boundary).
    while (outputByteLimit != null && Buffer.byteLength(terminal.output) > outputByteLimit) {
      terminal.output = terminal.output.slice(1);
      terminal.truncated = true;
    }
  };
  proc.stdout.on("data", append);
  proc.stderr.on("data", append);
  terminal.exited = new Promise((resolve) => {
    proc.on("error", (e) => {
      append(String(e));
      terminal.exit = { exitCode: 127, signal: null };
      resolve(terminal.exit);
    });
    proc.on("close", (code, signal) => {
      terminal.exit = { exitCode: code, signal };
      resolve(terminal.exit);
    });
  });
  terminals.set(id, terminal);
  return id;
}

function terminal(terminalId) {
  const found = terminals.get(terminalId);
  if (!found) throw acp.RequestError.resourceNotFound(terminalId);
  return found;
}

const app = acp
  .client({ name: "agentwire-e2e-ts" })
  .onNotification("session/update", ({ params }) => onUpdate(params))
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params);
    const optionId = process.env.ACP_PERMISSION ?? "reject-once";
    return { outcome: { outcome: "selected", optionId } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    clientRequests.push({ method: "fs/read_text_file", params });
    return { content: readText(params) };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    clientRequests.push({ method: "fs/write_text_file", params });
    writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("terminal/create", ({ params }) => {
    clientRequests.push({ method: "terminal/create", params });
    return { terminalId: createTerminal(params) };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    clientRequests.push({ method: "terminal/wait_for_exit", params });
    return await terminal(params.terminalId).exited;
  })
  .onRequest("terminal/output", ({ params }) => {
    clientRequests.push({ method: "terminal/output", params });
    const t = terminal(params.terminalId);
    const answer = { output: t.output, truncated: t.truncated };
    if (t.exit) answer.exitStatus = t.exit;
    return answer;
  })
  .onRequest("terminal/kill", ({ params }) => {
    clientRequests.push({ method: "terminal/kill", params });
    terminal(params.terminalId).proc.kill("SIGKILL");
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    clientRequests.push({ method: "terminal/release", params });
    const t = terminal(params.terminalId);
    if (!t.exit) t.proc.kill("SIGKILL");
    terminals.delete(params.terminalId);
    return {};
  });

async function attempt(promise) {
  try {
    return { result: await promise };
  } catch (e) {
    return { error: { code: e.code, message: e.message, data: e.data } };
  }
}

const report = { scenario };
const deadline = setTimeout(() => {
  report.timedOut = true;
  finish(1);
}, 60000);

function finish(code) {
  clearTimeout(deadline);
  report.updates = updates;
  report.permissions = permissions;
  report.clientRequests = clientRequests;
  report.schemaErrors = schemaErrors;
  report.invalidSent = invalidSent.length;
  report.messages = transcript.length;
  report.exited = exited;
  report.stderr = stderr.slice(-4000);
  process.stdout.write(JSON.stringify(report) + "\n");
  child.kill("SIGTERM");
  process.exit(code);
}

try {
  await app.connectWith(stream, async (ctx) => {
    report.initialize = await ctx.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: offer.has("read"), writeTextFile: offer.has("write") },
        terminal: offer.has("terminal"),
      },
      clientInfo: { name: "agentwire-e2e-ts", version: "1.0.0" },
    });
    switch (scenario) {
      case "prompt":
      case "cancel": {
        const session = await ctx.request("session/new", { cwd, mcpServers: [] });
        report.session = session;
        if (process.env.ACP_MODE) {
          report.setMode = await ctx.request("session/set_mode", {
            sessionId: session.sessionId,
            modeId: process.env.ACP_MODE,
          });
        }
        const prompt = ctx.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "hello" }],
        });
        if (scenario === "cancel") {
          await waitUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
          await ctx.notify("session/cancel", { sessionId: session.sessionId });
        }
        const outcome = await attempt(prompt);
        report.prompt = outcome.result ?? null;
        report.promptError = outcome.error ?? null;
        break;
      }
      case "load": {
        const sessionId = process.env.ACP_SESSION;
        report.load = await ctx.request("session/load", { sessionId, cwd, mcpServers: [] });
        report.replayed = updates.length;
        report.prompt = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "and again" }],
        });
        break;
      }
      case "invalid": {
        report.missingCwd = await attempt(ctx.request("session/new", { mcpServers: [] }));
        report.relativeCwd = await attempt(
          ctx.request("session/new", { cwd: "relative/dir", mcpServers: [] }),
        );
        report.unknownSession = await attempt(
          ctx.request("session/prompt", {
            sessionId: "no-such-session",
            prompt: [{ type: "text", text: "hi" }],
          }),
        );
        report.unknownMode = await attempt(
          ctx.request("session/set_mode", { sessionId: "no-such-session", modeId: "yolo" }),
        );
        report.unknownMethod = await attempt(ctx.request("agentwire/unknown", {}));
        report.afterwards = await attempt(ctx.request("session/new", { cwd, mcpServers: [] }));
        break;
      }
      case "tools": {
        const mcpServers = JSON.parse(process.env.ACP_MCP_SERVERS ?? "[]");
        const session = await ctx.request("session/new", { cwd, mcpServers });
        report.session = session;
        if (process.env.ACP_MODE) {
          report.setMode = await ctx.request("session/set_mode", {
            sessionId: session.sessionId,
            modeId: process.env.ACP_MODE,
          });
        }
        const outcome = await attempt(
          ctx.request("session/prompt", {
            sessionId: session.sessionId,
            prompt: [{ type: "text", text: "use the tools" }],
          }),
        );
        report.prompt = outcome.result ?? null;
        report.promptError = outcome.error ?? null;
        report.openTerminals = terminals.size;
        break;
      }
      case "lifecycle": {
        const session = await ctx.request("session/new", { cwd, mcpServers: [] });
        report.session = session;
        const { sessionId } = session;
        const set = (configId, value) =>
          attempt(ctx.request("session/set_config_option", { sessionId, configId, value }));
        report.setModel = await set("model", process.env.ACP_MODEL ?? "mock-model");
        report.setEffort = await set("reasoning_effort", process.env.ACP_EFFORT ?? "high");
        report.setMode = await set("mode", "read-only");
        report.unknownOption = await set("temperature", "hot");
        report.unknownValue = await set("model", "no-such-model");
        report.prompt = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "hello" }],
        });
        report.list = await ctx.request("session/list", { cwd });
        report.close = await ctx.request("session/close", { sessionId });
        const seen = transcript.length;
        report.closeAgain = await attempt(ctx.request("session/close", { sessionId }));
        // The SDK turns a -32002 answer to session/close into success: keep the wire answer.
        report.closeAgainWire =
          transcript.slice(seen).find((m) => m.from === "agent" && !("method" in m.message))
            ?.message ?? null;
        report.promptClosed = await attempt(
          ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] }),
        );
        const before = updates.length;
        report.resume = await ctx.request("session/resume", { sessionId, cwd, mcpServers: [] });
        report.resumeUpdates = updates.length - before;
        report.promptResumed = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "and again" }],
        });
        break;
      }
      case "concurrent": {
        const mcpServers = JSON.parse(process.env.ACP_MCP_SERVERS ?? "[]");
        const order = [];
        const opened = ctx.request("session/new", { cwd, mcpServers }).then((session) => {
          order.push("session/new");
          return session;
        });
        const listed = ctx.request("session/list", { cwd }).then((list) => {
          order.push("session/list");
          writeFileSync(`${cwd}/listed`, "");
          return list;
        });
        report.list = await listed;
        report.session = await opened;
        report.order = order;
        report.prompt = await ctx.request("session/prompt", {
          sessionId: report.session.sessionId,
          prompt: [{ type: "text", text: "hello" }],
        });
        break;
      }
      default:
        throw new Error(`unknown scenario ${scenario}`);
    }
  });
  finish(0);
} catch (e) {
  report.failure = { message: String(e?.message ?? e), code: e?.code, data: e?.data };
  finish(1);
}
