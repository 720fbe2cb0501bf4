#!/usr/bin/env bash
# Checks that the public Rust API of agentwire-protocol only grew since the last protocol
# release (the wire format has its own gate, codegen/tests/compat.rs).
#   - installs the pinned cargo-semver-checks into .tools/cargo (from crates.io) unless it is there
#   - the baseline is the repository itself at the last commit of the previous release: the
#     parent of the commit that opened the current generated/versions/<current> directory
#     (nothing is published to crates.io, so there is no registry baseline)
#   - `--release-type minor`: the workspace's 0.x versions would let cargo-semver-checks treat
#     0.3 -> 0.4 as a major bump and allow anything; the project's rule is additions only
#   - both sides are built with the crate's feature heuristics (every feature, so the `schema`
#     and `ts` impls are compared too)
# Exits non-zero on any semver violation.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SEMVER_CHECKS_VERSION=0.51.0
TOOLS="$REPO/.tools/cargo"

step() { printf '==> %s\n' "$*"; }

if ! "$TOOLS/bin/cargo-semver-checks" --version 2>/dev/null | grep -qF "$SEMVER_CHECKS_VERSION"; then
  step "cargo install cargo-semver-checks $SEMVER_CHECKS_VERSION into .tools/cargo"
  cargo install --locked --quiet cargo-semver-checks --version "$SEMVER_CHECKS_VERSION" --root "$TOOLS"
fi
export PATH="$TOOLS/bin:$PATH"

cd "$REPO"
current="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
opened="$(git log --diff-filter=A --format=%H -- "generated/versions/$current" | tail -1)"
if [ -z "$opened" ]; then
  echo "semver-checks: no commit added generated/versions/$current" >&2
  exit 1
fi
baseline="$(git rev-parse "$opened^")"
step "cargo semver-checks -p agentwire-protocol against $baseline (the last commit before $current)"
cargo semver-checks check-release -p agentwire-protocol --baseline-rev "$baseline" \
  --release-type minor --all-features
