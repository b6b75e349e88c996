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


async def test_token_log_probabilities_equal_a_direct_forward_pass_over_the_answer(client, tiny_model, tiny_tokenizer):
    """Each generated token's log-probability and top alternatives, read while generating, against
    the model's own forward over the prompt and the answer (log-softmax at each answer position)."""
    import torch

    answer = await client.complete(MESSAGES, max_tokens=6, top_logprobs=4)
    prompt = tiny_tokenizer.apply_chat_template(
        MESSAGES, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
    )
    with torch.inference_mode():  # the same greedy answer, its token ids this time
        ids = tiny_model.generate(
            **prompt, max_new_tokens=6, do_sample=False, pad_token_id=tiny_tokenizer.pad_token_id or 0
        )
        logprobs = torch.log_softmax(tiny_model(ids).logits[0].float(), dim=-1)
    start = prompt["input_ids"].shape[1]
    assert len(answer.token_logprobs) == answer.output_tokens == ids.shape[1] - start
    for step, (text, logprob, top) in enumerate(answer.token_logprobs):
        position = start + step - 1  # the logits that predict this token
        token_id = int(ids[0, start + step])
        assert text == tiny_tokenizer.decode([token_id])
        assert logprob == pytest.approx(float(logprobs[position, token_id]), abs=1e-4)
        expected = torch.topk(logprobs[position], 4)
        assert [value for _, value in top] == pytest.approx(expected.values.tolist(), abs=1e-4)
        assert [alt for alt, _ in top] == [tiny_tokenizer.decode([i]) for i in expected.indices.tolist()]
