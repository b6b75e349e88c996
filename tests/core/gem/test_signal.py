"""GEM measures information: a tiny model trained here ranks an informative candidate above a
degraded one and above another task's response.

Synthetic tasks: each is about two topics; the candidate names facts of both, the reference
names other facts of the same topics.
The model is trained on the C.2 prompt under its chat template — conditionals (candidate,
reference) and marginals ("Not Available", reference), as in GEM, Appendix E.1 — so it can
learn to predict a reference's facts from a candidate that mentions them.
"""

from __future__ import annotations

import random
import statistics

import pytest
import torch

from evalhub.core.gem.pairs import response_scores, score_pairs, task_pairs
from evalhub.core.gem.prompts import PREDICTION_SYSTEM, prediction_messages
from evalhub.core.gem.validation import delete_every_other_sentence
from evalhub.llm.scoring.transformers_scorer import TransformersScorer
from evalhub.llm.tiny import build_causal_lm, build_tokenizer

FACTS = [f"{a}{b}" for a in ("zor", "mip", "kel", "dra", "fen", "wub", "tas", "qui") for b in ("ax", "eln", "ov")]
TOPICS = [FACTS[i : i + 4] for i in range(0, len(FACTS), 4)]  # six topics of four facts
VERBS = ["appreciates", "criticizes", "questions", "suggests"]
USER_FRAME = "[Abstract of the paper]\n\nNot Available\n\n[Review judgments from the first reviewer]\n\n"


def statement(rng: random.Random, facts: list[str]) -> str:
    return "\n".join(f"The reviewer {rng.choice(VERBS)} the {fact}." for fact in facts)


def example(rng: random.Random) -> tuple[str, str]:
    """A task about two topics: the candidate alternates them line by line, so deleting every
    other sentence (D.3.1) leaves one; the reference raises other facts of both topics."""
    a, b = (TOPICS[i] for i in rng.sample(range(len(TOPICS)), 2))
    candidate = [rng.choice(a), rng.choice(b), rng.choice(a), rng.choice(b)]
    reference = [rng.choice(a), rng.choice(a), rng.choice(b), rng.choice(b)]
    rng.shuffle(reference)
    return statement(rng, candidate), statement(rng, reference)


def chat_text(tokenizer, candidate: str | None, reference: str) -> str:
    messages = [*prediction_messages(None, candidate), {"role": "assistant", "content": reference}]
    return tokenizer.apply_chat_template(messages, tokenize=False)


@pytest.fixture(scope="module")
def trained():
    rng = random.Random(0)
    samples = [example(rng) for _ in range(600)]
    tokenizer = build_tokenizer([text for pair in samples for text in pair] * 3, vocab_size=1200, split_words=False)
    # The fixed prompt parts and the facts as whole tokens: short sequences, and facts a model can
    # attend to, so a two-layer model learns the dependence in seconds.
    tokenizer.add_tokens([PREDICTION_SYSTEM, USER_FRAME, *FACTS])
    model = build_causal_lm(len(tokenizer), "tiny", seed=0)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    # Conditionals and marginals, as GEM's own fine-tuning data (Appendix E.1).
    # Half the training candidates are sentence-deleted, so a degraded candidate is a familiar input
    # that carries less information, not an unfamiliar one.
    sequences = [
        chat_text(tokenizer, x if n % 2 else delete_every_other_sentence(x)[0], y) for n, (x, y) in enumerate(samples)
    ] + [chat_text(tokenizer, None, y) for _, y in samples]
    assistant = tokenizer.convert_tokens_to_ids("<|assistant|>")
    for _ in range(300):  # passes with other seeds too (checked with 0–3 while writing it)
        encoded = tokenizer(rng.sample(sequences, 32), return_tensors="pt", padding=True, add_special_tokens=False)
        answer = (encoded["input_ids"] == assistant).cumsum(dim=1) > 0  # loss on the forced answer only
        labels = encoded["input_ids"].masked_fill((encoded["attention_mask"] == 0) | ~answer, -100)
        model(**encoded, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    return model, tokenizer


def test_an_informative_candidate_scores_above_a_degraded_one_and_another_tasks(trained):
    model, tokenizer = trained
    rng = random.Random(99)  # tasks the model never saw
    informative, degraded, unrelated = [], [], []
    tasks = [example(rng) for _ in range(12)]
    for index, (candidate, reference) in enumerate(tasks):
        other = tasks[(index + 1) % len(tasks)][0]
        pairs = task_pairs(
            {
                "informative": candidate,
                "degraded": delete_every_other_sentence(candidate)[0],  # GEM, D.3.1
                "unrelated": other,
            },
            {"reference": reference},
        )
        scores = response_scores(score_pairs(TransformersScorer(model=model, tokenizer=tokenizer), pairs))
        informative.append(scores["informative"])
        degraded.append(scores["degraded"])
        unrelated.append(scores["unrelated"])
    assert statistics.fmean(informative) > statistics.fmean(degraded) > statistics.fmean(unrelated)
    assert sum(i > d for i, d in zip(informative, degraded, strict=True)) >= 10
    assert sum(i > u for i, u in zip(informative, unrelated, strict=True)) >= 9
    assert statistics.fmean(informative) > 0, "knowing the candidate helps predict the reference"
