#!/usr/bin/env bash
# Installs the pinned third-party toolchain used by scripts/check-third-party.sh:
#   - tools/node_modules   from tools/package-lock.json (npm ci: exact versions, integrity-checked)
#   - .tools/venv          a Python venv with exactly the pins of tools/requirements.txt
# Idempotent: re-running reinstalls the npm tree from the lock file and leaves a venv that
# already matches the pins alone. Only the npm registry and PyPI are contacted.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.tools/venv"
REQS="$REPO/tools/requirements.txt"

step() { printf '==> %s\n' "$*"; }
die() { printf 'install-ci-tools: error: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed"
command -v npm >/dev/null || die "npm is not installed"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$REPO/tools/package-lock.json" ] || die "tools/package-lock.json is missing"
[ -f "$REQS" ] || die "tools/requirements.txt is missing"

step "node $(node --version), npm $(npm --version), $(python3 --version)"

step "npm ci --prefix tools (from tools/package-lock.json)"
npm ci --prefix "$REPO/tools" --no-audit --no-fund --ignore-scripts

# The wanted set: every non-comment line of requirements.txt, normalised like pip freeze.
normalise() { tr 'A-Z_' 'a-z-' | sed -e 's/[[:space:]]//g' | grep -v '^$' | sort; }
wanted="$(sed -e 's/#.*//' "$REQS" | normalise)"
installed() { "$VENV/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null | normalise; }

mkdir -p "$REPO/.tools"
# Keep the whole folder out of git without touching the root .gitignore.
[ -f "$REPO/.tools/.gitignore" ] || printf '*\n' > "$REPO/.tools/.gitignore"

if [ -x "$VENV/bin/python" ] && [ "$(installed)" = "$wanted" ]; then
  step "python venv $VENV already has exactly the pins of tools/requirements.txt"
else
  if [ -e "$VENV" ]; then
    step "removing stale venv $VENV"
    rm -rf "$VENV"
  fi
  step "python3 -m venv $VENV"
  python3 -m venv "$VENV"
  step "pip install -r tools/requirements.txt"
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -r "$REQS"
fi

# Exactly the pins, nothing more, nothing less.
got="$(installed)"
if [ "$got" != "$wanted" ]; then
  diff <(printf '%s\n' "$wanted") <(printf '%s\n' "$got") >&2 || true
  die "the venv does not match tools/requirements.txt (< wanted, > installed)"
fi
"$VENV/bin/python" -m pip check --disable-pip-version-check

step "installed: typescript $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/typescript/package.json"), ajv $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/ajv/package.json"), jsonschema $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("jsonschema"))')"
