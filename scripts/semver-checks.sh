#!/usr/bin/env bash
# Checks that the public Rust API of the published library crates (agentwire-protocol,
# agentwire-client, agentwire-runtime) only grew since its baseline (the wire format has its own
# gate, codegen/tests/compat.rs).
#   - installs the pinned cargo-semver-checks into .tools/cargo (from crates.io) unless it is there
#   - the release baseline is the repository itself at the last commit of the previous release:
#     the parent of the commit that opened the current generated/versions/<current> directory
#     (nothing is published to crates.io, so there is no registry baseline)
#   - a deliberate break is acknowledged by a line `<crate> <reason>` in scripts/semver-breaks.txt;
#     a crate's baseline is then the later of the release baseline and the commit that last added
#     or removed a line of that crate (`git log -1 -G '^<crate> '`), so the commit that lands the
#     break is its own baseline and any later accidental break fails again
#   - a line not committed yet (the working tree's lines for a crate differ from HEAD's) skips
#     that crate, loudly, naming the reason: the break is acknowledged but has no commit to be
#     the baseline until it lands
#   - `--release-type minor`: the workspace's 0.x versions would let cargo-semver-checks treat
#     0.3 -> 0.4 as a major bump and allow anything; the project's rule is additions only
#   - both sides are built with every feature, so feature-gated impls are compared too
# SEMVER_CRATES="agentwire-client" limits the run to some of the crates.
# Exits non-zero on any semver violation in any checked crate.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SEMVER_CHECKS_VERSION=0.51.0
TOOLS="$REPO/.tools/cargo"
BREAKS=scripts/semver-breaks.txt
CRATES=(${SEMVER_CRATES:-agentwire-protocol agentwire-client agentwire-runtime})

step() { printf '==> %s\n' "$*"; }
loud() { printf '\n!!! %s\n\n' "$*" >&2; }

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
release_baseline="$(git rev-parse "$opened^")"

# The lines of $BREAKS about crate $1 (comments and blank lines aside), from stdin.
lines_of() { grep -E "^$1 " || true; }

failed=()
for crate in "${CRATES[@]}"; do
  baseline="$release_baseline"
  why="the last commit before $current"
  worktree_lines="$( { [ -f "$BREAKS" ] && cat "$BREAKS"; } | lines_of "$crate")"
  head_lines="$( (git show "HEAD:$BREAKS" 2>/dev/null || true) | lines_of "$crate")"
  if [ "$worktree_lines" != "$head_lines" ]; then
    loud "semver-checks: SKIPPING $crate: $BREAKS acknowledges a break that is not committed yet:
$(diff <(printf '%s\n' "$head_lines") <(printf '%s\n' "$worktree_lines") | sed -n 's/^> /    /p')
    Commit the line with the change; that commit becomes $crate's baseline."
    continue
  fi
  if [ -n "$head_lines" ]; then
    acknowledged="$(git log -1 --format=%H -G "^$crate " -- "$BREAKS")"
    if [ -n "$acknowledged" ] && git merge-base --is-ancestor "$baseline" "$acknowledged"; then
      baseline="$acknowledged"
      why="the commit that acknowledged a break in $BREAKS: $(printf '%s' "$head_lines" | tail -1 | cut -d' ' -f2-)"
    fi
  fi
  step "cargo semver-checks -p $crate against $baseline ($why)"
  if ! cargo semver-checks check-release -p "$crate" --baseline-rev "$baseline" \
    --release-type minor --all-features; then
    failed+=("$crate")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "semver-checks: breaking changes in: ${failed[*]} (acknowledge a deliberate one with a line in $BREAKS)" >&2
  exit 1
fi
