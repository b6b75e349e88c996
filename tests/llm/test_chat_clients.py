"""The SDK-based chat clients against a loopback server speaking their wire protocols."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from evalhub.llm import get_chat_client as make_chat_client
from evalhub.llm.accounting import Price, UsageMeter
from evalhub.llm.cache import ResponseCache
from evalhub.llm.providers.transport import HTTP_CLIENT_VARIABLE, HTTP_CLIENTS
from evalhub.llm.registry import parse_spec
from evalhub.llm.retry import RetryPolicy
from evalhub.llm.testing import Drop, Fail, FakeLLMServer, Stall, Unusable, closed_port
from evalhub.llm.types import AuthenticationFailed, ProviderUnavailable, RequestRejected, UnknownProvider

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05)
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Is 221 prime?"}]


_made: list = []


def get_chat_client(*args, **options):
    client = make_chat_client(*args, **options)
    _made.append(client)
    return client


@pytest.fixture(autouse=True, params=HTTP_CLIENTS)
def http_client(request, monkeypatch):
    """Every test runs on both HTTP clients under the SDKs: the aiohttp one and their default."""
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, request.param)
    return request.param


@pytest.fixture(autouse=True)
async def close_clients():
    """Each test's clients are closed in its own event loop, as the runners close theirs."""
    yield
    while _made:
        await _made.pop().aclose()


@pytest.fixture
def server():
    with FakeLLMServer(reply=lambda messages: "No, 221 is 13 times 17.") as fake:
        yield fake


def openai_client(server, **options):
    options = {"retry": FAST, **options}
    return get_chat_client(
        {"provider": "openai", "model": "gpt-test"}, base_url=f"{server.url}/v1", api_key="test-key", **options
    )


def anthropic_client(server, **options):
    options = {"retry": FAST, **options}
    return get_chat_client("anthropic:claude-test", base_url=server.url, api_key="test-key", **options)


async def answer(client, messages, streamed: bool) -> str:
    """The client's answer to `messages`, streamed or not: both paths must behave alike."""
    if streamed:
        return "".join([chunk async for chunk in client.stream(messages)])
    return (await client.complete(messages)).text


async def assert_cached_only_per_repeat(client, server, messages) -> None:
    """A client whose provider always samples: two calls "at temperature 0" both go out; a repeat index
    is cached as its own answer."""
    await client.complete(messages, temperature=0.0)
    await client.complete(messages, temperature=0.0)
    assert server.request_count == 2, "fresh samples stay fresh"
    await client.complete(messages, repeat=0)
    assert (await client.complete(messages, repeat=0)).cached
    assert server.request_count == 3


CLIENTS = {"openai": openai_client, "anthropic": anthropic_client}


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_completion_returns_text_tokens_and_latency(server, provider):
    completion = await CLIENTS[provider](server).complete(MESSAGES, temperature=0.0, max_tokens=50, seed=7)
    assert completion.text == "No, 221 is 13 times 17."
    # The fake counts words: 2 system + 3 user for OpenAI; Anthropic's system prompt travels apart.
    assert (completion.input_tokens, completion.output_tokens) == ({"openai": 5, "anthropic": 3}[provider], 6)
    assert completion.latency_s > 0
    assert completion.provider == provider
    assert not completion.cached
    sent = server.state.requests[0]["body"]
    assert sent["max_tokens"] == 50


async def test_openai_receives_the_seed_temperature_and_the_system_message_in_line(server):
    await openai_client(server).complete(MESSAGES, seed=7, temperature=0.2)
    sent = server.state.requests[0]["body"]
    assert sent["seed"] == 7
    assert sent["temperature"] == 0.2
    assert sent["messages"] == MESSAGES


async def test_anthropic_receives_the_system_prompt_apart_from_the_turns(server):
    await anthropic_client(server).complete(MESSAGES)
    sent = server.state.requests[0]["body"]
    assert sent["system"] == "Be brief."
    assert sent["messages"] == MESSAGES[1:]
    assert "temperature" not in sent


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("kind", "reason", "asked"),
    [
        ("refusal", r"refused to answer \(stop_reason 'refusal'\): I can't help", 1),
        ("empty", r"answered nothing \(stop_reason 'end_turn'\)", 1),
    ],
)
async def test_an_anthropic_answer_that_holds_no_answer_fails_with_its_cause_never_as_a_verdict(
    server, kind, reason, asked, streamed
):
    client = anthropic_client(server)
    server.fail_next(*[Unusable(kind)] * 3)
    with pytest.raises((RequestRejected, ProviderUnavailable), match=reason):
        await answer(client, MESSAGES, streamed)
    assert server.request_count == asked
    assert all(r["body"]["messages"] == MESSAGES[1:] for r in server.state.requests), "no empty turn added"


async def test_claudes_thinking_and_effort_are_spec_options_sent_as_anthropic_defines_them(server):
    """A server that keeps Anthropic's rules: a budget below max_tokens, no temperature but 1 while
    thinking; the thinking block is never read as the answer."""
    client = get_chat_client(
        "anthropic:claude-test?thinking=2048&effort=high", base_url=server.url, api_key="test-key", retry=FAST
    )
    completion = await client.complete(MESSAGES, max_tokens=4000, temperature=0.3)
    sent = server.state.requests[-1]["body"]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048} and sent["output_config"] == {
        "effort": "high"
    }
    assert "temperature" not in sent and completion.text == "No, 221 is 13 times 17."
    adaptive = get_chat_client(
        {"provider": "anthropic", "model": "claude-test", "thinking": "adaptive", "send_temperature": True},
        base_url=server.url,
        api_key="test-key",
        retry=FAST,
    )
    await adaptive.complete(MESSAGES, temperature=0.3)
    assert server.state.requests[-1]["body"]["thinking"] == {"type": "adaptive"}
    assert "temperature" not in server.state.requests[-1]["body"], "not sent while thinking: Anthropic refuses it"
    asked = server.request_count
    with pytest.raises(RequestRejected, match=r"thinking budget \(2048 tokens\) must be below .* max tokens \(1000\)"):
        await client.complete(MESSAGES, max_tokens=1000)
    assert server.request_count == asked, "refused before a paid request"
    for bad, said in (
        ("thinking=500", "at least 1024"),
        ("thinking=lots", "'adaptive' or a budget"),
        ("effort=huge", "effort is one of low"),
    ):
        with pytest.raises(UnknownProvider, match=said):
            get_chat_client(f"anthropic:claude-test?{bad}", api_key="test-key")


async def test_claude_while_thinking_samples_so_is_cached_only_per_seed_or_repeat(server):
    """Thinking takes only temperature 1: asked "at temperature 0" it samples all the same, and a cached
    answer would hand one judge another's sample."""
    from evalhub.llm.cache import ResponseCache

    client = get_chat_client(
        "anthropic:claude-test?thinking=adaptive",
        base_url=server.url,
        api_key="test-key",
        retry=FAST,
        cache=ResponseCache(":memory:"),
    )
    await assert_cached_only_per_repeat(client, server, MESSAGES)


async def test_anthropic_sends_a_temperature_only_when_asked(server):
    await anthropic_client(server, send_temperature=True).complete(MESSAGES, temperature=0.3)
    assert server.state.requests[0]["body"]["temperature"] == 0.3


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_streaming_yields_the_chunks_in_order_and_then_the_whole_completion(server, provider):
    stream = CLIENTS[provider](server).stream(MESSAGES)
    chunks = [chunk async for chunk in stream]
    assert len(chunks) == 6
    assert chunks[0] == "No, "
    assert "".join(chunks) == stream.completion.text == "No, 221 is 13 times 17."
    assert stream.completion.output_tokens == 6


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_429_is_retried_and_then_succeeds(server, provider):
    server.fail_next(Fail(429, retry_after="0"))
    completion = await CLIENTS[provider](server).complete(MESSAGES)
    assert completion.text.startswith("No")
    assert server.request_count == 2


async def test_retry_after_is_honoured_instead_of_the_backoff(server):
    server.fail_next(Fail(429, retry_after="0.5"))
    slow_backoff = RetryPolicy(max_attempts=2, base_delay_s=30, max_delay_s=60)
    started = time.monotonic()
    await openai_client(server, retry=slow_backoff).complete(MESSAGES)
    assert 0.45 <= time.monotonic() - started < 5


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_500_repeated_past_the_last_retry_raises_a_typed_error(server, provider):
    server.fail_next(Fail(500), Fail(500), Fail(500))
    with pytest.raises(ProviderUnavailable) as failure:
        await CLIENTS[provider](server).complete(MESSAGES)
    message = str(failure.value)
    assert message.startswith(f"{provider}:")
    assert "server error (HTTP 500)" in message
    assert "gave up after 3 attempts" in message
    assert server.request_count == 3


async def test_a_timeout_is_retried_then_reported(server):
    server.fail_next(Stall(1.0), Stall(1.0))
    client = openai_client(server, timeout_s=0.2, retry=RetryPolicy(max_attempts=2, base_delay_s=0.01))
    with pytest.raises(ProviderUnavailable, match="timed out"):
        await client.complete(MESSAGES)


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
async def test_a_refused_connection_fails_at_once_naming_the_address(provider):
    # It was reported as "timed out (gave up after 6 attempts)" after half a minute of retries.
    port = closed_port()
    slow = RetryPolicy(max_attempts=6, base_delay_s=5.0)
    if provider == "anthropic":
        client = get_chat_client("anthropic:m", base_url=f"http://127.0.0.1:{port}", api_key="k", retry=slow)
    else:
        client = get_chat_client(f"openai-compatible:http://127.0.0.1:{port}/v1|m", retry=slow)
    started = time.perf_counter()
    with pytest.raises(ProviderUnavailable, match=f"connection refused by 127.0.0.1:{port}$"):
        await client.complete(MESSAGES)
    assert time.perf_counter() - started < 2.0, "no retry waits on a refused connection"


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
async def test_a_wrong_key_fails_once_naming_the_variable_and_never_showing_the_key(server, provider, variable):
    secret = "sk-live-very-secret-value-123456"
    client = get_chat_client(
        f"{provider}:m", base_url=f"{server.url}/v1" if provider == "openai" else server.url, api_key=secret, retry=FAST
    )
    with pytest.raises(AuthenticationFailed) as failure:
        await client.complete(MESSAGES)
    assert variable in str(failure.value)
    assert secret not in str(failure.value)
    assert "HTTP 401" in str(failure.value)
    assert server.request_count == 1, "a rejected key is not retried"


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
async def test_a_missing_key_fails_before_any_request(server, monkeypatch, provider, variable):
    monkeypatch.delenv(variable, raising=False)
    client = get_chat_client(f"{provider}:m", base_url=server.url)
    with pytest.raises(AuthenticationFailed, match=f"no API key: set {variable}"):
        await client.complete(MESSAGES)
    assert server.request_count == 0


async def test_an_openai_compatible_server_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    with FakeLLMServer(api_key="not-needed") as fake:
        client = get_chat_client(f"openai-compatible:{fake.url}/v1|local-llama")
        assert (await client.complete(MESSAGES)).text == "ok"


async def test_a_bad_request_is_not_retried(server):
    server.fail_next(Fail(400, message="max_tokens too large"))
    with pytest.raises(RequestRejected, match="HTTP 400"):
        await openai_client(server).complete(MESSAGES)
    assert server.request_count == 1


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_cached_second_run_makes_zero_provider_requests(server, provider, tmp_path):
    cache, meter = ResponseCache(tmp_path / "cache.sqlite3"), UsageMeter()
    client = CLIENTS[provider](server, cache=cache, meter=meter)
    first = [await client.complete(MESSAGES), await client.complete([{"role": "user", "content": "Other?"}])]
    assert server.request_count == 2
    # A new client on the same cache file, as in a later run.
    again = CLIENTS[provider](server, cache=ResponseCache(tmp_path / "cache.sqlite3"), meter=meter)
    second = [await again.complete(MESSAGES), await again.complete([{"role": "user", "content": "Other?"}])]
    streamed = again.stream(MESSAGES)
    assert [chunk async for chunk in streamed] == [first[0].text]
    assert server.request_count == 2
    assert [c.text for c in second] == [c.text for c in first]
    assert all(c.cached for c in second)
    assert (meter.calls, meter.cached_calls) == (5, 3)


async def test_sampled_calls_are_cached_only_per_explicit_seed_or_repeat(server):
    client = openai_client(server, cache=ResponseCache(":memory:"))
    await client.complete(MESSAGES, temperature=0.7)
    await client.complete(MESSAGES, temperature=0.7)
    assert server.request_count == 2, "fresh samples stay fresh"
    await client.complete(MESSAGES, temperature=0.7, repeat=1)
    await client.complete(MESSAGES, temperature=0.7, repeat=1)
    await client.complete(MESSAGES, temperature=0.7, repeat=2)
    assert server.request_count == 4


async def test_usage_and_cost_are_summed_with_configured_prices(server):
    meter = UsageMeter()
    client = openai_client(server, meter=meter, prices={"gpt-test": Price(1.0, 2.0)})
    completion = await client.complete(MESSAGES)
    await client.complete(MESSAGES)
    assert completion.cost_usd == pytest.approx((5 * 1.0 + 6 * 2.0) / 1e6)
    assert meter.as_dict() | {"latency_s": 0} == {
        "calls": 2,
        "cached_calls": 0,
        "input_tokens": 10,
        "output_tokens": 12,
        "cost_usd": round(2 * 17 / 1e6, 6),
        "calls_without_price": 0,
        "reasoning_tokens": 0,
        "latency_s": 0,
    }


async def test_no_more_than_the_concurrency_limit_is_in_flight():
    in_flight, peak, lock = 0, 0, threading.Lock()

    def reply(messages):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.1)
        with lock:
            in_flight -= 1
        return "ok"

    with FakeLLMServer(reply=reply) as fake:
        client = get_chat_client("openai:m", base_url=f"{fake.url}/v1", api_key="test-key", max_concurrency=2)
        await asyncio.gather(*(client.complete([{"role": "user", "content": str(i)}]) for i in range(6)))
    assert peak == 2


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_stream_that_is_rate_limited_before_its_first_chunk_is_retried(server, provider):
    server.fail_next(Fail(429, retry_after="0"), Fail(503))
    stream = CLIENTS[provider](server).stream(MESSAGES)
    assert "".join([chunk async for chunk in stream]) == "No, 221 is 13 times 17."
    assert server.request_count == 3


async def test_a_stream_that_keeps_failing_raises_the_typed_error(server):
    server.fail_next(Fail(500), Fail(500), Fail(500))
    with pytest.raises(ProviderUnavailable, match="HTTP 500"):
        [chunk async for chunk in openai_client(server).stream(MESSAGES)]


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_streamed_calls_read_to_the_end_so_the_next_call_reuses_the_connection(provider):
    with FakeLLMServer(reply=lambda messages: "No, 221 is 13 times 17.", keep_alive=True) as fake:
        client = CLIENTS[provider](fake)
        for _ in range(3):
            stream = client.stream(MESSAGES)
            assert "".join([chunk async for chunk in stream]) == "No, 221 is 13 times 17."
        assert fake.request_count == 3
        assert fake.state.connections_opened == 1


@pytest.mark.parametrize("keep_alive", [True, False], ids=["chunked", "until-close"])
@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_stream_cut_off_before_its_first_chunk_is_retried(provider, keep_alive):
    with FakeLLMServer(reply=lambda messages: "No, 221 is 13 times 17.", keep_alive=keep_alive) as fake:
        fake.fail_next(Drop(events=0))
        stream = CLIENTS[provider](fake).stream(MESSAGES)
        assert "".join([chunk async for chunk in stream]) == "No, 221 is 13 times 17."
        assert fake.request_count == 2


@pytest.mark.parametrize("keep_alive", [True, False], ids=["chunked", "until-close"])
@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_stream_cut_off_midway_fails_instead_of_passing_for_a_short_answer(provider, keep_alive):
    with FakeLLMServer(reply=lambda messages: "No, 221 is 13 times 17.", keep_alive=keep_alive) as fake:
        fake.fail_next(Drop(events=4))  # Anthropic's first two events carry no text
        chunks = []
        with pytest.raises(ProviderUnavailable, match="stream broke off: the server closed the (connection|stream)"):
            async for chunk in CLIENTS[provider](fake).stream(MESSAGES):
                chunks.append(chunk)
        assert chunks, "text already shown is never asked for again"
        assert fake.request_count == 1, "text already shown is never asked for again"


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_call_whose_connection_drops_before_any_answer_is_retried(server, provider):
    server.fail_next(Drop())
    completion = await CLIENTS[provider](server).complete(MESSAGES)
    assert completion.text == "No, 221 is 13 times 17."
    assert server.request_count == 2


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_connection_closed_before_any_answer_is_named_as_closed_not_as_a_timeout(provider, streamed):
    """OpenAI's aiohttp-backed client reported it as "timed out after 120 s", 0.3 s into the call. (A
    chunked stream: one sent until the connection closes ends the same way as an empty one.)"""
    with FakeLLMServer(reply=lambda messages: "No, 221 is 13 times 17.", keep_alive=True) as server:
        server.fail_next(*[Drop(events=0)] * FAST.max_attempts)
        with pytest.raises(ProviderUnavailable, match="closed the connection before its answer ended") as failed:
            await answer(CLIENTS[provider](server), MESSAGES, streamed)
        assert "timed out" not in str(failed.value)
        assert server.request_count == FAST.max_attempts, "a closed connection may be a hiccup: asked again"


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_an_empty_200_is_named_as_one_and_asked_again(server, provider, streamed):
    """It read as "JSONDecodeError: Expecting value" (unstreamed) or "connection failed" (streamed)."""
    server.fail_next(Unusable("empty-body"))
    assert await answer(CLIENTS[provider](server), MESSAGES, streamed) == "No, 221 is 13 times 17."
    server.fail_next(*[Unusable("empty-body")] * FAST.max_attempts)
    said = "empty stream" if streamed else "empty body"
    with pytest.raises(ProviderUnavailable, match=f"the server answered 200 with an {said}"):
        await answer(CLIENTS[provider](server), MESSAGES, streamed)


async def test_a_scripted_drop_longer_than_the_answer_does_not_reach_the_next_call_on_the_connection():
    with FakeLLMServer(reply=lambda messages: "short answer", keep_alive=True) as fake:
        fake.fail_next(Drop(events=100))  # more events than the answer has: it streams to its end
        client = openai_client(fake)
        assert "".join([chunk async for chunk in client.stream(MESSAGES)]) == "short answer"
        fake.state.api_key = "rotated"  # the next call, on the same connection, gets a plain 401
        with pytest.raises(AuthenticationFailed):
            await client.complete(MESSAGES)
        assert fake.request_count == 2
        assert fake.state.connections_opened == 1


async def test_an_anthropic_compatible_server_is_named_in_the_spec_like_an_openai_compatible_one(server):
    client = get_chat_client(f"anthropic:{server.url}|claude-local", api_key="test-key", retry=FAST)
    try:
        completion = await client.complete([{"role": "user", "content": "Hi"}])
    finally:
        await client.aclose()
    assert completion.provider == "anthropic"
    assert completion.text
    assert server.state.requests[-1]["path"].rstrip("/").endswith("/messages")


class SlowCache(ResponseCache):
    """A cache whose database takes its time (a busy PostgreSQL far away): a read takes 0.4 s, and a
    write waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.may_write, self.wrote = threading.Event(), threading.Event()

    def get(self, key):
        time.sleep(0.4)
        return super().get(key)

    def put(self, key, completion):
        self.may_write.wait(10)
        super().put(key, completion)
        self.wrote.set()


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_response_cache_is_asked_in_a_thread_so_the_loop_streams_other_debates_meanwhile(server, streamed):
    """The cache is a database: asked on the event loop, every query stopped a batch's other debates.
    Its write is not waited for (a thread hop per call), and a later read still finds it."""
    cache = SlowCache()
    client = openai_client(server, cache=cache)
    ticks = 0

    async def other_debates() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    running = asyncio.ensure_future(other_debates())
    if streamed:
        text = "".join([chunk async for chunk in client.stream(MESSAGES)])
    else:
        text = (await client.complete(MESSAGES)).text
    running.cancel()
    assert text
    assert ticks >= 12, f"the loop ran only {ticks} times during 0.4 s of cache reading"
    assert not cache.wrote.is_set(), "the call waited for its cache write"
    cache.may_write.set()
    again = await client.complete(MESSAGES)  # read after the write, in the cache's one thread
    assert again.cached and server.request_count == 1


async def test_openai_style_calls_go_through_the_official_sdk_with_its_headers(server, monkeypatch):
    """The SDK is the transport: its own headers (organisation from the environment, its version) on
    every call, streamed or not, and the body it builds."""
    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    client = openai_client(server)
    assert (await client.complete(MESSAGES)).text == "No, 221 is 13 times 17."
    assert "".join([chunk async for chunk in client.stream(MESSAGES)]) == "No, 221 is 13 times 17."
    first, second = server.state.requests[-2:]
    headers = {name.lower(): value for name, value in first["headers"].items()}
    assert headers["authorization"] == "Bearer test-key"
    assert headers["openai-organization"] == "org-test"
    assert headers["x-stainless-lang"] == "python", "sent by the SDK"
    assert (first["body"]["model"], first["body"]["messages"]) == ("gpt-test", MESSAGES)
    assert second["body"]["stream"] is True and second["body"]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("spec", ["openai-compatible:{url}/v1|router/model", "anthropic:{url}|claude-local"])
async def test_a_gateways_extra_headers_are_sent_from_the_variable_the_spec_names(server, spec, streamed, monkeypatch):
    """OpenRouter's attribution headers or a gateway's own auth header: the spec names the variable that
    holds them (JSON), never the values, and a refusal never repeats them."""
    secret = "sk-gateway-secret-1234567"
    spec = spec.format(url=server.url) + "?headers_env=GATEWAY_HEADERS"
    monkeypatch.setenv("GATEWAY_HEADERS", json.dumps({"HTTP-Referer": "https://lab.example", "X-Gateway-Auth": secret}))
    assert await answer(get_chat_client(spec, api_key="test-key", retry=FAST), MESSAGES, streamed)
    sent = {name.lower(): value for name, value in server.state.requests[-1]["headers"].items()}
    assert sent["http-referer"] == "https://lab.example" and sent["x-gateway-auth"] == secret
    assert str(parse_spec(spec)).endswith("?headers_env=GATEWAY_HEADERS")
    for value, said in (
        (f"not json {secret}", "must hold a JSON object"),
        (None, "names GATEWAY_HEADERS, which is not set"),
    ):
        if value is None:
            monkeypatch.delenv("GATEWAY_HEADERS")
        else:
            monkeypatch.setenv("GATEWAY_HEADERS", value)
        with pytest.raises(RequestRejected, match=said) as refused:
            await answer(get_chat_client(spec, api_key="test-key", retry=FAST), MESSAGES, streamed)
        assert secret not in str(refused.value)
    with pytest.raises(UnknownProvider, match="headers_env names an environment variable"):
        parse_spec(spec.replace("GATEWAY_HEADERS", "X-Gateway-Auth:abc"))


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_a_refused_answer_is_a_failed_call_whose_tokens_are_counted(server, provider, streamed):
    """The provider bills a refusal's tokens: the meter, and the job's usage through it, count them."""
    client = CLIENTS[provider](server)
    server.fail_next(Unusable("refusal"))
    with pytest.raises(RequestRejected, match="refused"):
        await answer(client, MESSAGES, streamed)
    usage = client.meter.usage()
    assert usage.calls == 1 and usage.input_tokens == {"openai": 5, "anthropic": 3}[provider]
