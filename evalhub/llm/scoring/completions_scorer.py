"""Forced-answer log-probabilities from an OpenAI-compatible completions server (e.g. vLLM).

The conversation is rendered locally with the model's chat template (a local tokenizer is
needed for that alone), sent as a plain prompt with `echo` and `logprobs`, and the
log-probabilities of the answer's tokens and the end-of-turn token are summed, located by
the server's character offsets with the same boundary rule as the in-process scorer. Many
requests run concurrently, so GEM can use a fleet of vLLM servers behind one URL.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from typing import Any

import httpx

from evalhub.llm import event_loop, interrupt
from evalhub.llm.base import Failure
from evalhub.llm.providers.http_errors import classify_status, connection_failure
from evalhub.llm.retry import RetryPolicy
from evalhub.llm.scoring.base import ScoreRequest, ScoreResult
from evalhub.llm.scoring.chat_template import TemplateError, render
from evalhub.llm.types import LLMError, ProviderUnavailable

KEY_VARIABLE = "OPENAI_COMPATIBLE_API_KEY"


class CompletionsScorer:
    provider = "openai-compatible"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        tokenizer: Any = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        max_concurrency: int = 16,
        retry: RetryPolicy | None = None,
        timeout_s: float = 300.0,
    ) -> None:
        if tokenizer is None or isinstance(tokenizer, str):
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        self.model, self.base_url, self.tokenizer = model, base_url.rstrip("/"), tokenizer
        # The spec may name the variable the server's key is in (it never carries the key).
        self.api_key = api_key or os.environ.get(api_key_env or KEY_VARIABLE, "not-needed")
        self.max_concurrency, self.retry, self.timeout_s = max_concurrency, retry or RetryPolicy(), timeout_s
        self.requests_sent = 0

    def score(self, requests: Sequence[ScoreRequest]) -> list[float]:
        return [result.logprob for result in self.score_detailed(requests)]

    def score_detailed(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        return event_loop.run(self._score_all(requests))

    async def _score_all(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        keys = [json.dumps([request.prefix, request.answer], sort_keys=True) for request in requests]
        unique = dict(zip(keys, requests, strict=True))  # identical requests are sent once
        semaphore = asyncio.Semaphore(self.max_concurrency)
        headers = {"Authorization": f"Bearer {self.api_key}"}
        async with httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=self.timeout_s) as client:
            results = await asyncio.gather(*(self._score_one(client, semaphore, r) for r in unique.values()))
        by_key = dict(zip(unique, results, strict=True))
        return [by_key[key] for key in keys]

    async def _score_one(
        self, client: httpx.AsyncClient, semaphore: asyncio.Semaphore, request: ScoreRequest
    ) -> ScoreResult:
        interrupt.check()
        text, answer_start, answer_end = render(self.tokenizer, list(request.prefix), request.answer)
        body = {
            "model": self.model,
            "prompt": text,
            "max_tokens": 1,
            "temperature": 0,
            "echo": True,
            "logprobs": 0,
            "add_special_tokens": False,  # the template already holds BOS; vLLM would add another
        }
        async with semaphore:
            payload = await self._post(client, body)
        logprobs = payload["choices"][0]["logprobs"]
        return _sum_answer(logprobs, len(text), answer_start, answer_end, self.model)

    async def _post(self, client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
        last: Failure | None = None
        for attempt in range(self.retry.max_attempts):
            try:
                self.requests_sent += 1
                response = await client.post("/completions", json=body)
                if response.status_code == 200:
                    answer: dict[str, Any] = response.json()
                    return answer
                last = classify_status(
                    response.status_code, response.headers.get("retry-after"), response.text, KEY_VARIABLE
                )
            except httpx.TimeoutException:
                last = Failure(retry=True, cause="timed out")
            except httpx.TransportError as error:
                last = connection_failure(error) or Failure(
                    retry=True, cause=f"connection failed ({type(error).__name__})"
                )
            if not last.retry:
                raise last.error(self.provider, self.model, last.cause)
            if attempt + 1 < self.retry.max_attempts:
                await asyncio.sleep(self.retry.delay(attempt, last.retry_after_s))
        cause = last.cause if last is not None else "no attempt was made"
        raise ProviderUnavailable(
            self.provider, self.model, f"{cause} (gave up after {self.retry.max_attempts} attempts)"
        )


def _sum_answer(
    logprobs: dict[str, Any], prompt_length: int, answer_start: int, answer_end: int, model: str
) -> ScoreResult:
    offsets, values = logprobs["text_offset"], logprobs["token_logprobs"]
    # Only the echoed prompt: the one generated token (max_tokens=1) starts at the prompt's end.
    count = next((i for i, offset in enumerate(offsets) if offset >= prompt_length), len(offsets))
    ends = [*offsets[1:count], prompt_length]
    first = next((i for i in range(count) if ends[i] > answer_start), None)
    last = next((i for i in range(first or 0, count) if offsets[i] >= answer_end), None)
    if first is None or last is None:
        raise TemplateError("the server's tokens do not cover the answer and an end-of-turn token.")
    scored = values[first : last + 1]
    if any(value is None for value in scored):
        raise LLMError("openai-compatible", model, "the server returned no log-probability for a scored token")
    return ScoreResult(logprob=float(sum(scored)), tokens=len(scored))
