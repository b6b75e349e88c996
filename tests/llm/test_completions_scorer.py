"""Scoring through an OpenAI-compatible completions server (vLLM's echo mode), on loopback."""

from __future__ import annotations

import pytest
import torch

from evalhub.llm import get_scorer
from evalhub.llm.retry import RetryPolicy
from evalhub.llm.scoring.base import ScoreRequest
from evalhub.llm.scoring.transformers_scorer import TransformersScorer
from evalhub.llm.testing import Fail, FakeLLMServer, closed_port
from evalhub.llm.types import ProviderUnavailable


def model_backed_logprobs(model, tokenizer):
    """What a vLLM server running `model` would echo: each prompt token with its log-probability."""

    def prompt_logprobs(prompt: str) -> list[tuple[str, float]]:
        encoding = tokenizer(prompt, add_special_tokens=False, return_offsets_mapping=True)
        ids = encoding["input_ids"]
        with torch.inference_mode():
            logprobs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        tokens = []
        for index, (start, _) in enumerate(encoding["offset_mapping"]):
            end = encoding["offset_mapping"][index + 1][0] if index + 1 < len(ids) else len(prompt)
            value = float(logprobs[index - 1, ids[index]]) if index else 0.0
            tokens.append((prompt[start:end], value))
        return tokens

    return prompt_logprobs


REQUESTS = [
    ScoreRequest.of([{"role": "user", "content": "Abstract: attention."}], "The reviewer appreciates the writing."),
    ScoreRequest.of([{"role": "user", "content": "Abstract: attention."}], "The reviewer questions the scale."),
    ScoreRequest.of([{"role": "system", "content": "Predict."}, {"role": "user", "content": "x"}], ""),
]


def test_the_completions_scorer_agrees_with_the_in_process_scorer(tiny_model, tiny_tokenizer):
    with FakeLLMServer(prompt_logprobs=model_backed_logprobs(tiny_model, tiny_tokenizer), api_key="k") as server:
        scorer = get_scorer(f"openai-compatible:{server.url}/v1|tiny", tokenizer=tiny_tokenizer, api_key="k")
        remote = scorer.score([*REQUESTS, REQUESTS[0]])
        sent = server.state.requests
    local = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer).score([*REQUESTS, REQUESTS[0]])
    assert remote == pytest.approx(local, abs=1e-4)
    assert len(sent) == 3, "a repeated request is sent once"
    assert sent[0]["body"]["echo"] is True
    assert sent[0]["body"]["add_special_tokens"] is False


def test_server_errors_are_retried_then_reported(tiny_model, tiny_tokenizer):
    with FakeLLMServer(prompt_logprobs=model_backed_logprobs(tiny_model, tiny_tokenizer), api_key="k") as server:
        server.fail_next(Fail(503), Fail(503))
        scorer = get_scorer(
            f"openai-compatible:{server.url}/v1|tiny",
            tokenizer=tiny_tokenizer,
            api_key="k",
            retry=RetryPolicy(max_attempts=3, base_delay_s=0.01),
        )
        assert scorer.score(REQUESTS[:1]) == pytest.approx(
            TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer).score(REQUESTS[:1]), abs=1e-4
        )
        server.fail_next(Fail(503), Fail(503), Fail(503))
        with pytest.raises(ProviderUnavailable, match="HTTP 503"):
            scorer.score(REQUESTS[1:2])


def test_a_refused_connection_fails_at_once_naming_the_address(tiny_tokenizer):
    port = closed_port()
    scorer = get_scorer(
        f"openai-compatible:http://127.0.0.1:{port}/v1|tiny",
        tokenizer=tiny_tokenizer,
        api_key="k",
        retry=RetryPolicy(max_attempts=6, base_delay_s=5.0),
    )
    with pytest.raises(ProviderUnavailable, match=f"connection refused by 127.0.0.1:{port}$"):
        scorer.score(REQUESTS[:1])


def test_the_order_invariance_check_passes_a_server_that_answers_each_prompt_alone(tiny_model, tiny_tokenizer):
    from evalhub.llm.scoring.order_invariance import order_invariance, sample_requests

    with FakeLLMServer(prompt_logprobs=model_backed_logprobs(tiny_model, tiny_tokenizer), api_key="k") as server:
        scorer = get_scorer(f"openai-compatible:{server.url}/v1|tiny", tokenizer=tiny_tokenizer, api_key="k")
        report = order_invariance(scorer, sample_requests(8))
    assert report.ok and report.requests == 8 and report.max_difference < 1e-9
    assert "order-invariant" in report.describe()


def test_the_order_invariance_check_catches_a_server_whose_answers_depend_on_what_came_before(
    tiny_model, tiny_tokenizer, tmp_path, monkeypatch
):
    """A stand-in for a prefix cache gone wrong: every prompt after a first one with the same
    beginning gets its tokens' log-probabilities shifted."""
    from django.core.management import CommandError, call_command

    from evalhub.llm.scoring.order_invariance import order_invariance, sample_requests

    honest = model_backed_logprobs(tiny_model, tiny_tokenizer)
    seen: set[str] = set()

    def cached(prompt: str) -> list[tuple[str, float]]:
        tokens = honest(prompt)
        key = prompt[:200]
        drift = 0.01 if key in seen else 0.0
        seen.add(key)
        return [(text, value - drift) for text, value in tokens]

    with FakeLLMServer(prompt_logprobs=cached, api_key="k") as server:
        scorer = get_scorer(f"openai-compatible:{server.url}/v1|tiny", tokenizer=tiny_tokenizer, api_key="k")
        report = order_invariance(scorer, sample_requests(8))
        assert not report.ok and report.max_difference > 0.05
        tiny_tokenizer.save_pretrained(tmp_path)
        seen.clear()  # a fresh server for the command
        monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "k")
        with pytest.raises(CommandError, match="ORDER-DEPENDENT"):
            call_command(
                "check_logprob_server", f"openai-compatible:{server.url}/v1|tiny", "--tokenizer", str(tmp_path)
            )
