"""Slugs: the one definition every way in (imports, forms, admin, the database) agrees on."""

from __future__ import annotations

import re
from collections.abc import Iterable

# One character class; `^…$` would also match "name\n" ($ matches before a final newline), which
# once let a slug through that no URL could carry, and every list page that linked it failed.
SLUG_CHARACTERS = "-a-zA-Z0-9_"
_SLUG = re.compile(f"[{SLUG_CHARACTERS}]+")
_NOT_SLUG = re.compile(f"[^{SLUG_CHARACTERS}]+")


def is_slug(text: str) -> bool:
    return _SLUG.fullmatch(text) is not None


def slug_for(name: str) -> str:
    """A slug made from any name: each run of other characters becomes one '-' ("gpt-3.5-turbo" →
    "gpt-3-5-turbo"); the same name always gives the same slug."""
    return name if is_slug(name) else (_NOT_SLUG.sub("-", name.strip()).strip("-") or "unnamed")


def repaired_slugs(slugs: Iterable[str]) -> dict[str, str]:
    """A valid, unique slug for every invalid one (old → new); valid slugs keep theirs."""
    slugs = list(slugs)
    taken = {slug for slug in slugs if is_slug(slug)}
    repairs: dict[str, str] = {}
    for slug in slugs:
        if is_slug(slug):
            continue
        base = slug_for(slug)
        candidate, number = base, 2
        while candidate in taken:
            candidate, number = f"{base}-{number}", number + 1
        taken.add(candidate)
        repairs[slug] = candidate
    return repairs
