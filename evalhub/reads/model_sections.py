"""Sections other apps add to a model's page (the generation app: hint tiers), registered in their
AppConfig.ready, so the dashboards read them without importing those apps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SECTIONS: dict[str, Callable[[Any, str], Any]] = {}


def register(name: str, rows: Callable[[Any, str], Any]) -> None:
    """`rows(model, data_stamp)` gives the template variable `name` of the model page."""
    SECTIONS[name] = rows


def section_context(model, stamp: str) -> dict[str, Any]:
    return {name: rows(model, stamp) for name, rows in SECTIONS.items()}
