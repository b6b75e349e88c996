"""The fake provider's declared limits, which the benchmarks of shared limits measure against."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from evalhub.llm.testing import FakeLLMServer


def post(url: str) -> tuple[int, dict[str, str]]:
    body = json.dumps({"messages": [{"role": "user", "content": "one two"}]}).encode()
    request = urllib.request.Request(
        f"{url}/v1/chat/completions", body, {"authorization": "Bearer test-key", "content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers)


def test_the_fake_provider_serves_a_full_bucket_then_refuses_and_says_when_it_refills():
    # 3 calls a minute: a bucket of 3, one back every 20 s.
    with FakeLLMServer(rate_limit=3, rate_window_s=60.0) as server:
        answers = [post(server.url) for _ in range(4)]
    assert [status for status, _ in answers] == [200, 200, 200, 429]
    assert [headers["x-ratelimit-remaining-requests"] for _, headers in answers[:3]] == ["2", "1", "0"]
    assert float(answers[2][1]["x-ratelimit-reset-requests"].removesuffix("s")) == pytest.approx(60.0, abs=0.5)
    assert int(answers[3][1]["retry-after"]) == 20
    assert server.state.rate_limited == 1


def test_the_fake_provider_counts_the_tokens_each_answer_used_against_its_token_limit():
    # Each call uses 3 tokens (two words of prompt, "ok"): three leave 1 of the 10, still room for a
    # fourth; after it the bucket is in debt, and the fifth is refused.
    with FakeLLMServer(token_limit=10, rate_window_s=60.0) as server:
        statuses = [post(server.url)[0] for _ in range(5)]
        assert [tokens for _, tokens in server.state.token_log] == [3, 3, 3, 3]
    assert statuses == [200, 200, 200, 200, 429]


def test_a_fake_provider_told_to_keep_quiet_sends_no_rate_limit_headers():
    with FakeLLMServer(rate_limit=3, limit_headers=False) as server:
        _, headers = post(server.url)
    assert not [name for name in headers if name.lower().startswith("x-ratelimit")]
