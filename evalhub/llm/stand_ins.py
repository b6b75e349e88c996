"""Which provider specs stand in for real evaluators: the offline heuristic judges, the offline
calculator candidate and tiny random models. Pages built on them say that their numbers show
evalhub's workflow, not a real evaluation."""

from __future__ import annotations

from collections.abc import Iterable

from evalhub.llm.tiny import is_tiny_model

OFFLINE_PROVIDERS = {"heuristic", "arithmetic"}


def is_stand_in(spec: object) -> bool:
    text = str(spec or "")
    return text.partition(":")[0] in OFFLINE_PROVIDERS or is_tiny_model(text)


def stand_ins(specs: Iterable[object] | object) -> list[str]:
    """The specs among `specs` (one spec or several) that stand in for real evaluators."""
    many = [specs] if isinstance(specs, str | dict) or not isinstance(specs, Iterable) else list(specs)
    return [str(spec) for spec in many if is_stand_in(spec)]
