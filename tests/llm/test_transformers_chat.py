"""Generation with an in-process model built in the test."""

from __future__ import annotations

import pytest

from evalhub.llm import get_chat_client

MESSAGES = [{"role": "user", "content": "Predict the review."}]


@pytest.fixture
def client(tiny_model, tiny_tokenizer):
    return get_chat_client("transformers:tiny-test", model_object=tiny_model, tokenizer=tiny_tokenizer)


async def test_greedy_generation_is_deterministic_and_counts_its_tokens(client, tiny_tokenizer):
    first = await client.complete(MESSAGES, max_tokens=12)
    second = await client.complete(MESSAGES, max_tokens=12)
    assert first.text == second.text
    assert first.text
    assert 1 <= first.output_tokens <= 12
    assert first.finish_reason in {"stop", "length"}
    prompt = tiny_tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=True, return_dict=False)
    assert first.input_tokens == len(prompt)


async def test_streaming_yields_what_the_completion_says(client):
    stream = client.stream(MESSAGES, max_tokens=12)
    chunks = [chunk async for chunk in stream]
    assert "".join(chunks).strip() == stream.completion.text.strip()
    assert stream.completion.text == (await client.complete(MESSAGES, max_tokens=12)).text


async def test_sampling_with_a_seed_repeats_and_another_seed_differs(client):
    same = [await client.complete(MESSAGES, temperature=1.0, max_tokens=20, seed=7) for _ in range(2)]
    other = await client.complete(MESSAGES, temperature=1.0, max_tokens=20, seed=8)
    assert same[0].text == same[1].text != other.text
