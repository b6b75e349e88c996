"""A provider's limits within one process: tokens a minute, and pauses from what providers answer."""

from __future__ import annotations

import asyncio
import time

import pytest

from evalhub.llm.base import Sampling, estimate_need
from evalhub.llm.limits import LocalLimits, TokenBudget
from evalhub.llm.providers.openai_chat import OpenAICompatibleChat
from evalhub.llm.testing import FakeLLMServer, openai_limit_headers


def test_a_token_budget_lets_calls_start_until_its_burst_is_promised_then_spaces_them():
    budget = TokenBudget(burst_s=1.0)  # at 600 a minute, 0.1 s a token: 10 tokens of burst
    assert [budget.take(5, 600, now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert budget.promised == pytest.approx(1.5)  # the third started with 1.0 s promised: not past the burst
    assert budget.take(5, 600, now=0.0) == pytest.approx(0.5)
    assert budget.take(5, 600, now=0.5) == 0.0
    assert budget.promised == pytest.approx(2.0)


def test_a_settled_call_gives_back_what_it_did_not_use_but_never_more_than_a_full_budget():
    budget = TokenBudget(burst_s=0.0)
    assert budget.take(50, 600, now=0.0) == 0.0  # promised 5 s ahead
    assert budget.take(1, 600, now=1.0) == pytest.approx(4.0)
    budget.settle(-45, 600, now=1.0)  # it used 5 of its 50
    assert budget.promised == pytest.approx(1.0)
    assert budget.take(1, 600, now=1.0) == 0.0
    budget.settle(-1000, 600, now=2.0)
    assert budget.promised == pytest.approx(2.0)  # full, not 98 s of credit
    budget.settle(30, 600, now=2.0)  # a call that used more than it was charged
    assert budget.promised == pytest.approx(5.0)


def test_a_call_bigger_than_the_burst_starts_on_a_full_budget_and_the_next_waits_for_it():
    budget = TokenBudget(burst_s=1.0)
    assert budget.take(100, 600, now=10.0) == 0.0
    assert budget.take(1, 600, now=10.0) == pytest.approx(9.0)


def test_a_call_is_charged_its_prompt_at_four_characters_a_token_and_its_whole_max_tokens():
    need = estimate_need(
        [{"role": "system", "content": "x" * 10}, {"role": "user", "content": "y" * 31}], Sampling(max_tokens=64)
    )
    assert (need.input_tokens, need.output_tokens) == (11, 64)


async def test_a_call_in_flight_holds_its_estimate_and_gives_back_what_it_did_not_use():
    # 600 tokens a minute (10 a second), no burst: a call charged 50 tokens (40 characters, max_tokens
    # 40) holds the next for 5 s while it runs; it used 2 (a word of prompt, a word of answer), so
    # once it is done the next goes at once.
    with FakeLLMServer(api_key="k", latency_s=1.0) as server:
        client = OpenAICompatibleChat("m", base_url=f"{server.url}/v1", api_key="k", tokens_per_minute=600)
        client.limits = LocalLimits(token_burst_s=0.0)
        one_call = [{"role": "user", "content": "x" * 40}]
        start = time.monotonic()
        await asyncio.gather(*(client.complete(one_call, max_tokens=40, repeat=n, temperature=0.7) for n in range(2)))
        took = time.monotonic() - start
        await client.aclose()
        first, second = server.state.arrivals
    assert second - first > 0.9, "the second call waited while the first held its estimate"
    assert took < 3.5, "the first call's unused tokens came back when it ended, not 5 s later"


async def test_rate_limit_headers_that_say_the_budget_is_spent_hold_back_the_next_call():
    # Every answer says: no request left of 10, full again in 10 s, so one comes back each second.
    spent = openai_limit_headers("requests", 10, 0, "10s")
    with FakeLLMServer(api_key="k", response_headers=spent) as server:
        client = OpenAICompatibleChat("m", base_url=f"{server.url}/v1", api_key="k")
        for n in range(3):
            await client.complete([{"role": "user", "content": f"call {n}"}])
        await client.aclose()
        arrivals = server.state.arrivals
    assert arrivals[1] - arrivals[0] > 0.9
    assert arrivals[2] - arrivals[1] > 0.9


async def test_a_retry_after_pauses_every_call_of_the_client_not_only_the_retried_one():
    from evalhub.llm.testing import Fail

    with FakeLLMServer(api_key="k", latency_s=0.2) as server:
        server.fail_next(Fail(429, retry_after="1"))
        client = OpenAICompatibleChat("m", base_url=f"{server.url}/v1", api_key="k")

        async def later():
            await asyncio.sleep(0.5)  # after the 429 came back, during its Retry-After
            await client.complete([{"role": "user", "content": "later"}])

        start = time.time()  # the server notes arrivals on this clock
        await asyncio.gather(client.complete([{"role": "user", "content": "told"}]), later())
        await client.aclose()
        served = [arrival - start for arrival in server.state.arrivals]
    assert min(served) > 0.9, served


async def test_an_answer_is_kept_when_the_pause_its_headers_ask_for_cannot_be_shared(caplog):
    class Unreachable(LocalLimits):
        async def pause(self, seconds):
            raise ConnectionError("Redis is not answering")

    spent = openai_limit_headers("requests", 10, 0, "1s")
    with FakeLLMServer(api_key="k", response_headers=spent, reply=lambda messages: "kept") as server:
        client = OpenAICompatibleChat("m", base_url=f"{server.url}/v1", api_key="k")
        client.limits = Unreachable()
        completion = await client.complete([{"role": "user", "content": "paid for"}])
        await client.aclose()
    assert completion.text == "kept"
    assert "could not share a pause of 0.1 s" in caplog.text
