#!/usr/bin/env bash
# Proves the generated TypeScript is usable, and typed, for a third party (pinned tsc from
# tools/node_modules, installed by scripts/install-ci-tools.sh):
#   1. tools/ts-smoke/usage.ts + all generated .ts compile under strict settings   (must pass)
#   2. tools/ts-smoke/negative.ts fails with an error on exactly its marked lines   (must fail)
# for the stable surface (generated/schema/typescript) and the experimental one
# (generated/schema/experimental/typescript).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
TSC="tools/node_modules/typescript/bin/tsc"
SMOKE="tools/ts-smoke"

die() { printf 'check-ts: error: %s\n' "$*" >&2; exit 1; }
[ -f "$TSC" ] || die "$TSC is missing: run scripts/install-ci-tools.sh first"

OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT

run_surface() {
  local name="$1" dir="$2" positive="$3" negative="$4"
  [ -f "$dir/index.ts" ] || die "$dir/index.ts is missing (has codegen been run?)"
  local files
  files="$(find "$dir" -name '*.ts' | wc -l)"
  echo "==> [$name] tsc -p $SMOKE/$positive ($files generated .ts files + usage.ts): must compile"
  if ! node "$TSC" -p "$SMOKE/$positive" --pretty false; then
    die "[$name] usage.ts or the generated TypeScript does not compile"
  fi
  echo "    ok"
  echo "==> [$name] tsc -p $SMOKE/$negative (negative.ts): must fail on exactly the marked lines"
  if node "$TSC" -p "$SMOKE/$negative" --pretty false >"$OUT" 2>&1; then
    die "[$name] negative.ts compiled: the generated types do not catch wrong usage (are they any?)"
  fi
  node "$SMOKE/expect-errors.mjs" "$OUT" "$SMOKE/negative.ts" || die "[$name] negative.ts failed, but not as expected (see above)"
}

echo "==> tsc $(node "$TSC" --version)"
run_surface stable generated/schema/typescript tsconfig.json tsconfig.negative.json
run_surface experimental generated/schema/experimental/typescript tsconfig.experimental.json tsconfig.experimental-negative.json
echo "check-ts: OK"
