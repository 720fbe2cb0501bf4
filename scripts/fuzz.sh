#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time and prints how many inputs each tried.
#   - installs the pinned cargo-fuzz into .tools/cargo (from crates.io) unless it is there
#   - builds the targets with coverage instrumentation and no sanitizer (the workspace forbids
#     `unsafe`, so AddressSanitizer would find nothing the Rust checks do not), debug assertions on
#   - runs each for AGENTWIRE_FUZZ_SECONDS seconds (default 60) from the committed seed corpus
#     (fuzz/corpus/<target>), growing a working corpus under target/fuzz-corpus/
# A crash, a failed check or a timeout fails the script; libFuzzer prints the input and
# saves it under fuzz/artifacts/<target>/ (replay: see fuzz/README.md).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO_FUZZ_VERSION=0.13.2
SECONDS_EACH="${AGENTWIRE_FUZZ_SECONDS:-60}"
TARGETS=(handle_message ws_frames apply_patch)

step() { printf '==> %s\n' "$*"; }

TOOLS="$REPO/.tools/cargo"
if ! "$TOOLS/bin/cargo-fuzz" --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  step "cargo install cargo-fuzz $CARGO_FUZZ_VERSION into .tools/cargo"
  cargo install --locked --quiet cargo-fuzz --version "$CARGO_FUZZ_VERSION" --root "$TOOLS"
fi
export PATH="$TOOLS/bin:$PATH"
# Lets the stable toolchain take the instrumentation flags cargo-fuzz passes.
export RUSTC_BOOTSTRAP=1

cd "$REPO/fuzz"
# fuzz/ is a workspace of its own: its lock file must pin what the main one pins.
if ! cargo metadata --locked --format-version 1 >/dev/null 2>&1; then
  echo "fuzz/Cargo.lock is stale: cp Cargo.lock fuzz/ && (cd fuzz && cargo metadata --format-version 1 >/dev/null)" >&2
  exit 1
fi
FUZZ_TARGET_DIR="$REPO/target/fuzz"
step "cargo fuzz build (coverage instrumentation, no sanitizer)"
cargo fuzz build --sanitizer none --target-dir "$FUZZ_TARGET_DIR"

declare -A RUNS
for target in "${TARGETS[@]}"; do
  work="$REPO/target/fuzz-corpus/$target"
  mkdir -p "$work"
  seeds=()
  [ -d "corpus/$target" ] && seeds=("corpus/$target")
  options=(-max_total_time="$SECONDS_EACH" -timeout=20 -print_final_stats=1)
  [ -f "$target.dict" ] && options+=(-dict="$target.dict")
  step "fuzz $target for ${SECONDS_EACH}s"
  log="$REPO/target/fuzz-$target.log"
  status=0
  cargo fuzz run --sanitizer none --target-dir "$FUZZ_TARGET_DIR" "$target" "$work" "${seeds[@]}" \
    -- "${options[@]}" >"$log" 2>&1 || status=$?
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|Done )' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "fuzz: $target failed (exit $status); the input is under fuzz/artifacts/$target/" >&2
    exit 1
  fi
  RUNS[$target]="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
done

printf '\n%-16s %14s %10s\n' target inputs seconds
for target in "${TARGETS[@]}"; do
  printf '%-16s %14s %10s\n' "$target" "${RUNS[$target]:-?}" "$SECONDS_EACH"
done
printf 'reproduce: AGENTWIRE_FUZZ_SECONDS=%s bash scripts/fuzz.sh\n' "$SECONDS_EACH"
