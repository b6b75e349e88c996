"""Sections other apps add to a model's page (the generation app: hint tiers), registered in their
AppConfig.ready, so the dashboards read them without importing those apps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalhub.core.registry import Registry

# `rows(model, data_stamp)` gives the template variable of the section's name on the model page.
SECTIONS: Registry[Callable[[Any, str], Any]] = Registry(
    "model page section",
    docs="extending/model-sections.md",
    what="section",
    check=lambda name, rows: "" if callable(rows) else "a section is a function of (model, data stamp)",
)


def register(name: str, rows: Callable[[Any, str], Any]) -> None:
    """`rows(model, data_stamp)` gives the template variable `name` of the model page."""
    SECTIONS.add(name, rows)


def section_context(model, stamp: str) -> dict[str, Any]:
    return {name: SECTIONS[name](model, stamp) for name in SECTIONS}
