"""What a spec's model can do, as its provider defines it, without importing any SDK (forms ask too).

- Reasoning models: OpenAI's o-series and GPT-5 family take `max_completion_tokens` instead of
  `max_tokens` and only their default temperature ("Reasoning models" in OpenAI's API guide). A spec
  may say so itself (`?reasoning=true`), for a deployment or a compatible server's model whose name
  does not tell.
- Log-probabilities of the answer's tokens: OpenAI's chat models, OpenAI-compatible servers (vLLM,
  llama.cpp…) and in-process transformers models give them; reasoning models, Anthropic and the
  offline judges do not."""

from __future__ import annotations

from typing import Any

from evalhub.llm.model_names import NAMED_BY_OPENAI, api_for, is_reasoning_model


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


# Models run in this process (a GPU worker's), by the transformers library.
LOCAL_PROVIDERS = ("transformers", "yescieval")
LOGPROB_PROVIDERS = ("openai", "azure", "openai-compatible", *LOCAL_PROVIDERS)


def gives_logprobs(spec: str | dict[str, Any]) -> bool:
    """Whether the spec's calls can return the answer's token log-probabilities."""
    from evalhub.llm.registry import parse_spec
    from evalhub.llm.types import UnknownProvider

    try:
        parsed = parse_spec(spec)
    except UnknownProvider:
        return False
    if api_for(parsed.provider, parsed.model, parsed.options) == "responses":
        return False  # evalhub reads no log-probabilities from the Responses API
    return parsed.provider in LOGPROB_PROVIDERS and not is_reasoning_spec(spec)
