"""OpenAI's chat completions, and any server that speaks them (vLLM, Ollama, llama.cpp, LM Studio)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp

from evalhub.llm.base import ChatClient, Failure, Sampling
from evalhub.llm.providers.http_errors import (
    HTTPStatusFailure,
    classify_status,
    classify_transport,
    refused_connection,
)
from evalhub.llm.types import AuthenticationFailed, Completion, Message, RequestRejected

OPENAI_KEY = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the SDK's, also when OPENAI_BASE_URL is unset


async def event_data(content: aiohttp.StreamReader) -> AsyncIterator[bytes]:
    """The data lines of a server-sent event stream, read in blocks as they arrive (a readline per
    line was a fifth of a streamed call's CPU)."""
    rest = b""
    async for block in content.iter_any():
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        for line in lines:
            if line.startswith(b"data:"):
                yield line[5:].strip()
    if rest.startswith(b"data:"):
        yield rest[5:].strip()


class OpenAIChat(ChatClient):
    provider = "openai"
    shares_limits = True
    key_variable = OPENAI_KEY

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> None:
        super().__init__(model, endpoint=base_url or "", **options)
        self.base_url = base_url
        self._api_key = api_key
        self._session: aiohttp.ClientSession | None = None

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

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        started = time.perf_counter()
        async with self._post(self._request(messages, sampling)) as response:
            body = await response.read()
        answer = json.loads(body)
        choices = answer.get("choices") or [{}]
        usage = answer.get("usage") or {}
        return Completion(
            text=(choices[0].get("message") or {}).get("content") or "",
            provider=self.provider,
            model=self.model,
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            latency_s=time.perf_counter() - started,
            finish_reason=choices[0].get("finish_reason") or "",
            raw=answer,
        )

    @contextlib.asynccontextmanager
    async def _post(self, request: dict[str, Any]) -> AsyncIterator[aiohttp.ClientResponse]:
        """The response to one request, its headers heard and an error status raised. Calls go straight
        over aiohttp, not through the SDK: its request path (a typing-driven transform of the body,
        then httpx's models over the aiohttp transport) cost about 0.9 ms of CPU of a streamed call's
        1.4 ms, where a debate worker makes thousands (benchmarks/openai_stream_cpu.py). The request
        is the JSON the SDK sends, to the same URL, with the same headers."""
        session = self._session_for_loop()
        headers = self._headers(streamed=bool(request.get("stream")))
        async with session.post(self._chat_url(), data=json.dumps(request), headers=headers) as response:
            await self.heed_rate_headers(response.headers)
            if response.status >= 400:
                raise HTTPStatusFailure(response.status, response.headers.get("retry-after"), await response.text())
            yield response

    async def _stream_once(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], None]
    ) -> Completion:
        started = time.perf_counter()
        request = {**self._request(messages, sampling), "stream": True, "stream_options": {"include_usage": True}}
        parts: list[str] = []
        finish, usage = "", dict[str, Any]()
        ended = False
        async with self._post(request) as response:
            async for data in event_data(response.content):
                # After [DONE] the body is read to its end rather than left: a response closed
                # early takes its connection with it, and the next call pays for a new one.
                if ended:
                    continue
                if data == b"[DONE]":
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

    def _key(self) -> str:
        key = self._api_key or os.environ.get(self.key_variable) or self._default_key()
        if not key:
            raise AuthenticationFailed(self.provider, self.model, f"no API key: set {self.key_variable}")
        return key

    def _chat_url(self) -> str:
        base = self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        return f"{base.rstrip('/')}/chat/completions"

    def _headers(self, *, streamed: bool) -> dict[str, str]:
        # The headers the SDK sends for a request, the organisation and project as it reads them.
        headers = {
            "Authorization": f"Bearer {self._key()}",
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if streamed else "application/json",
        }
        for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
            if value := os.environ.get(variable):
                headers[header] = value
        return headers

    def _session_for_loop(self) -> aiohttp.ClientSession:
        """One session per client and event loop (closed by aclose); no pool limit of its own: the
        client's concurrency gate bounds the calls in flight, and so the connections."""
        if self._session is None:  # aclose forgets a closed one
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout_s),  # the call's own timeout rules
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        await super().aclose()

    def _classify(self, error: Exception) -> Failure:
        if refused := refused_connection(error):
            return refused
        if isinstance(error, HTTPStatusFailure):
            return classify_status(error.status, error.retry_after, error.message, self.key_variable)
        if isinstance(error, aiohttp.ClientConnectionError) and not isinstance(error, aiohttp.ServerDisconnectedError):
            return Failure(retry=True, cause=f"connection failed ({type(error).__name__})")
        return classify_transport(error) or super()._classify(error)


class OpenAICompatibleChat(OpenAIChat):
    """A self-hosted OpenAI-compatible server; a key is optional (OPENAI_COMPATIBLE_API_KEY)."""

    provider = "openai-compatible"
    key_variable = "OPENAI_COMPATIBLE_API_KEY"

    def __init__(self, model: str, *, base_url: str, **options: Any) -> None:
        super().__init__(model, base_url=base_url, **options)

    def _default_key(self) -> str:
        return "not-needed"  # most local servers ignore the key, but the SDK insists on one
