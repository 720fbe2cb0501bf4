// A custom client component for @open-rpc/generator 1.22.3 (its documented extension point:
// `{ type: "custom", customComponent: PATH, customType: "client" }`), used by
// tools/openrpc/client.mjs. The generator and its typings run unpatched; this component is the
// stock TypeScript client component (same static files, same hooks, the same template text,
// Apache-2.0, from @open-rpc/generator's build/components/client.js, kept in
// client-template.ts.lodash) with two differences, because the stock template cannot render
// agentwire's method and param names as TypeScript (client.mjs shows it on every run by
// compiling the stock component's output too):
//   1. a method becomes a quoted class member, `public "thread/start": ThreadStart = …`, called
//      `client["thread/start"](…)`: the stock template writes `public thread/start: …`, a syntax
//      error for every name with a `/` (all but a few of the protocol's);
//   2. the method signatures come from @open-rpc/typings run on a copy of the document whose
//      params are labelled with safe names (`arguments` → `arguments_`, characters an
//      identifier cannot hold → `_`): strict mode forbids a parameter called `arguments` or
//      `eval` (TS1215), and `mcpServer/tool/call` has an `arguments` param. The labels only
//      name positions: the client embeds the original document and zips the arguments with its
//      real param names, so the wire is unchanged.
"use strict";
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { template, cloneDeep } = require("lodash");
const stock = require("@open-rpc/generator/build/components/client.js").default;
const { getDefaultComponentTemplatePath } = require("@open-rpc/generator/build/components/index.js");
const MethodTypings = require("@open-rpc/typings").default;

const reserved = new Set(["arguments", "eval", "break", "case", "catch", "class", "const", "continue",
  "debugger", "default", "delete", "do", "else", "enum", "export", "extends", "false", "finally", "for",
  "function", "if", "implements", "import", "in", "instanceof", "interface", "let", "new", "null",
  "package", "private", "protected", "public", "return", "static", "super", "switch", "this", "throw",
  "true", "try", "typeof", "var", "void", "while", "with", "yield", "await"]);

/** A param name as a TypeScript parameter label. */
function safeLabel(name) {
  let safe = String(name).replace(/[^A-Za-z0-9_$]/g, "_");
  if (safe === "" || /^[0-9]/.test(safe)) safe = `_${safe}`;
  return reserved.has(safe) ? `${safe}_` : safe;
}

const render = template(readFileSync(join(__dirname, "client-template.ts.lodash"), "utf8"));

const typescript = {
  path: "src/index.ts",
  template: (context) => {
    const labelled = cloneDeep(context.openrpcDocument);
    for (const method of labelled.methods) {
      for (const param of method.params ?? []) param.name = safeLabel(param.name);
    }
    return render({ ...context, labelTypings: new MethodTypings(labelled) });
  },
};

// The generator loads this with `require` and takes the module as the component (its
// `hooks` and `staticPath`).
module.exports = {
  hooks: { ...stock, templateFiles: { typescript: [typescript] } },
  staticPath: (language) => getDefaultComponentTemplatePath(language, "client"),
  safeLabel,
};
