"""Model names as their provider reads them, with no import of the registry or any SDK (the registry
checks a spec's options with them; forms and clients ask them too).

- Reasoning models: OpenAI's o-series, codex and GPT-5-and-later families take `max_completion_tokens`
  instead of `max_tokens` and only their default temperature ("Reasoning models" in OpenAI's API guide).
- The Responses API: the models only it serves go there, the rest to chat completions unless a spec says.
"""

from __future__ import annotations

import re
from typing import Any

# The o-series, the codex models and every GPT from 5 on (gpt-5, gpt-5.2, gpt-6…): a family newer than this list is one
# too, so its first call does not fail; a family's chat model (gpt-5-chat-latest) takes both forms.
REASONING_NAME = re.compile(r"^(o\d|gpt-(?:[5-9]|\d{2,})(?![0-9])|codex-)")
NOT_REASONING_NAME = re.compile(r"-chat(?:-|$)")
NAMED_BY_OPENAI = ("openai", "azure")  # providers whose model names are OpenAI's own


# Served only by OpenAI's Responses API ("v1/responses and not v1/chat/completions"): every -pro model
# (o1-pro … gpt-5.5-pro), the codex models (gpt-5-codex, gpt-5.1-codex-mini, codex-mini-latest), computer
# use and deep research. Told by family, so a new one is called there rather than sent to fail with a 404.
RESPONSES_ONLY_NAME = re.compile(r"(?:^|-)(?:pro|codex|deep-research)(?:-|$)|^codex|^computer-use")
# Of those, models that answer only with a tool evalhub does not give a judge (deep research needs web
# or file search; computer use a computer): said before any request.
NEEDS_TOOLS_NAME = re.compile(r"(?:^|-)deep-research(?:-|$)|^computer-use")
APIS = ("chat", "responses")  # a spec's `api`: OpenAI's chat completions or its Responses API


def is_responses_only(model: str) -> bool:
    return bool(RESPONSES_ONLY_NAME.search(_name(model)))


def needs_tools(model: str) -> bool:
    return bool(NEEDS_TOOLS_NAME.search(_name(model)))


def api_for(provider: str, model: str, options: dict[str, Any]) -> str:
    """The OpenAI API a spec's calls go to: its `api` option, else the Responses API for a model only it
    serves (OpenAI's and Azure's names; a compatible server's models only when the spec says so)."""
    if options.get("api"):
        return str(options["api"])
    return "responses" if provider in NAMED_BY_OPENAI and is_responses_only(model) else "chat"


def _name(model: str) -> str:
    return model.rsplit("/", 1)[-1].lower()


def is_reasoning_model(model: str) -> bool:
    name = _name(model)
    return bool(REASONING_NAME.match(name)) and not NOT_REASONING_NAME.search(name)
