"""OpenAI's chat completions, and any server that speaks them (vLLM, Ollama, llama.cpp, LM Studio)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from evalhub.llm.base import ChatClient, Failure, Sampling
from evalhub.llm.providers.http_errors import classify_status, classify_transport, refused_connection
from evalhub.llm.providers.transport import async_http_client
from evalhub.llm.types import AuthenticationFailed, Completion, Message, RequestRejected

OPENAI_KEY = "OPENAI_API_KEY"


class OpenAIChat(ChatClient):
    provider = "openai"
    shares_limits = True
    key_variable = OPENAI_KEY

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> None:
        super().__init__(model, endpoint=base_url or "", **options)
        self.base_url = base_url
        self._api_key = api_key
        self._client: openai.AsyncOpenAI | None = None

    def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            key = self._api_key or os.environ.get(self.key_variable) or self._default_key()
            if not key:
                raise AuthenticationFailed(self.provider, self.model, f"no API key: set {self.key_variable}")
            # Retries are ours (one policy for every provider), so the SDK's are off.
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout_s,
                http_client=async_http_client(openai, self.timeout_s, self.heed_rate_headers),
            )
        return self._client

    def _default_key(self) -> str:
        return ""

    def _request(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        request = {
            "model": self.model,
            "messages": messages,
            "temperature": sampling.temperature,
            "max_tokens": sampling.max_tokens,
        }
        if sampling.seed is not None:
            request["seed"] = sampling.seed
        return request

    # Both paths are the SDK's public surface: post() (documented for any endpoint) for a whole
    # completion, and with_streaming_response for a stream. Each call still gets the SDK's URL,
    # authentication and typed errors; neither builds a typed model per streamed chunk.

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        started = time.perf_counter()
        response = await self._sdk().post(
            "/chat/completions", body=self._request(messages, sampling), cast_to=ChatCompletion
        )
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            provider=self.provider,
            model=self.model,
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            latency_s=time.perf_counter() - started,
            finish_reason=choice.finish_reason or "",
            raw=response.model_dump(mode="json"),
        )

    async def _stream_once(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], None]
    ) -> Completion:
        started = time.perf_counter()
        request = {**self._request(messages, sampling), "stream": True, "stream_options": {"include_usage": True}}
        parts: list[str] = []
        finish, usage = "", dict[str, Any]()
        ended = False
        # The SDK's documented raw-streaming surface: the response unread, its server-sent events
        # parsed here with a few dict lookups per chunk, where the typed stream builds a model per
        # chunk (benchmarks/openai_stream_cpu.py: about 6× the CPU per streamed call).
        async with self._sdk().chat.completions.with_streaming_response.create(**request) as response:
            async for line in response.iter_lines():
                # After [DONE] the body is read to its end rather than left: a response closed
                # early takes its connection with it, and the next call pays for a new one.
                if ended or not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    ended = True
                    continue
                event = json.loads(data)
                if "error" in event:
                    raise RequestRejected(self.provider, self.model, f"error in stream: {event['error']}")
                usage = event.get("usage") or usage
                for choice in event.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        parts.append(text)
                        emit(text)
                    finish = choice.get("finish_reason") or finish
        if not (ended or finish):  # the connection closed early: what came is not the whole answer
            raise ConnectionError("the stream ended before its last chunk")
        return Completion(
            text="".join(parts),
            provider=self.provider,
            model=self.model,
            input_tokens=usage.get("prompt_tokens", 0),
            output_tokens=usage.get("completion_tokens", 0),
            latency_s=time.perf_counter() - started,
            finish_reason=finish,
            raw={"streamed": True},
        )

    def _classify(self, error: Exception) -> Failure:
        if refused := refused_connection(error):
            return refused
        if isinstance(error, openai.APIStatusError):
            return classify_status(
                error.status_code, error.response.headers.get("retry-after"), str(error.message), self.key_variable
            )
        if isinstance(error, openai.APITimeoutError):
            return Failure(retry=True, cause="timed out")
        if isinstance(error, openai.APIConnectionError):
            return Failure(retry=True, cause="connection failed")
        return classify_transport(error) or super()._classify(error)


class OpenAICompatibleChat(OpenAIChat):
    """A self-hosted OpenAI-compatible server; a key is optional (OPENAI_COMPATIBLE_API_KEY)."""

    provider = "openai-compatible"
    key_variable = "OPENAI_COMPATIBLE_API_KEY"

    def __init__(self, model: str, *, base_url: str, **options: Any) -> None:
        super().__init__(model, base_url=base_url, **options)

    def _default_key(self) -> str:
        return "not-needed"  # most local servers ignore the key, but the SDK insists on one
