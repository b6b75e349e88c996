"""Provider specs → clients. Modules load on first use, so torch loads only for local models.

A spec is a short string or a dict:
    "openai:gpt-4o-mini"
    "anthropic:claude-3-5-sonnet-latest"
    "openai-compatible:http://127.0.0.1:8001/v1|meta-llama/Llama-3.1-8B-Instruct"
    "transformers:/models/llama"            (a local path, or a hub id where a hub is reachable)
    "heuristic" or "heuristic:reference"    (the offline judge and its variants)
    {"provider": "openai", "model": "gpt-4o-mini", "max_concurrency": 4}
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalhub.llm.types import UnknownProvider

if TYPE_CHECKING:
    from evalhub.llm.base import ChatClient

CHAT_PROVIDERS = {
    "openai": "evalhub.llm.providers.openai_chat:OpenAIChat",
    "openai-compatible": "evalhub.llm.providers.openai_chat:OpenAICompatibleChat",
    "anthropic": "evalhub.llm.providers.anthropic_chat:AnthropicChat",
    "transformers": "evalhub.llm.providers.transformers_chat:TransformersChat",
    "heuristic": "evalhub.llm.providers.heuristic:HeuristicJudge",
    "arithmetic": "evalhub.llm.providers.arithmetic:ArithmeticCandidate",
}
SCORERS = {
    "transformers": "evalhub.llm.scoring.transformers_scorer:TransformersScorer",
    "openai-compatible": "evalhub.llm.scoring.completions_scorer:CompletionsScorer",
}
DEFAULT_MODELS = {"heuristic": "balanced", "arithmetic": "calculator"}


@dataclass(frozen=True)
class ProviderSpec:
    provider: str
    model: str
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.base_url:
            return f"{self.provider}:{self.base_url}|{self.model}"
        return f"{self.provider}:{self.model}"


def parse_spec(spec: str | dict[str, Any] | ProviderSpec) -> ProviderSpec:
    if isinstance(spec, ProviderSpec):
        return spec
    if isinstance(spec, dict):
        options = dict(spec)
        provider = str(options.pop("provider", ""))
        model = str(options.pop("model", DEFAULT_MODELS.get(provider, "")))
        base_url = options.pop("base_url", None)
        return _checked(ProviderSpec(provider, model, base_url, options))
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownProvider(f"a provider spec must be a non-empty string or a dict, not {spec!r}.")
    provider, _, rest = spec.strip().partition(":")
    base_url = None
    if provider == "openai-compatible":
        base_url, bar, model = rest.rpartition("|")
        if not bar or not base_url.startswith(("http://", "https://")):
            raise UnknownProvider(
                f"{spec!r}: write openai-compatible specs as 'openai-compatible:http://host:port/v1|model-name'."
            )
    elif provider == "anthropic" and rest.startswith(("http://", "https://")):
        # An Anthropic-compatible server, named like openai-compatible ones: anthropic:URL|model.
        base_url, bar, model = rest.rpartition("|")
        if not bar:
            raise UnknownProvider(
                f"{spec!r}: write Anthropic-compatible specs as 'anthropic:http://host:port|model-name'."
            )
    else:
        model = rest or DEFAULT_MODELS.get(provider, "")
    return _checked(ProviderSpec(provider, model, base_url))


def _checked(spec: ProviderSpec) -> ProviderSpec:
    if spec.provider not in CHAT_PROVIDERS:
        raise UnknownProvider(_unknown_message("provider", spec.provider, CHAT_PROVIDERS))
    if not spec.model:
        raise UnknownProvider(f"provider {spec.provider!r} needs a model, e.g. '{spec.provider}:MODEL'.")
    return spec


def _unknown_message(kind: str, name: str, known: dict[str, str]) -> str:
    hint = difflib.get_close_matches(name, known, n=1)
    suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    return f"unknown {kind} {name!r}.{suggestion} Known: {', '.join(sorted(known))}."


def _load(target: str) -> type[Any]:
    module, _, name = target.partition(":")
    loaded: type[Any] = getattr(importlib.import_module(module), name)
    return loaded


def get_chat_client(spec: str | dict[str, Any] | ProviderSpec, **options: Any) -> ChatClient:
    """A chat client for `spec`; `options` (cache, meter, limits, prices…) go to its constructor."""
    parsed = parse_spec(spec)
    client_class = _load(CHAT_PROVIDERS[parsed.provider])
    arguments = {**parsed.options, **options}
    if parsed.base_url:
        arguments["base_url"] = parsed.base_url
    client: ChatClient = client_class(parsed.model, **arguments)
    return client


def get_scorer(spec: str | dict[str, Any] | ProviderSpec, **options: Any) -> Any:
    """A log-probability scorer (transformers in-process, or an OpenAI-compatible completions server)."""
    parsed = parse_spec(spec)
    if parsed.provider not in SCORERS:
        raise UnknownProvider(_unknown_message("log-probability scorer", parsed.provider, SCORERS))
    arguments = {**parsed.options, **options}
    if parsed.base_url:
        arguments["base_url"] = parsed.base_url
    return _load(SCORERS[parsed.provider])(parsed.model, **arguments)
