from __future__ import annotations

import pytest

CORPUS = [
    "The reviewer appreciates the clear writing and the strong baselines.",
    "The reviewer criticizes the missing ablations and the small datasets.",
    "The reviewer questions whether the method scales to longer contexts.",
    "The reviewer suggests comparing against stronger retrieval baselines.",
    "Predict the review of this paper. Abstract: We propose a new attention mechanism.",
] * 40


@pytest.fixture(scope="session")
def tiny_tokenizer():
    from evalhub.llm.tiny import build_tokenizer

    return build_tokenizer(CORPUS, vocab_size=600)


@pytest.fixture(scope="session")
def tiny_model(tiny_tokenizer):
    from evalhub.llm.tiny import build_causal_lm

    return build_causal_lm(len(tiny_tokenizer), "tiny", seed=1)
