"""What a spec's model can do, as its provider defines it, without importing any SDK (forms ask too).

- Reasoning models: OpenAI's o-series and GPT-5 family take `max_completion_tokens` instead of
  `max_tokens` and only their default temperature ("Reasoning models" in OpenAI's API guide). A spec
  may say so itself (`?reasoning=true`), for a deployment or a compatible server's model whose name
  does not tell.
- Log-probabilities of the answer's tokens: OpenAI's chat models, OpenAI-compatible servers (vLLM,
  llama.cpp…) and in-process transformers models give them; reasoning models, Anthropic and the
  offline judges do not."""

from __future__ import annotations

import re
from typing import Any

# The o-series and every GPT from 5 on (gpt-5, gpt-5.2, gpt-6…): a family newer than this list is one
# too, so its first call does not fail; a family's chat model (gpt-5-chat-latest) takes both forms.
REASONING_NAME = re.compile(r"^(o\d|gpt-(?:[5-9]|\d{2,})(?![0-9]))")
NOT_REASONING_NAME = re.compile(r"-chat(?:-|$)")
NAMED_BY_OPENAI = ("openai", "azure")  # providers whose model names are OpenAI's own


# Served only by OpenAI's Responses API, which evalhub does not call yet: every -pro model (o1-pro …
# gpt-5.5-pro), the codex models (gpt-5-codex, gpt-5.1-codex-mini, codex-mini-latest), computer use and
# deep research. Said before any request, where a name-by-name list let new ones out to fail with a 404.
RESPONSES_ONLY_NAME = re.compile(r"(?:^|-)(?:pro|codex|deep-research)(?:-|$)|^codex|^computer-use")


def is_responses_only(model: str) -> bool:
    return bool(RESPONSES_ONLY_NAME.search(model.rsplit("/", 1)[-1].lower()))


def is_reasoning_model(model: str) -> bool:
    name = model.rsplit("/", 1)[-1].lower()
    return bool(REASONING_NAME.match(name)) and not NOT_REASONING_NAME.search(name)


def is_reasoning_spec(spec: str | dict[str, Any]) -> bool:
    """A spec whose calls are made as a reasoning model's (no temperature is sent); False for a spec
    that does not parse (the form says why elsewhere)."""
    from evalhub.llm.registry import parse_spec
    from evalhub.llm.types import UnknownProvider

    try:
        parsed = parse_spec(spec)
    except UnknownProvider:
        return False
    if "reasoning" in parsed.options:
        return bool(parsed.options["reasoning"])
    return parsed.provider in NAMED_BY_OPENAI and is_reasoning_model(parsed.model)


LOGPROB_PROVIDERS = ("openai", "azure", "openai-compatible", "transformers")


def gives_logprobs(spec: str | dict[str, Any]) -> bool:
    """Whether the spec's calls can return the answer's token log-probabilities."""
    from evalhub.llm.registry import parse_spec
    from evalhub.llm.types import UnknownProvider

    try:
        parsed = parse_spec(spec)
    except UnknownProvider:
        return False
    return parsed.provider in LOGPROB_PROVIDERS and not is_reasoning_spec(spec)
