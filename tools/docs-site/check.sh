#!/usr/bin/env bash
# The protocol reference site (`agentwire app-server generate-docs`, docs/reference-site.md) in a
# real browser. For the stable and the experimental surface:
#   - links.py finds no broken internal link or anchor, no absolute link and no <script>, and
#     does fail on a copy of the site with one planted broken link (so the check can fail);
#   - Debian's chromium (headless, --no-sandbox because CI runs as root), one browser driven by
#     render.mjs, loads every page; each must show its <h1> and footer, i.e. the whole page was
#     parsed and rendered; a page cut short must fail that check;
#   - a screenshot of the turn/start page is written to $ARTIFACTS/docs-site/ (default
#     target/ci-artifacts, kept by CI as an artifact) and checked to be a PNG.
# usage: tools/docs-site/check.sh AGENTWIRE_BINARY stable|experimental [--skip-page-renders]
# --skip-page-renders renders the turn/start page only; CI renders every page of the experimental
# site, whose pages are a superset of the stable one's.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$1"
SURFACE="$2"
RENDER_PAGES=1
[ "${3:-}" = "--skip-page-renders" ] && RENDER_PAGES=0
ARTIFACTS="${AGENTWIRE_CI_ARTIFACTS:-$REPO/target/ci-artifacts}/docs-site"
CHROMIUM="$(command -v chromium || true)"
[ -n "$CHROMIUM" ] || { echo "docs-site: chromium is not installed (scripts/install-ci-tools.sh)" >&2; exit 1; }
flag=""
[ "$SURFACE" = experimental ] && flag="--experimental"

work="$(mktemp -d -t docs-site-XXXXXX)"
trap 'rm -rf "$work"' EXIT
site="$work/site"
"$BIN" app-server generate-docs --out "$site" $flag

python3 "$REPO/tools/docs-site/links.py" "$site"
cp -r "$site" "$work/planted"
printf '<a href="types/NoSuchType.html">x</a>\n' >> "$work/planted/index.html"
if python3 "$REPO/tools/docs-site/links.py" "$work/planted" 2>/dev/null; then
  echo "docs-site: the link checker accepted a planted broken link" >&2
  exit 1
fi

# Every page in one headless Chromium (tools/docs-site/render.mjs, playwright-core): each must
# have its <h1> and the footer, i.e. the whole page was parsed and rendered. A copy of one page
# cut short must fail the same check, so the check can fail.
mkdir -p "$ARTIFACTS"
shot="$ARTIFACTS/turn-start-$SURFACE.png"
rm -f "$shot"
planted="$work/planted-render"
mkdir -p "$planted"
cp "$site/methods/turn-start.html" "$planted/whole.html"
head -c 400 "$site/methods/turn-start.html" > "$planted/cut.html"
if CHROMIUM="$CHROMIUM" node "$REPO/tools/docs-site/render.mjs" --site "$planted" >/dev/null 2>&1; then
  echo "docs-site: the render check accepted a page cut short" >&2
  exit 1
fi
only=()
[ "$RENDER_PAGES" -eq 1 ] || only=(--only methods/turn-start.html)
CHROMIUM="$CHROMIUM" node "$REPO/tools/docs-site/render.mjs" --site "$site" --label "$SURFACE" \
  --screenshot methods/turn-start.html "$shot" "${only[@]}"
[ "$RENDER_PAGES" -eq 1 ] || echo "docs-site: page-by-page render skipped ($SURFACE)"
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] \
  || { echo "docs-site: no PNG screenshot at $shot" >&2; exit 1; }
echo "docs-site: screenshot $shot ($(stat -c %s "$shot") bytes)"
