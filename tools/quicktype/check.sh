#!/usr/bin/env bash
# Bindings in other languages from the flat bundle of one surface, with quicktype (pinned in
# tools/package.json):
#   - Python (`--just-types --python-version 3.10`: dataclasses and enums, no untyped helpers)
#     passes `mypy --strict` (pinned in tools/requirements.txt), and check_python.py (itself
#     `mypy --strict` clean) builds those dataclasses from every server message of the given
#     transcripts and rejects planted bad messages;
#   - Go (`--just-types-and-package`) passes `go build` and `go vet` (Debian golang-go).
# usage: tools/quicktype/check.sh PYTHON GENERATED_DIR TRANSCRIPT...
#   (GENERATED_DIR: generated/schema or generated/schema/experimental)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="$1"
DIR="$2"
shift 2
QUICKTYPE="$REPO/tools/node_modules/.bin/quicktype"
[ -x "$QUICKTYPE" ] || { echo "quicktype: $QUICKTYPE is missing: run scripts/install-ci-tools.sh" >&2; exit 1; }
command -v go >/dev/null || { echo "quicktype: go is missing: run scripts/install-ci-tools.sh" >&2; exit 1; }
bundle="$DIR/json/agentwire_app_server_protocol.flat.schemas.json"
meta="$DIR/json/meta.json"

work="$(mktemp -d -t quicktype-XXXXXX)"
trap 'rm -rf "$work"' EXIT

# quicktype prints a note per `interface{}` it had to leave untyped; keep them out of the log.
"$QUICKTYPE" --src-lang schema --lang python --python-version 3.10 --just-types \
  -o "$work/agentwire_types.py" "$bundle#/definitions/" 2>"$work/python.notes"
echo "quicktype: python: $(wc -l < "$work/agentwire_types.py") lines"
"$PYTHON" -m mypy --strict --no-incremental "$work/agentwire_types.py" "$REPO/tools/quicktype/check_python.py"
"$PYTHON" "$REPO/tools/quicktype/check_python.py" "$work/agentwire_types.py" "$meta" "$@"

mkdir -p "$work/go"
"$QUICKTYPE" --src-lang schema --lang go --package agentwire --just-types-and-package \
  -o "$work/go/agentwire.go" "$bundle#/definitions/" 2>"$work/go.notes"
printf 'module example.com/agentwire\n\ngo 1.19\n' > "$work/go/go.mod"
echo "quicktype: go: $(wc -l < "$work/go/agentwire.go") lines"
(cd "$work/go" && GOFLAGS=-mod=mod GOCACHE="$work/gocache" go build ./... && GOCACHE="$work/gocache" go vet ./...)
echo "quicktype: go build + go vet ok"
