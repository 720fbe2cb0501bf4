#!/usr/bin/env node
// Compares tsc diagnostics (`tsc --pretty false` output, from the repo root) with the lines of a
// source file marked with a trailing `// expect-error`: every marked line must have an error, and no other line
// (in that file or anywhere else) may have one. Exits 1 otherwise.
//   node expect-errors.mjs TSC_OUTPUT_FILE SOURCE_FILE
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const [outputFile, sourceFile] = process.argv.slice(2);
if (!outputFile || !sourceFile) {
  console.error("usage: node expect-errors.mjs TSC_OUTPUT_FILE SOURCE_FILE");
  process.exit(2);
}
const source = resolve(sourceFile);
const expected = new Map();
readFileSync(source, "utf8").split("\n").forEach((text, i) => {
  // a trailing marker after code; comment-only lines never count
  if (/^\s*[^/\s].*\/\/ expect-error\s*$/.test(text)) expected.set(i + 1, text.trim());
});
if (expected.size === 0) {
  console.error(`expect-errors: ${sourceFile} marks no line with // expect-error`);
  process.exit(1);
}

const got = new Map(); // line -> [codes]
const unexpected = [];
for (const line of readFileSync(outputFile, "utf8").split("\n")) {
  const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
  if (!m) {
    if (/error TS\d+/.test(line)) unexpected.push(line); // e.g. a config error without position
    continue;
  }
  const [, file, row, , code, message] = m;
  const n = Number(row);
  if (resolve(file) === source && expected.has(n)) {
    if (!got.has(n)) got.set(n, []);
    got.get(n).push(`${code} ${message}`);
  } else {
    unexpected.push(line);
  }
}

let ok = true;
for (const [n, text] of expected) {
  if (got.has(n)) {
    console.log(`  caught   line ${n}: ${got.get(n)[0]}`);
  } else {
    ok = false;
    console.log(`  MISSED   line ${n}: compiled without error: ${text}`);
  }
}
for (const line of unexpected) {
  ok = false;
  console.log(`  UNEXPECTED ${line}`);
}
console.log(ok
  ? `expect-errors: all ${expected.size} marked mistakes rejected by tsc, no other error`
  : "expect-errors: FAILED: the negative file did not fail exactly as marked");
process.exit(ok ? 0 : 1);
