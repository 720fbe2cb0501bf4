#!/usr/bin/env python3
"""Internal link checker for the site `agentwire app-server generate-docs` writes.

Parses every HTML file under SITE with the standard library's HTML parser and checks every
`href` and `src`: a relative target must be a file inside SITE, and a `#fragment` must be an
`id` of the target page. Any absolute URL (scheme or `//`) is reported too: the site is meant
to work offline from file://. Scripts may only be files of the site (`<script src>`, checked
like any link): an inline script or an inline event handler (`onclick=…`) is reported.

usage: links.py SITE
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.inline_scripts = 0
        self.handlers: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.in_script = True
            if not any(name == "src" and value for name, value in attrs):
                self.inline_scripts += 1
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(name)
            if value is None:
                continue
            if name in ("href", "src"):
                self.links.append(value)
            elif name == "id":
                self.ids.add(value)


    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.inline_scripts += 1


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    site = Path(sys.argv[1]).resolve()
    pages = sorted(site.rglob("*.html"))
    if not pages:
        print(f"links: no HTML files under {site}", file=sys.stderr)
        return 1
    parsed = {path: parse(path) for path in pages}
    problems: list[str] = []
    checked = 0
    for path, page in parsed.items():
        rel = path.relative_to(site)
        if page.inline_scripts:
            problems.append(f"{rel}: has {page.inline_scripts} inline script(s)")
        for handler in page.handlers:
            problems.append(f"{rel}: has an inline event handler ({handler})")
        for link in page.links:
            checked += 1
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                problems.append(f"{rel}: absolute link {link}")
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if site not in target.parents and target != site:
                problems.append(f"{rel}: {link} leaves the site")
            elif not target.is_file():
                problems.append(f"{rel}: {link} -> no such file")
            elif parts.fragment:
                ids = parsed[target].ids if target in parsed else set()
                if parts.fragment not in ids:
                    problems.append(f"{rel}: {link} -> no id {parts.fragment!r}")
    for problem in problems:
        print(f"links: {problem}", file=sys.stderr)
    print(f"links: {len(pages)} pages, {checked} links checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
