"""Reading a provider's rate-limit headers: how long the next call waits before it fits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evalhub.llm.rate_headers import Need, reset_seconds, wait_for_budget
from evalhub.llm.testing import openai_limit_headers

NOW = datetime(2026, 11, 24, 12, 0, 0, tzinfo=UTC).timestamp()
SMALL = Need(input_tokens=100, output_tokens=400)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("0.75", 0.75),
        ("2026-11-24T12:00:30Z", 30.0),
    ],
)
def test_a_reset_is_read_as_a_duration_seconds_or_an_instant(value, seconds):
    assert reset_seconds(value, NOW) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["", None, "soon", "5 parsecs", "1s and more"])
def test_a_reset_it_cannot_read_is_none(value):
    assert reset_seconds(value, NOW) is None


def test_a_call_that_fits_every_budget_waits_nothing():
    headers = {"x-ratelimit-remaining-requests": "1", "x-ratelimit-remaining-tokens": "500"}
    assert wait_for_budget(headers | {"x-ratelimit-reset-requests": "9s"}, SMALL, NOW) == 0.0
    assert wait_for_budget({}, SMALL, NOW) == 0.0


def test_no_requests_left_waits_for_one_to_refill():
    # 60 a minute used up, full again in 60 s: one comes back every second.
    headers = openai_limit_headers("requests", 60, 0, "60s")
    assert wait_for_budget(headers, SMALL, NOW) == pytest.approx(1.0)


def test_too_few_tokens_wait_for_the_missing_ones_at_the_refill_rate():
    # 10,000 a minute, 200 left, full in 49 s: 9,800 come back in 49 s (200 a second); the call needs
    # 500, so it waits for 300 more: 1.5 s.
    headers = openai_limit_headers("tokens", 10000, 200, "49s")
    assert wait_for_budget(headers, SMALL, NOW) == pytest.approx(1.5)


def test_without_a_limit_the_call_waits_for_the_whole_reset():
    headers = {"x-ratelimit-remaining-tokens": "10", "x-ratelimit-reset-tokens": "7s"}
    assert wait_for_budget(headers, SMALL, NOW) == pytest.approx(7.0)


def test_a_call_bigger_than_the_whole_budget_waits_no_longer_than_the_reset():
    headers = openai_limit_headers("tokens", 300, 0, "4s")
    assert wait_for_budget(headers, SMALL, NOW) == pytest.approx(4.0)


def test_anthropic_s_budgets_are_read_each_with_its_own_part_of_the_call():
    headers = {
        # input tokens: 1,000 a minute, 40 left, full at 12:00:48 → 960 in 48 s (20/s); needs 100 → 3 s
        "anthropic-ratelimit-input-tokens-limit": "1000",
        "anthropic-ratelimit-input-tokens-remaining": "40",
        "anthropic-ratelimit-input-tokens-reset": "2026-11-24T12:00:48Z",
        # output tokens: plenty for max_tokens 400
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-remaining": "5000",
        "anthropic-ratelimit-output-tokens-reset": "2026-11-24T12:00:10Z",
        "Anthropic-RateLimit-Requests-Remaining": "3",
    }
    assert wait_for_budget(headers, SMALL, NOW) == pytest.approx(3.0)


def test_the_longest_wait_of_several_spent_budgets_is_the_one_kept():
    # 2 s a request; 1,000 tokens a second, so 0.5 s for 500
    headers = openai_limit_headers("requests", 10, 0, "20s") | openai_limit_headers("tokens", 1000, 0, "1s")
    assert wait_for_budget(headers, SMALL, NOW) == pytest.approx(2.0)


def test_values_it_cannot_read_are_ignored_not_a_failed_call():
    headers = {
        "x-ratelimit-remaining-requests": "many",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "later",
    }
    assert wait_for_budget(headers, SMALL, NOW) == 0.0
