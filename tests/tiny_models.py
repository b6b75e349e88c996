"""A corpus and builders for the tiny models tests use (tokenizer trained here, nothing downloaded)."""

from __future__ import annotations

CORPUS = [
    "The reviewer appreciates the clear writing and the strong baselines.",
    "The reviewer criticizes the missing ablations and the small datasets.",
    "The reviewer questions whether the method scales to longer contexts.",
    "The reviewer suggests comparing against stronger retrieval baselines.",
    "Predict the review of this paper. Abstract: We propose a new attention mechanism.",
] * 40
