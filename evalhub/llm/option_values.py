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

    def strings(kind: Any) -> list[str]:
        return [arg for arg in get_args(kind) if isinstance(arg, str)] + [
            value for arg in get_args(kind) if not isinstance(arg, str) for value in strings(arg)
        ]

    return tuple(strings(ReasoningEffort))


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

    hints = get_type_hints(OutputConfigParam)
    return tuple(value for kind in get_args(hints["effort"]) for value in get_args(kind) if isinstance(value, str))
