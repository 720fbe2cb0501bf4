#!/usr/bin/env bash
# Records the reference site's examples (codegen/docs/exchanges.jsonl): runs the end-to-end walk
# that sends every client request of the method table through the binary with `--record`
# (tests/e2e/served.rs), which writes the distilled transcript there (tests/e2e/docs_examples.rs
# says what is kept). Then `cargo run -p agentwire-codegen -- write` is not needed: the site is
# generated from the file when `generate-docs` runs. Commit the file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="$PWD/codegen/docs/exchanges.jsonl"
mkdir -p "$(dirname "$out")"
AGENTWIRE_DOCS_EXAMPLES_OUT="$out" \
  cargo nextest run -p agentwire --no-fail-fast -E 'test(=served::every_declared_client_request_is_served)'
echo "wrote $out ($(wc -l < "$out") lines)"
