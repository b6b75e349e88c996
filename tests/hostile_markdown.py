"""Hostile Markdown, and a check that what a page rendered from it holds nothing active."""

from __future__ import annotations

from html.parser import HTMLParser

from evalhub.core.text.markdown import ALLOWED_ATTRIBUTES, ALLOWED_TAGS

HOSTILE = """# Heading
<script>alert('script')</script>
[click](javascript:alert('link')) [data](data:text/html;base64,PHNjcmlwdD4=) [vb](vbscript:msgbox(1))
![remote](https://tracker.example/pixel.png) ![inline](data:image/svg+xml;base64,PHN2Zz4=)
<img src=x onerror="alert('onerror')"> <div hx-get="/admin/" hx-trigger="load">htmx</div>
<a href="/x" onclick="alert('onclick')">raw link</a> <iframe src="https://example.org"></iframe>
<style>body{display:none}</style> <form action="/logout/" method="post"><button>go</button></form>
[auto](<javascript:alert(1)>) <https://ok.example/> <javascript:alert('autolink')>

| a | b |
|---|---|
| <b onmouseover="alert(1)">x</b> | [y](JaVaScRiPt:alert(1)) |

```html
<script>alert('in code')</script>
```
"""


class _Collector(HTMLParser):
    """The start tags (with attributes) inside every rendered-Markdown box of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # >0 while inside a div.md
        self.boxes = 0
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if self.depth:
            self.elements.append((tag, dict(attrs)))
            if tag == "div":
                self.depth += 1
        elif tag == "div" and "md" in classes:
            self.depth, self.boxes = 1, self.boxes + 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag == "div":
            self.depth -= 1


def active_markup(page: str) -> tuple[int, list[str]]:
    """How many Markdown boxes the page has, and every tag, attribute or link in them that could act."""
    collector = _Collector()
    collector.feed(page)
    problems = []
    for tag, attrs in collector.elements:
        if tag not in ALLOWED_TAGS:
            problems.append(f"<{tag}>")
        for name, value in attrs.items():
            if name not in ALLOWED_ATTRIBUTES.get(tag, set()) and name != "rel":
                problems.append(f"<{tag} {name}>")
            if name == "href" and not (value or "").startswith(("http://", "https://", "mailto:")):
                problems.append(f"<{tag} href={value}>")
    return collector.boxes, problems
