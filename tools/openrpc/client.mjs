// Renders a TypeScript client from the OpenRPC document with @open-rpc/generator and
// compiles it with `tsc --strict` (tools/node_modules/typescript), with the client's own
// dependencies (@open-rpc/client-js, lodash's types) from tools/node_modules; then checks that
// the client's types are real: a usage file compiles, and a string where thread/list takes a
// number does not.
//
// The generator is the pinned 1.22.3 with tools/patches/ applied by patch-package at install
// (scripts/install-ci-tools.sh; rationale in docs/openrpc.md): method names with a `/` are
// quoted class members (`public "thread/start": ThreadStart`, called `client["thread/start"]`)
// and a param called `arguments` is labelled `arguments_` in the method's function type. This
// script fails if either patch is missing rather than repairing the output itself.
//
// usage: node client.mjs --document FILE --out DIR  (DIR under tools/, so imports resolve)
import { readFileSync, writeFileSync, rmSync, mkdirSync } from "node:fs";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import generatorModule from "@open-rpc/generator";

const generate = generatorModule.default ?? generatorModule;
const { values } = parseArgs({
  options: { document: { type: "string" }, out: { type: "string" } },
});
if (!values.document || !values.out) {
  console.error("usage: client.mjs --document FILE --out DIR");
  process.exit(2);
}
const tools = join(dirname(fileURLToPath(import.meta.url)), "..");
// tsc runs in tools/ (for its node_modules), so every path handed to it is absolute.
const out = resolve(values.out);
const document = JSON.parse(readFileSync(values.document, "utf8"));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// The schema transpiler warns the same advice (an array `type` could be a oneOf) once per such
// schema; it is counted instead of printed.
const warn = console.warn;
let typeArrayAdvice = 0;
console.warn = (...args) => {
  if (Array.isArray(args[0]) && String(args[0][0]).startsWith("One of the provided schemas is using an array")) {
    typeArrayAdvice += 1;
  } else {
    warn(...args);
  }
};
await generate({
  openrpcDocument: document,
  outDir: out,
  components: [{ type: "client", name: "AgentwireClient", language: "typescript" }],
});
console.warn = warn;
if (typeArrayAdvice > 0) console.log(`(the transpiler advised against an array \`type\` ${typeArrayAdvice} times)`);
const source = join(out, "client", "typescript", "src", "index.ts");
const text = readFileSync(source, "utf8");
console.log(`generated ${source} (${text.length} bytes)`);
const unquoted = text.match(/^\s*public [A-Za-z0-9_]+\/[A-Za-z0-9_/]+: /m);
if (unquoted) {
  console.error(`FAIL the generator wrote "${unquoted[0].trim()}": tools/patches/@open-rpc+generator+*.patch ` +
    "is not applied (run scripts/install-ci-tools.sh)");
  process.exit(1);
}
const unsafeParam = text.match(/^export type \w+ = \(.*\barguments\??: .*$/m);
if (unsafeParam) {
  console.error("FAIL a param is labelled `arguments` (not a parameter name in strict mode): " +
    "tools/patches/@open-rpc+typings+*.patch is not applied (run scripts/install-ci-tools.sh)");
  process.exit(1);
}
const members = (text.match(/^\s*public "?[A-Za-z0-9_/]+"?: [A-Za-z0-9_]+ = \(\.\.\.params\)/gm) ?? []).length;
if (members !== document.methods.length) {
  console.error(`FAIL the client has ${members} method members, the document ${document.methods.length} methods`);
  process.exit(1);
}

// A usage file: the types must be real (a wrong param type is an error, see negative below).
// thread/list's by-name params become positional arguments in the document's order.
const listParams = document.methods.find((m) => m.name === "thread/list").params.map((p) => p.name);
const limitAt = listParams.indexOf("limit");
const args = (value) => listParams.slice(0, limitAt + 1).map((_p, i) => (i === limitAt ? value : "undefined")).join(", ");
const usage = join(out, "client", "typescript", "src", "usage.ts");
writeFileSync(usage, `import AgentwireClient from "./index";
export async function use(client: AgentwireClient): Promise<number> {
  const threads = await client["thread/list"](${args("10")});
  return threads.data.length;
}
`);
const tsc = join(tools, "node_modules", "typescript", "bin", "tsc");
const compile = (files) =>
  execFileSync(process.execPath, [tsc, "--strict", "--noEmit", "--esModuleInterop", "--resolveJsonModule",
    "--skipLibCheck", "--target", "es2019", "--module", "commonjs", "--moduleResolution", "node",
    "--typeRoots", join(tools, "node_modules", "@types"), ...files], { stdio: "pipe", cwd: tools });
try {
  compile([source, usage]);
  console.log(`ok   tsc --strict: the generated client and a usage of it compile (${members} methods)`);
} catch (error) {
  console.error(`FAIL tsc --strict:\n${String(error.stdout).slice(0, 4000)}`);
  process.exit(1);
}
const negative = join(out, "client", "typescript", "src", "negative.ts");
writeFileSync(negative, `import AgentwireClient from "./index";
export async function misuse(client: AgentwireClient): Promise<void> {
  await client["thread/list"](${args('"ten"')});
}
`);
try {
  compile([source, negative]);
  console.error("FAIL a string where thread/list takes a number compiled: the client's types are loose");
  process.exit(1);
} catch (error) {
  console.log(`ok   a string for thread/list's limit is a type error: ${String(error.stdout).split("\n")[0]}`);
}
