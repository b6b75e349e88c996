"""The chat client interface and everything every provider shares.

A provider implements `_complete_once` (and `_stream_once` where it streams) plus
`_classify` for its exceptions. This base adds the limits (calls in flight, requests and tokens
a minute, pauses from Retry-After and rate-limit headers), the per-call timeout, retries with
backoff, the response cache and accounting, identically for all providers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from evalhub.llm import interrupt
from evalhub.llm.accounting import Price, UsageMeter, price_for, record_everywhere
from evalhub.llm.cache import ResponseCache, cache_key, cache_thread, is_cacheable
from evalhub.llm.limits import LocalLimits
from evalhub.llm.rate_headers import Need, wait_for_budget
from evalhub.llm.retry import RetryPolicy
from evalhub.llm.shared_limits import SharedLimits
from evalhub.llm.types import Completion, LLMError, Message, ProviderUnavailable, RequestRejected

logger = logging.getLogger(__name__)


class UnusableAnswer(Exception):
    """A 200 answer that holds no answer, for every provider: no choice, a refusal (OpenAI's `refusal`,
    Anthropic's stop_reason `refusal`), a content-filter stop, nothing said, or every token spent
    reasoning. `retry`: whether asking again may help (a missing choice or an empty answer may be a
    server's hiccup; a refusal or a filter will come again). Never read as a verdict, never answered
    with an empty turn."""

    def __init__(self, cause: str, *, retry: bool, spent: Completion | None = None) -> None:
        super().__init__(cause)
        self.cause, self.retry = cause, retry
        self.spent = spent  # the call's usage, where the answer said it: paid for, so counted


class StreamEnded(ConnectionError):
    """A streamed answer that ended before its last event: after `events` events (none: the server
    answered 200 with an empty stream)."""

    def __init__(self, events: int, last_event: str) -> None:
        self.events = events
        if events:
            cause = f"the server closed the stream before its last event ({last_event}) after {events} events"
        else:
            cause = "the server answered 200 with an empty stream (not one event)"
        super().__init__(cause)
        self.cause = cause


EMPTY_BODY = "the server answered 200 with an empty body (no answer)"


def is_empty_body(error: BaseException) -> bool:
    """An unstreamed 200 whose body was empty: the SDKs fail parsing it as JSON ("Expecting value: line
    1 column 1"), which read as a cryptic JSONDecodeError."""
    return isinstance(error, json.JSONDecodeError) and not error.doc.strip()


@dataclass(frozen=True)
class Failure:
    """How a provider exception should be handled."""

    retry: bool
    cause: str
    retry_after_s: float | None = None
    error: type[LLMError] = ProviderUnavailable


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = None
    repeat: int | None = None  # the n-th sample of the same call; part of the cache key only
    top_logprobs: int = 0  # > 0: each answer token's log-probability and its top alternatives

    def cache_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "repeat": self.repeat,
        }
        if self.top_logprobs:  # absent otherwise: every response cached before keeps its key
            params["top_logprobs"] = self.top_logprobs
        return params


def estimate_need(messages: list[Message], sampling: Sampling) -> Need:
    """What a call is charged before it runs, as providers count it: its prompt at about four
    characters a token, and every token it may answer with."""
    characters = sum(len(str(message.get("content", ""))) for message in messages)
    return Need(input_tokens=-(-characters // 4), output_tokens=sampling.max_tokens)


class ChatStream:
    """Async iterator of text chunks; `completion` holds the whole answer once iteration ends."""

    def __init__(self, chunks: AsyncIterator[str]) -> None:
        self._chunks = chunks
        self.completion: Completion | None = None

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> str:
        return await self._chunks.__anext__()


class ChatClient:
    provider: ClassVar[str] = ""
    # A provider reached over the network shares its limits across the deployment (SharedLimits);
    # an in-process model or an offline stand-in belongs to its process alone.
    shares_limits: ClassVar[bool] = False
    gives_logprobs: ClassVar[bool] = False  # can return the answer's token log-probabilities
    _client: Any = None  # a provider SDK's client, made on first use (aclose closes it)

    def __init__(
        self,
        model: str,
        *,
        cache: ResponseCache | None = None,
        meter: UsageMeter | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 8,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        timeout_s: float = 120.0,
        prices: Mapping[str, Price] | None = None,
        endpoint: str = "",
        shared_limits_url: str = "",
    ) -> None:
        self.model = model
        self.cache = cache
        self.meter = meter or UsageMeter()
        self.retry = retry or RetryPolicy()
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.timeout_s = timeout_s
        self.prices = prices or {}
        self.endpoint = endpoint  # part of the cache key: the same model name on two servers may differ
        # With Redis, the limits are the deployment's, not this process's.
        self.shared_limits = (
            SharedLimits(shared_limits_url, self.provider, model, self._limit_key(endpoint))
            if shared_limits_url and self.shares_limits
            else None
        )
        self.limits: LocalLimits | SharedLimits = self.shared_limits or LocalLimits()
        self._next_need = Need(0, 0)  # the latest call's, for what rate-limit headers say about the next

    def _limit_key(self, endpoint: str) -> str:
        """What a provider's limits are counted per: the server and the account's key (hashed)."""
        variable = getattr(self, "key_variable", "")
        return f"{endpoint}|{os.environ.get(variable, '') if variable else ''}"

    # --- what providers implement ------------------------------------------------------

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        raise NotImplementedError

    async def _stream_once(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], None]
    ) -> Completion:
        """Default: no streaming; the whole answer arrives as one chunk."""
        completion = await self._complete_once(messages, sampling)
        emit(completion.text)
        return completion

    def _classify(self, error: Exception) -> Failure:
        if isinstance(error, UnusableAnswer):
            return Failure(retry=error.retry, cause=error.cause, error=RequestRejected)
        # A proxy's or a server's hiccup may pass: asked again (while no text reached the caller).
        if isinstance(error, StreamEnded):
            return Failure(retry=True, cause=error.cause)
        if is_empty_body(error):
            return Failure(retry=True, cause=EMPTY_BODY)
        if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
            return Failure(retry=True, cause=f"timed out after {self.timeout_s:.0f} s")
        if isinstance(error, (ConnectionError, OSError)):
            return Failure(retry=True, cause=f"connection failed ({type(error).__name__})")
        return Failure(retry=False, cause=f"{type(error).__name__}: {error}", error=RequestRejected)

    # --- the public interface ------------------------------------------------------------

    async def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        repeat: int | None = None,
        top_logprobs: int = 0,
    ) -> Completion:
        """The answer; with `top_logprobs`, each of its tokens' log-probability and top alternatives
        (`Completion.token_logprobs`), where the provider gives them (RequestRejected where not)."""
        interrupt.check()
        if top_logprobs and not self.gives_logprobs:
            raise RequestRejected(self.provider, self.model, "this provider gives no log-probabilities")
        sampling = Sampling(temperature, max_tokens, seed, repeat, top_logprobs)
        key = self._cache_key(messages, sampling)
        if (hit := await self._cached(key)) is not None:
            record_everywhere(self.meter, hit)
            return hit
        completion = await self._with_retries(
            lambda: self._complete_once(messages, sampling), estimate_need(messages, sampling)
        )
        return await self._finish(completion, key)

    def stream(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        repeat: int | None = None,
    ) -> ChatStream:
        sampling = Sampling(temperature, max_tokens, seed, repeat)
        key = self._cache_key(messages, sampling)

        async def chunks() -> AsyncIterator[str]:
            interrupt.check()
            if (hit := await self._cached(key)) is not None:
                record_everywhere(self.meter, hit)
                stream.completion = hit
                yield hit.text
                return
            queue: asyncio.Queue[str | None] = asyncio.Queue()
            emitted = False

            def emit(text: str) -> None:
                nonlocal emitted
                if text:
                    emitted = True
                    queue.put_nowait(text)

            async def produce() -> Completion:
                try:
                    # Once chunks reached the caller a retry would repeat them: fail instead.
                    return await self._with_retries(
                        lambda: self._stream_once(messages, sampling, emit),
                        estimate_need(messages, sampling),
                        can_retry=lambda: not emitted,
                    )
                finally:
                    queue.put_nowait(None)

            task = asyncio.ensure_future(produce())
            try:
                while (chunk := await queue.get()) is not None:
                    yield chunk
                stream.completion = await self._finish(await task, key)
            finally:
                if not task.done():
                    task.cancel()

        stream = ChatStream(chunks())
        return stream

    # --- shared machinery ----------------------------------------------------------------

    # A model the provider always samples (a reasoning model: its temperature is not ours to set) is
    # cached only per explicit seed or repeat, as any call at a temperature above 0.
    always_samples: bool = False

    def _sent(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        """What this call asks the provider, as the cache key sees it. A provider that builds its own
        request returns that request, so whatever changes what is asked (a reasoning effort, a flag,
        an option added later) changes the key without a list kept by hand."""
        return {"messages": messages, **sampling.cache_params()}

    def _cache_key(self, messages: list[Message], sampling: Sampling) -> str | None:
        temperature = 1.0 if self.always_samples else sampling.temperature
        if self.cache is None or not is_cacheable(temperature, sampling.seed, sampling.repeat):
            return None
        try:
            sent = self._sent(messages, sampling)
        except LLMError:  # a call the provider would refuse is made (and refused) uncached
            return None
        # The repeat index is never sent, yet the n-th sample of a call is its own answer.
        return cache_key(self.provider, self.model, self.endpoint, {**sent, "repeat": sampling.repeat})

    async def _cached(self, key: str | None) -> Completion | None:
        # The cache is a database (a file, or PostgreSQL shared by every worker): asked in a thread, so a
        # batch's event loop streams its other debates meanwhile instead of waiting on a query.
        if not key or self.cache is None:
            return None
        return await asyncio.wrap_future(cache_thread().submit(self.cache.get, key))

    async def _finish(self, completion: Completion, key: str | None) -> Completion:
        price = price_for(self.prices, self.provider, self.model)
        # A provider that knows its own cost (the offline heuristic judge: free) keeps it without a price.
        completion.cost_usd = (
            price.cost(completion.input_tokens, completion.output_tokens) if price else completion.cost_usd
        )
        if key and self.cache is not None:
            cache_thread().submit(self.cache.put, key, completion)  # not waited for (see cache_thread)
        record_everywhere(self.meter, completion)
        return completion

    async def aclose(self) -> None:
        """Close the provider SDK's HTTP client, inside the event loop that used it (callers that
        run their own short-lived loop call this before the loop ends)."""
        sdk: Any = getattr(self, "_client", None)
        if sdk is not None and hasattr(sdk, "close"):
            await sdk.close()
            self._client = None
        await self.limits.aclose()

    @asynccontextmanager
    async def _turn(self, need: Need) -> AsyncIterator[None]:
        """This call's place: an in-flight slot, its instant under the requests-per-minute limit and
        its tokens under the tokens-per-minute one; the deployment's (SharedLimits, in Redis) where
        there is one, else this process's."""
        async with self.limits.turn(self.max_concurrency, self.requests_per_minute):
            await self.limits.take_tokens(self.tokens_per_minute, need.input_tokens + need.output_tokens)
            yield

    async def heed_rate_headers(self, headers: Mapping[str, str]) -> None:
        """A provider's answer said how much of its budget is left: when the next call would not
        fit, every call waits (every worker's, with shared limits), not only the next one here."""
        if (wait := wait_for_budget(headers, self._next_need)) <= 0:
            return
        try:
            await self.limits.pause(min(wait, self.retry.max_delay_s))
        except Exception as error:  # an answer already paid for is not lost to a pause not shared
            logger.warning("%s:%s could not share a pause of %.1f s: %s", self.provider, self.model, wait, error)

    async def _with_retries(
        self,
        call: Callable[[], Awaitable[Completion]],
        need: Need,
        can_retry: Callable[[], bool] = lambda: True,
    ) -> Completion:
        last: Failure | None = None
        self._next_need = need
        charged = need.input_tokens + need.output_tokens
        for attempt in range(self.retry.max_attempts):
            try:
                async with self._turn(need):
                    interrupt.check()  # a call that waited for its turn does not start after a stop
                    started = time.perf_counter()
                    # asyncio.timeout, not wait_for: 3.11's wait_for drops a cancel that lands as the
                    # answer arrives (CPython gh-86296), and the caller would go on after being stopped.
                    async with asyncio.timeout(self.timeout_s):
                        completion = await call()
                completion.latency_s = completion.latency_s or time.perf_counter() - started
                # Charged its estimate before, the call now counts what it used (a failed attempt
                # keeps its charge: the provider may have counted it too).
                used = completion.input_tokens + completion.output_tokens
                await self.limits.settle_tokens(self.tokens_per_minute, used - charged)
                return completion
            except (LLMError, interrupt.Interrupted):
                raise
            except Exception as error:  # classified below; unknown errors are not retried
                if isinstance(error, UnusableAnswer) and error.spent is not None:
                    record_everywhere(self.meter, error.spent)  # no answer, but tokens billed all the same
                last = self._classify(error)
                if not last.retry:
                    raise last.error(self.provider, self.model, last.cause) from None
                if not can_retry():
                    raise ProviderUnavailable(self.provider, self.model, f"stream broke off: {last.cause}") from None
                if last.retry_after_s:
                    await self.limits.pause(last.retry_after_s)  # every call waits, not only this one
                if attempt + 1 < self.retry.max_attempts:
                    delay = self.retry.delay(attempt, last.retry_after_s)
                    logger.warning(
                        "%s:%s attempt %d failed (%s); retrying in %.1f s",
                        self.provider,
                        self.model,
                        attempt + 1,
                        last.cause,
                        delay,
                    )
                    await asyncio.sleep(delay)
        raise ProviderUnavailable(
            self.provider,
            self.model,
            f"{last.cause if last else 'failed'} (gave up after {self.retry.max_attempts} attempts)",
        )
