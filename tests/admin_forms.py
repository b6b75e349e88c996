"""Posting an admin page's own form back, as a browser would, with some fields changed."""

from __future__ import annotations

from html.parser import HTMLParser


class FormFields(HTMLParser):
    """What a browser would post back from a page's form, unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._select = self._textarea = ""

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        name = found.get("name") or ""
        if tag == "input" and name and found.get("type") not in ("submit", "button", "file"):
            if found.get("type") not in ("checkbox", "radio") or "checked" in found:
                self.data[name] = found.get("value") or ("on" if found.get("type") == "checkbox" else "")
        elif tag == "select" and name:
            self._select, self.data[name] = name, ""
        elif tag == "option" and self._select and "selected" in found:
            self.data[self._select] = found.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea, self.data[name] = name, ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = ""
        elif tag == "textarea":
            self._textarea = ""

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data.removeprefix("\n") if not self.data[self._textarea] else data


def edited_in_admin(client, url: str, **changes: str) -> None:
    page = client.get(url)
    assert page.status_code == 200
    form = FormFields()
    form.feed(page.content.decode())
    answer = client.post(url, {**form.data, **changes, "_save": "Save"})
    assert answer.status_code == 302, answer.content.decode()[:2000]
