"""What goes into and comes out of a model call, and the errors a call can end with."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evalhub.core.runs.usage import CallStats

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass
class Completion:
    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = ""
    cached: bool = False
    cost_usd: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    reasoning_tokens: int = 0  # of output_tokens, those a reasoning model spent reasoning
    reasoning_summary: str = ""  # what the provider says of the model's reasoning, when asked: never the verdict
    # Asked for (top_logprobs): each answer token as [token, log-probability, [[alternative, log-probability], …]]
    token_logprobs: list[list[Any]] | None = None

    def stats(self) -> CallStats:
        """The call's tokens, latency, cache hit and cost, for the row that records it."""
        return CallStats(
            self.input_tokens,
            self.output_tokens,
            round(self.latency_s, 3),
            self.cached,
            self.cost_usd,
            self.reasoning_tokens,
        )


class LLMError(Exception):
    """A model call failed. The message names provider, model and cause, never a key."""

    def __init__(self, provider: str, model: str, cause: str) -> None:
        self.provider, self.model, self.cause = provider, model, redact(cause)
        super().__init__(f"{provider}:{model}: {self.cause}")


class ProviderUnavailable(LLMError):
    """Rate limits, server errors, timeouts or connection errors outlasted every retry."""


class AuthenticationFailed(LLMError):
    """The API key is missing or was rejected; the message names the variable to set."""


class RequestRejected(LLMError):
    """The provider refused the request itself (4xx other than auth and rate limits); retrying won't help."""


class UnknownProvider(ValueError):
    pass


class CarriesCredential(UnknownProvider):
    """A spec carries a key (in its URL or an option) where it must only name one."""


_SECRET_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{6,}"),  # OpenAI / Anthropic style keys
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)(api[_-]?key[\"'=:\s]+)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://)[^/\s:@|]+(?::[^/\s@|]*)?(?=@)"),  # a URL's user:password@
    re.compile(r"(?i)([?&](?:[a-z_\-]*(?:key|token|secret|password|sig|signature))=)[^&\s|#\"']+"),  # ?key=…
]


def redact(text: str) -> str:
    """Hide anything that looks like a credential (error texts sometimes echo part of a key)."""
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + "***", text)
    return text
