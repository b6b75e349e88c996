"""Values a spec's options may take, as the providers' SDKs type them (convention 20): read from the
SDKs' own types, so a level a new SDK release adds is one evalhub takes. Imported by the registry, which
checks a spec's options where a spec is read (a form, a command, a job's own check)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, get_args, get_type_hints


@lru_cache(maxsize=1)
def reasoning_efforts() -> tuple[str, ...]:
    """The reasoning efforts OpenAI's SDK types (`openai.types.shared.ReasoningEffort`): a new level the
    SDK offers is one evalhub takes, with no list of its own to fall behind."""
    from openai.types.shared import ReasoningEffort

    return _strings(ReasoningEffort)


@lru_cache(maxsize=1)
def reasoning_summaries() -> tuple[str, ...]:
    """The reasoning summaries the Responses API takes (`openai.types.shared_params.Reasoning`'s `summary`)."""
    from openai.types.shared_params import Reasoning

    return _strings(get_type_hints(Reasoning)["summary"])


def _strings(kind: Any) -> tuple[str, ...]:
    """The string values of a Literal, through Optional and nested Literals."""
    return tuple(arg for arg in get_args(kind) if isinstance(arg, str)) + tuple(
        value for arg in get_args(kind) if not isinstance(arg, str) for value in _strings(arg)
    )


MIN_THINKING_BUDGET = 1024  # Anthropic's least budget_tokens for extended thinking
ADAPTIVE = "adaptive"


def thinking_budget(value: Any) -> int | str | None:
    """A spec's `thinking`: "adaptive", or a budget of tokens (at least Anthropic's minimum); None when it
    is neither."""
    if str(value).strip().lower() == ADAPTIVE:
        return ADAPTIVE
    try:
        budget = int(str(value).strip())
    except ValueError:
        return None
    return budget if budget >= MIN_THINKING_BUDGET else None


@lru_cache(maxsize=1)
def claude_efforts() -> tuple[str, ...]:
    """The efforts Anthropic's SDK types for Claude (`OutputConfigParam`'s `effort`)."""
    from anthropic.types import OutputConfigParam

    return _strings(get_type_hints(OutputConfigParam)["effort"])
