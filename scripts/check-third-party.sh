#!/usr/bin/env bash
# The proof that third parties can build on agentwire's generated output, with pinned
# third-party tools only (install them first: scripts/install-ci-tools.sh):
#   - tools/check-ts.sh: the generated TypeScript compiles strictly, usage.ts type-checks, and
#     negative.ts is rejected exactly where marked (the types are not `any`);
#   - tools/check-bundle.mjs (ajv) and tools/check_bundle.py (Python jsonschema) compile every
#     definition of the stable and the experimental bundle and replay the codex reference
#     transcripts against them;
#   - `agentwire contract check` replays the same transcripts against the pinned contract; only
#     the differences the reference is known to have pass (methods agentwire does not declare,
#     the malformed client input the stdio transcript sends on purpose; see docs/contract.md);
#   - tools/sdk-smoke/smoke.py: third-party Python SDKs for the Codex app-server, unchanged,
#     drive the built binary: handshake, config read and written (comments kept), models, a turn.
#   - tools/mcp-smoke/smoke.py: the official MCP Python SDK drives `agentwire mcp-server` over stdio
#     (tools, a turn, codex-reply, approvals through elicitation, cancellation);
#   - tools/mcp-smoke/inspector.sh: the MCP Inspector's CLI mode lists and calls the tools;
#   - tools/mcp-smoke/conformance.sh: the official MCP conformance suite's server scenarios
#     against the streamable HTTP endpoint;
#   - `agentwire conformance` against the reference (`codex app-server` 0.171.0, installed by
#     scripts/install-bench-tools.sh) and agentwire, both on the mock model: the same scripted
#     turn must have the same shape on both (tools/conformance_diff.py), and agentwire must pass
#     every scenario.
#   - tools/openrpc/: the OpenRPC documents (OpenRPC 1.2.6, docs/openrpc.md), checked by the
#     unpatched @open-rpc tools: `generate-openrpc` writes the checked-in bytes;
#     @open-rpc/meta-schema and @open-rpc/schema-utils-js accept them (check.mjs), the documents
#     of every pinned release too; @open-rpc/mock-server serves one to a JSON-RPC client
#     (mock.mjs) and, over websocket, to agentwire-client, whose typed results must parse
#     (mock-client.mjs); @open-rpc/test-coverage replays its examples against agentwire over
#     websocket (coverage.sh); @open-rpc/generator renders a TypeScript client of each that
#     compiles under `tsc --strict` (client.mjs, with the custom component client-component.cjs;
#     the stock component's client is shown not to compile).
#   - tools/zod/: the zod validators of `agentwire app-server generate-ts --zod` (each surface)
#     type-check under `tsc --strict`, parse every server message of the reference transcripts
#     and of a recorded agentwire session, and reject planted bad messages.
#   - tools/docs-site/: the protocol reference site (`generate-docs`, docs/reference-site.md) of
#     each surface has no broken internal link (links.py), Debian's headless chromium renders
#     every page, and a screenshot of the turn/start page is kept under target/ci-artifacts/.
#   - tools/quicktype/: quicktype's Python bindings of each flat bundle pass `mypy --strict` and
#     parse every server message of the transcripts; its Go bindings pass `go build` + `go vet`.
# Every step runs even when an earlier one fails; the exit status is non-zero if any failed.
#
# The reference material: $AGENTWIRE_REFERENCE_DIR, else beside the repository
# ($REPO/../shared/reference, the way CI lays it out), else .tools/reference, produced from the
# npm registry by scripts/fetch-reference.sh when absent (the order the tests use too).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
if [ -n "${AGENTWIRE_REFERENCE_DIR:-}" ]; then
  REFERENCE="$AGENTWIRE_REFERENCE_DIR"
elif [ -d "$REPO/../shared/reference/transcripts" ]; then
  REFERENCE="$REPO/../shared/reference"
else
  bash scripts/fetch-reference.sh "$REPO/.tools/reference" || { printf 'check-third-party: error: scripts/fetch-reference.sh failed\n' >&2; exit 1; }
  REFERENCE="$REPO/.tools/reference"
fi
PYTHON="$REPO/.tools/venv/bin/python"

die() { printf 'check-third-party: error: %s\n' "$*" >&2; exit 1; }
[ -d "$REFERENCE/transcripts" ] || die "no reference transcripts in $REFERENCE/transcripts (set AGENTWIRE_REFERENCE_DIR)"
REFERENCE="$(cd "$REFERENCE" && pwd)"
[ -d tools/node_modules/ajv ] && [ -d tools/node_modules/typescript ] || die "tools/node_modules is missing: run scripts/install-ci-tools.sh"
[ -x "$PYTHON" ] || die "$PYTHON is missing: run scripts/install-ci-tools.sh"
SDK_PYTHON="$REPO/.tools/sdk-venv/bin/python"
[ -x "$SDK_PYTHON" ] || die "$SDK_PYTHON is missing: run scripts/install-ci-tools.sh"
MCP_PYTHON="$REPO/.tools/mcp-venv/bin/python"
[ -x "$MCP_PYTHON" ] || die "$MCP_PYTHON is missing: run scripts/install-ci-tools.sh"
# The third-party MCP server tests/e2e/mcp_client.rs runs the engine's MCP client against.
[ -f tools/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js ] \
  || die "tools/mcp-servers/node_modules is missing: run scripts/install-ci-tools.sh"

BUNDLES=(
  generated/schema/json/agentwire_app_server_protocol.schemas.json
  generated/schema/experimental/json/agentwire_app_server_protocol.schemas.json
)
TRANSCRIPTS=(
  "$REFERENCE/transcripts/codex-0.171.0-stdio.jsonl"
  "$REFERENCE/transcripts/codex-0.171.0-turn.jsonl"
)

passed=0
failed=0
failures=()
step() {
  local name="$1"
  shift
  local started=$SECONDS
  printf '\n######## %s\n' "$name"
  if "$@"; then
    passed=$((passed + 1))
    printf -- '-------- ok: %s (%d s)\n' "$name" $((SECONDS - started))
  else
    failed=$((failed + 1))
    failures+=("$name")
    printf -- '-------- FAILED: %s (%d s)\n' "$name" $((SECONDS - started))
  fi
}

step "typescript (tools/check-ts.sh)" bash tools/check-ts.sh
for bundle in "${BUNDLES[@]}"; do
  for transcript in "${TRANSCRIPTS[@]}"; do
    case "$bundle" in */experimental/*) surface=experimental ;; *) surface=stable ;; esac
    label="$surface bundle x $(basename "$transcript")"
    step "ajv      $label" node tools/check-bundle.mjs --bundle "$bundle" --transcript "$transcript"
    step "python   $label" "$PYTHON" tools/check_bundle.py --bundle "$bundle" --transcript "$transcript"
  done
done
# `agentwire contract check` on a reference transcript: every violation must be one of the
# ALLOWED rules, and none may be a schema violation by the server. The reference sends four
# experimental members (of `Thread` and `thread/list`) to every client, with or without the
# `experimentalApi` capability; those, and only those, are known differences too.
contract_check() {
  local transcript="$1" allowed="$2" out code=0
  cargo build -q -p agentwire || return 1
  out="$(target/debug/agentwire contract check --format json "$transcript")" || code=$?
  [ "$code" -le 1 ] || return 1
  CONTRACT_REPORT="$out" "$PYTHON" -c '
import json, os, sys
report = json.loads(os.environ["CONTRACT_REPORT"])
allowed = set(sys.argv[1].split(","))
leaked = {"attachedToThreadId", "canAcceptDirectInput", "environments", "readStates"}
def known(v):
    if v["rule"] == "experimental":
        return v["direction"] == "server->client" and v["pointer"].rsplit("/", 1)[-1] in leaked
    return v["rule"] in allowed and not (v["rule"] == "schema" and v["direction"] == "server->client")
bad = [v for v in report["violations"] if not known(v)]
for v in report["violations"]:
    print(("UNEXPECTED " if v in bad else "known ") + json.dumps(v))
known = len(report["violations"]) - len(bad)
print("%d messages, %d known differences, %d unexpected" % (report["messages"], known, len(bad)))
sys.exit(1 if bad else 0)
' "$allowed"
}
step "agentwire contract check x codex-0.171.0-turn.jsonl" \
  contract_check "$REFERENCE/transcripts/codex-0.171.0-turn.jsonl" unknown-method
step "agentwire contract check x codex-0.171.0-stdio.jsonl" \
  contract_check "$REFERENCE/transcripts/codex-0.171.0-stdio.jsonl" \
  unknown-method,not-json,not-jsonrpc,schema,before-initialize,before-initialized,reinitialize
step "python SDKs (tools/sdk-smoke/smoke.py)" \
  bash -c 'cargo build -q -p agentwire && "$0" tools/sdk-smoke/smoke.py target/debug/agentwire' "$SDK_PYTHON"
step "MCP python SDK (tools/mcp-smoke/smoke.py)" \
  bash -c 'cargo build -q -p agentwire && "$0" tools/mcp-smoke/smoke.py target/debug/agentwire' "$MCP_PYTHON"
step "MCP Inspector CLI (tools/mcp-smoke/inspector.sh)" \
  bash -c 'cargo build -q -p agentwire && bash tools/mcp-smoke/inspector.sh target/debug/agentwire'
step "MCP conformance suite (tools/mcp-smoke/conformance.sh)" \
  bash -c 'cargo build -q -p agentwire && bash tools/mcp-smoke/conformance.sh target/debug/agentwire'
# The same scripted turn against agentwire and the reference: every scenario passes on
# agentwire; the turn's item lifecycle and item members are the same on both.
conformance_differential() {
  local aw="$REPO/target/debug/agentwire" out provider
  local codex="$REPO/bench/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
  cargo build -q -p agentwire || return 1
  bash scripts/install-bench-tools.sh >/dev/null || return 1
  out="$(mktemp -d)"
  provider="-c model_provider=mock -c model_providers.mock.name=mock -c 'model_providers.mock.base_url=\"{mock_url}\"' -c model_providers.mock.wire_api=responses -c model=mock-model"
  "$aw" conformance --mock-model --bounded-queue 1 --transcripts "$out/agentwire" \
    --server "$aw app-server --max-in-flight 1 $provider" || return 1
  "$aw" conformance --mock-model --scenario turns/every-item-type --transcripts "$out/reference" \
    --server "$codex app-server $provider" || return 1
  "$PYTHON" tools/conformance_diff.py "$out/agentwire/turns-every-item-type.jsonl" \
    "$out/reference/turns-every-item-type.jsonl" || return 1
  rm -rf "$out"
}
step "agentwire conformance: agentwire and the reference (codex 0.171.0)" conformance_differential
# The OpenRPC documents of both surfaces.
openrpc_cli() {
  local surface_flag="$1" checked_in="$2" out
  cargo build -q -p agentwire || return 1
  out="$(mktemp -t openrpc-XXXXXX.json)"
  target/debug/agentwire app-server generate-openrpc --out "$out" $surface_flag || return 1
  cmp "$out" "$checked_in" && rm -f "$out"
}
for surface in stable experimental; do
  case "$surface" in experimental) dir=generated/schema/experimental flag=--experimental ;; *) dir=generated/schema flag="" ;; esac
  doc="$dir/openrpc/agentwire_app_server_protocol.openrpc.json"
  step "openrpc  $surface: generate-openrpc writes the checked-in document" openrpc_cli "$flag" "$doc"
  step "openrpc  $surface: @open-rpc/meta-schema + schema-utils-js (tools/openrpc/check.mjs)" \
    node tools/openrpc/check.mjs --document "$doc" --meta "$dir/json/meta.json"
  step "openrpc  $surface: @open-rpc/mock-server + a client (tools/openrpc/mock.mjs)" \
    node tools/openrpc/mock.mjs --document "$doc"
  step "openrpc  $surface: @open-rpc/test-coverage x agentwire over ws (tools/openrpc/coverage.sh)" \
    bash -c 'cargo build -q -p agentwire && bash tools/openrpc/coverage.sh target/debug/agentwire "$0"' "$doc"
  step "openrpc  $surface: @open-rpc/mock-server over ws x agentwire-client (tools/openrpc/mock-client.mjs)" \
    bash -c 'cargo build -q -p agentwire-client --example openrpc_mock \
      && node tools/openrpc/mock-client.mjs --document "$0" --client target/debug/examples/openrpc_mock' "$doc"
  step "openrpc  $surface: @open-rpc/generator TypeScript client under tsc --strict (tools/openrpc/client.mjs)" \
    node tools/openrpc/client.mjs --document "$doc" --out "tools/openrpc/.build/client-$surface"
done
# The documents of the older pinned releases, derived from their pinned bundles.
openrpc_pinned() {
  local version flag doc out status=0
  cargo build -q -p agentwire || return 1
  out="$(mktemp -t openrpc-pinned-XXXXXX.json)"
  for version in $(ls generated/versions); do
    for flag in "" --experimental; do
      doc="generated/versions/$version/${flag:+experimental/}openrpc/agentwire_app_server_protocol.openrpc.json"
      target/debug/agentwire app-server generate-openrpc --out "$out" --protocol-version "$version" $flag \
        && cmp "$out" "$doc" \
        && node tools/openrpc/check.mjs --pinned --document "$doc" \
          --meta "generated/versions/$version/${flag:+experimental/}json/meta.json" \
        || { printf 'FAIL the OpenRPC document of %s %s\n' "$version" "${flag:-stable}"; status=1; }
    done
  done
  rm -f "$out"
  return "$status"
}
step "openrpc  every pinned release: generate-openrpc --protocol-version + @open-rpc/meta-schema (tools/openrpc/check.mjs)" \
  openrpc_pinned
# zod validators, written by the binary (`generate-ts --zod`; not checked in: docs/openrpc.md).
zod_check() {
  local dir="$1" out="$2" flag="$3"
  cargo build -q -p agentwire || return 1
  rm -rf "$out"
  target/debug/agentwire app-server generate-ts --zod --out "$out" $flag \
    && node tools/zod/check.mjs --validators "$out/zod-validators.ts" --meta "$dir/json/meta.json" \
      "${TRANSCRIPTS[@]}" codegen/openrpc/exchanges.jsonl
}
step "zod      stable: generate-ts --zod, tsc --strict, validators x transcripts (tools/zod)" \
  zod_check generated/schema tools/zod/.build/stable ""
step "zod      experimental: generate-ts --zod, tsc --strict, validators x transcripts (tools/zod)" \
  zod_check generated/schema/experimental tools/zod/.build/experimental --experimental

# Bindings in other languages (tools/quicktype/check.sh).
step "quicktype stable: python (mypy --strict, transcripts) + go (build, vet)" \
  bash tools/quicktype/check.sh "$PYTHON" generated/schema "${TRANSCRIPTS[@]}" codegen/openrpc/exchanges.jsonl
step "quicktype experimental: python (mypy --strict, transcripts) + go (build, vet)" \
  bash tools/quicktype/check.sh "$PYTHON" generated/schema/experimental "${TRANSCRIPTS[@]}" codegen/openrpc/exchanges.jsonl

# The protocol reference site in a real browser (tools/docs-site/check.sh).
# Every page of the experimental site (a superset of the stable site's pages) is rendered; the
# stable site gets the link check and its own screenshot.
step "docs     stable: links + turn/start screenshot in headless chromium" \
  bash -c 'cargo build -q -p agentwire && bash tools/docs-site/check.sh target/debug/agentwire stable --skip-page-renders'
step "docs     experimental: links + headless chromium renders every page + turn/start screenshot" \
  bash -c 'cargo build -q -p agentwire && bash tools/docs-site/check.sh target/debug/agentwire experimental'


echo
for f in "${failures[@]+"${failures[@]}"}"; do echo "failed: $f"; done
echo "third-party: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
