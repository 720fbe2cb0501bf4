#!/usr/bin/env bash
# Runs every test of the project: the Rust workspace (unit, integration and end-to-end tests that
# spawn the built binary, on both thread stores, PostgreSQL's against a throwaway cluster), then
# the third-party checks of the generated output (tsc, ajv, Python jsonschema) with the pinned
# tools that scripts/install-ci-tools.sh installs, then the semver check of the protocol crate's
# Rust API against the last release (scripts/semver-checks.sh), then every fuzz target for a
# bounded time (AGENTWIRE_FUZZ_SECONDS each, default 60; scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each stage says how long it took, so CI's 90-minute budget can be watched.
stage() {
  local started=$SECONDS
  "$@"
  printf '==> %s took %d s\n' "$*" $((SECONDS - started))
}
stage bash scripts/install-ci-tools.sh
# The PostgreSQL store's tests start a throwaway cluster on first use (scripts/postgres-cluster.sh);
# it is stopped when the tests are done, however they end.
trap 'bash scripts/postgres-cluster.sh stop' EXIT
stage cargo nextest run --workspace --all-targets --no-fail-fast
stage bash scripts/check-third-party.sh
stage bash scripts/semver-checks.sh
stage bash scripts/fuzz.sh
