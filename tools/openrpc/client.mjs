// Renders a TypeScript client from the OpenRPC document with @open-rpc/generator and
// compiles it with `tsc --strict` (tools/node_modules/typescript), with the client's own
// dependencies (@open-rpc/client-js, lodash's types) from tools/node_modules; then checks that
// the client's types are real: a usage file compiles, and a string where thread/list takes a
// number does not.
//
// The generator is the pinned 1.22.3, unpatched. It renders twice:
//   1. with its stock `client` component, whose output cannot compile: its template writes each
//      method as `public thread/start: …` (a syntax error for names with a `/`). This run must
//      fail to compile *for that reason*; if the stock client ever compiles, the custom
//      component below is no longer needed and this script says so (and fails).
//   2. with the custom client component tools/openrpc/client-component.cjs (the generator's
//      extension point for components; the stock template with method names quoted and params
//      labelled with safe names, see that file), whose output must compile under `--strict`.
//
// Also: the client package the generator writes (its _package.json) depends on
// @open-rpc/meta-schema 1.14.2, and the client embeds the document typed as that package's
// OpenrpcDocument, whose `openrpc` union ends at 1.2.6. The same 1.14.2 is installed under
// test-coverage; the document's version must type-check against it (and 1.3.2 must not).
//
// usage: node client.mjs --document FILE --out DIR  (DIR under tools/, so imports resolve)
import { readFileSync, writeFileSync, rmSync, mkdirSync } from "node:fs";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import generatorModule from "@open-rpc/generator";

const generate = generatorModule.default ?? generatorModule;
const { values } = parseArgs({
  options: { document: { type: "string" }, out: { type: "string" } },
});
if (!values.document || !values.out) {
  console.error("usage: client.mjs --document FILE --out DIR");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const tools = join(here, "..");
// tsc runs in tools/ (for its node_modules), so every path handed to it is absolute.
const out = resolve(values.out);
const document = JSON.parse(readFileSync(values.document, "utf8"));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tsc = join(tools, "node_modules", "typescript", "bin", "tsc");
const compile = (files) =>
  execFileSync(process.execPath, [tsc, "--strict", "--noEmit", "--esModuleInterop", "--resolveJsonModule",
    "--skipLibCheck", "--target", "es2019", "--module", "commonjs", "--moduleResolution", "node",
    "--typeRoots", join(tools, "node_modules", "@types"), ...files], { stdio: "pipe", cwd: tools });

// The schema transpiler warns the same advice (an array `type` could be a oneOf) once per such
// schema; it is counted instead of printed.
async function render(dir, component) {
  const warn = console.warn;
  let typeArrayAdvice = 0;
  console.warn = (...args) => {
    if (Array.isArray(args[0]) && String(args[0][0]).startsWith("One of the provided schemas is using an array")) {
      typeArrayAdvice += 1;
    } else {
      warn(...args);
    }
  };
  try {
    await generate({ openrpcDocument: document, outDir: dir, components: [component] });
  } finally {
    console.warn = warn;
  }
  if (typeArrayAdvice > 0) console.log(`(the transpiler advised against an array \`type\` ${typeArrayAdvice} times)`);
  // The generator writes into DIR/<component type>/<language>/.
  const source = join(dir, component.type, "typescript", "src", "index.ts");
  const text = readFileSync(source, "utf8");
  console.log(`generated ${source} (${text.length} bytes)`);
  return { source, text };
}

// 0. The declared OpenRPC version against the meta-schema types the generated package uses.
{
  const require = createRequire(import.meta.url);
  const coverageRequire = createRequire(require.resolve("@open-rpc/test-coverage"));
  const utilsRequire = createRequire(coverageRequire.resolve("@open-rpc/schema-utils-js"));
  const metaDir = dirname(utilsRequire.resolve("@open-rpc/meta-schema/package.json"));
  const metaVersion = JSON.parse(readFileSync(join(metaDir, "package.json"), "utf8")).version;
  const check = (declared) => {
    const file = join(out, `openrpc-version-${declared}.ts`);
    writeFileSync(file, `import type { Openrpc } from ${JSON.stringify(join(metaDir, "index"))};\n` +
      `export const declared: Openrpc = ${JSON.stringify(declared)};\n`);
    try {
      compile([file]);
      return true;
    } catch {
      return false;
    }
  };
  if (!check(document.openrpc)) {
    console.error(`FAIL openrpc ${document.openrpc} is not an Openrpc of @open-rpc/meta-schema ${metaVersion}`);
    process.exit(1);
  }
  if (check("1.3.2")) {
    console.error(`FAIL @open-rpc/meta-schema ${metaVersion} types accept 1.3.2: the check proves nothing`);
    process.exit(1);
  }
  console.log(`ok   openrpc ${document.openrpc} type-checks as @open-rpc/meta-schema ${metaVersion}'s Openrpc (1.3.2 does not)`);
}

// 1. The stock component: known not to compile, for the known reason.
const stock = await render(join(out, "stock"), { type: "client", name: "AgentwireClient", language: "typescript" });
const unquoted = stock.text.match(/^\s*public [A-Za-z0-9_]+\/[A-Za-z0-9_/]+: /gm) ?? [];
try {
  compile([stock.source]);
  console.error("FAIL the stock client component's output compiles now: tools/openrpc/client-component.cjs " +
    "is no longer needed (use the stock component here and drop it)");
  process.exit(1);
} catch (error) {
  const first = String(error.stdout).split("\n")[0];
  if (unquoted.length === 0) {
    console.error(`FAIL the stock client does not compile, and not because of \`public a/b:\` members: ${first}`);
    process.exit(1);
  }
  console.log(`ok   the stock client component does not compile, as expected: ${unquoted.length} members ` +
    `like "${unquoted[0].trim()}" (${first})`);
}

// 2. The custom component: must compile strictly.
const { source, text } = await render(out, {
  type: "custom",
  name: "AgentwireClient",
  language: "typescript",
  customComponent: join(here, "client-component.cjs"),
  customType: "client",
});
const members = (text.match(/^\s*public "[A-Za-z0-9_/]+": [A-Za-z0-9_]+ = \(\.\.\.params\)/gm) ?? []).length;
if (members !== document.methods.length) {
  console.error(`FAIL the client has ${members} quoted method members, the document ${document.methods.length} methods`);
  process.exit(1);
}
const unsafeParam = text.match(/^export type \w+ = \(.*\b(arguments|eval)\??: .*$/m);
if (unsafeParam) {
  console.error(`FAIL a param is labelled \`${unsafeParam[1]}\` (not a parameter name in strict mode)`);
  process.exit(1);
}

// A usage file: the types must be real (a wrong param type is an error, see negative below).
// thread/list's by-name params become positional arguments in the document's order.
const listParams = document.methods.find((m) => m.name === "thread/list").params.map((p) => p.name);
const limitAt = listParams.indexOf("limit");
const args = (value) => listParams.slice(0, limitAt + 1).map((_p, i) => (i === limitAt ? value : "undefined")).join(", ");
const usage = join(dirname(source), "usage.ts");
writeFileSync(usage, `import AgentwireClient from "./index";
export async function use(client: AgentwireClient): Promise<number> {
  const threads = await client["thread/list"](${args("10")});
  return threads.data.length;
}
`);
try {
  compile([source, usage]);
  console.log(`ok   tsc --strict: the generated client and a usage of it compile (${members} methods)`);
} catch (error) {
  console.error(`FAIL tsc --strict:\n${String(error.stdout).slice(0, 4000)}`);
  process.exit(1);
}
const negative = join(dirname(source), "negative.ts");
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
