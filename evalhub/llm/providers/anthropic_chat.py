"""Anthropic's Messages API."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import anthropic

from evalhub.llm.base import ChatClient, Failure, Sampling, StreamEnded, UnusableAnswer
from evalhub.llm.option_values import ADAPTIVE, thinking_budget
from evalhub.llm.providers.http_errors import classify_status, classify_transport, connection_failure
from evalhub.llm.providers.transport import async_http_client, headers_named_by
from evalhub.llm.types import AuthenticationFailed, Completion, Message, RequestRejected

ANTHROPIC_KEY = "ANTHROPIC_API_KEY"


class AnthropicChat(ChatClient):
    provider = "anthropic"
    shares_limits = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        send_temperature: bool = False,
        thinking: str | int | None = None,
        effort: str | None = None,
        headers_env: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(model, endpoint=base_url or "", **options)
        # Claude's extended thinking ("adaptive" or a budget of tokens) and effort, as the spec asks.
        self.thinking = thinking_budget(thinking) if thinking is not None else None
        self.effort = effort
        self.headers_env = headers_env  # the variable holding the extra headers (a gateway's), if any
        self.base_url = base_url
        # This SDK release has no sampling temperature; servers that still take one get it as an extra field.
        self.send_temperature = send_temperature
        self._api_key = api_key
        self.key_variable = api_key_env or ANTHROPIC_KEY  # the spec names the variable, never the key
        self._client: anthropic.AsyncAnthropic | None = None

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            key = self._api_key or os.environ.get(self.key_variable)
            if not key:
                raise AuthenticationFailed(self.provider, self.model, f"no API key: set {self.key_variable}")
            extra = headers_named_by(self.headers_env, self.provider, self.model)
            self._client = anthropic.AsyncAnthropic(
                api_key=key,
                # Anthropic's API and compatible servers read the key from x-api-key; this SDK sends a
                # bearer token, which a server that checks x-api-key refuses with a 401.
                default_headers={**extra, "x-api-key": key},
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout_s,
                http_client=async_http_client(anthropic, self.timeout_s, self.heed_rate_headers),
            )
        return self._client

    def _request(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        # The Messages API takes the system prompt apart from the turns.
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        request = {
            "model": self.model,
            "messages": [m for m in messages if m["role"] != "system"],
            "max_tokens": sampling.max_tokens,
        }
        if system:
            request["system"] = system
        if self.thinking == ADAPTIVE:
            request["thinking"] = {"type": "adaptive"}
        elif isinstance(self.thinking, int):
            if self.thinking >= sampling.max_tokens:  # Anthropic's rule, said before a paid request
                raise RequestRejected(
                    self.provider,
                    self.model,
                    f"the thinking budget ({self.thinking} tokens) must be below the run's max tokens "
                    f"({sampling.max_tokens}): raise max tokens or lower ?thinking=",
                )
            request["thinking"] = {"type": "enabled", "budget_tokens": self.thinking}
        if self.effort:
            request["output_config"] = {"effort": self.effort}
        if self.send_temperature and self.thinking is None:
            # With thinking on, Anthropic takes only its default temperature: none is sent then.
            request["extra_body"] = {"temperature": sampling.temperature}
        return request

    def _sent(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        # The temperature is in the request only when sent; the key keeps it either way, since a
        # server that ignores it is asked the same question at any temperature only by chance.
        return {**self._request(messages, sampling), "temperature": sampling.temperature}

    @property
    def always_samples(self) -> bool:  # type: ignore[override]  # thinking: Anthropic samples at temperature 1
        return self.thinking is not None

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        started = time.perf_counter()
        response = await self._sdk().messages.create(**self._request(messages, sampling))
        return self._completion(response, started, raw=response.model_dump(mode="json"))

    async def _stream_once(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], None]
    ) -> Completion:
        started = time.perf_counter()
        stopped, events = False, 0
        async with self._sdk().messages.stream(**self._request(messages, sampling)) as stream:
            async for event in stream:
                events += 1
                if event.type == "text":
                    emit(event.text)
                stopped = stopped or event.type == "message_stop"
            if not stopped:  # the connection closed early: what came is not the whole answer
                raise StreamEnded(events, "message_stop")
            final = await stream.get_final_message()
        return self._completion(final, started, raw={"streamed": True, "id": final.id})

    def _completion(self, message: Any, started: float, raw: dict[str, Any]) -> Completion:
        """The answer of a Messages API message (streamed: the final one), if it holds one."""
        return _usable(
            Completion(
                text="".join(block.text for block in message.content if block.type == "text"),
                provider=self.provider,
                model=self.model,
                input_tokens=message.usage.input_tokens,
                output_tokens=message.usage.output_tokens,
                latency_s=time.perf_counter() - started,
                finish_reason=message.stop_reason or "",
                raw=raw,
            )
        )

    def _classify(self, error: Exception) -> Failure:
        if failure := connection_failure(error):
            return failure
        if isinstance(error, anthropic.APIStatusError):
            return classify_status(
                error.status_code, error.response.headers.get("retry-after"), str(error.message), self.key_variable
            )
        if isinstance(error, anthropic.APITimeoutError):
            return Failure(retry=True, cause="timed out")
        if isinstance(error, anthropic.APIConnectionError):
            return Failure(retry=True, cause="connection failed")
        return classify_transport(error) or super()._classify(error)


def _usable(completion: Completion) -> Completion:
    """The completion, when it holds an answer; else the call fails with its cause (Anthropic's "Handling
    stop reasons"), its usage counted: a refusal, whatever text came before it, is not a verdict; an empty
    text is not one either. A judge that re-asked with the empty turn got Anthropic's 400 "all messages
    must have non-empty content", a false cause."""
    text, stop_reason = completion.text.strip(), completion.finish_reason
    if stop_reason == "refusal":
        said = f": {text[:300]}" if text else ""
        cause = f"the model refused to answer (stop_reason 'refusal'){said}"
    elif text:
        return completion
    elif stop_reason == "max_tokens":
        cause = "the model gave no answer within the run's max tokens (stop_reason 'max_tokens'): raise them"
    else:  # not asked again: at temperature 0 the same question gets the same nothing
        cause = f"the model answered nothing (stop_reason {stop_reason or 'none'!r})"
    raise UnusableAnswer(cause, retry=False, spent=completion)
