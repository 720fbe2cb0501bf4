// Renders a TypeScript client from the OpenRPC document with @open-rpc/generator and
// compiles it with `tsc --strict` (tools/node_modules/typescript), with the client's own
// dependencies (@open-rpc/client-js, lodash's types) from tools/node_modules.
//
// One repair, printed when applied: generator 1.22.3 writes each method name verbatim as a
// class member (`public thread/start: ThreadStart = ...`), which is not TypeScript for names
// with a `/`. The member name is quoted (`public "thread/start": ...`, called as
// `client["thread/start"](...)`); nothing else of the output is touched.
//
// NOT in CI: with generator 1.22.3 the output does not compile (its transpiler references type
// names it never declares for this bundle's recursive types); see docs/openrpc.md.
//
// usage: node client.mjs --document FILE --out DIR  (DIR under tools/, so imports resolve)
import { readFileSync, writeFileSync, rmSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
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
const document = JSON.parse(readFileSync(values.document, "utf8"));
rmSync(values.out, { recursive: true, force: true });
mkdirSync(values.out, { recursive: true });
await generate({
  openrpcDocument: document,
  outDir: values.out,
  components: [{ type: "client", name: "AgentwireClient", language: "typescript" }],
});
const source = join(values.out, "client", "typescript", "src", "index.ts");
let text = readFileSync(source, "utf8");
let repaired = 0;
text = text.replace(/^(\s*public )([A-Za-z0-9_]+(?:\/[A-Za-z0-9_]+)+)(: )/gm, (_m, head, name, tail) => {
  repaired += 1;
  return `${head}"${name}"${tail}`;
});
writeFileSync(source, text);
console.log(`generated ${source} (${text.length} bytes); quoted ${repaired} member names with a "/"`);
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
const usage = join(values.out, "client", "typescript", "src", "usage.ts");
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
const negative = join(values.out, "client", "typescript", "src", "negative.ts");
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
