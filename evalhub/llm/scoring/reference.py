"""The plain way to score: one request per forward pass over its whole sequence, no reuse.

It is the reference the fast scorer is tested against, and the naive baseline of the
throughput benchmarks. It shares only the token split (chat_template.encode_request) with
the fast path; the forward pass and log-softmax are the model's ordinary ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalhub.llm.scoring.base import ScoreRequest
from evalhub.llm.scoring.chat_template import encode_request


def score_one_at_a_time(model: Any, tokenizer: Any, requests: Sequence[ScoreRequest]) -> list[float]:
    import torch

    device = next(model.parameters()).device
    scores = []
    for request in requests:
        encoded = encode_request(tokenizer, list(request.prefix), request.answer)
        ids = torch.tensor([[*encoded.prefix_ids, *encoded.target_ids]], device=device)
        with torch.inference_mode():
            logits = model(input_ids=ids).logits[0].float()
        logprobs = torch.log_softmax(logits[:-1], dim=-1)
        start = len(encoded.prefix_ids) - 1  # position that predicts the first target token
        targets = ids[0, start + 1 :]
        scores.append(
            float(logprobs[start:].gather(1, targets[:, None]).double().sum())
        )  # float64 sum: totals reach -1000s
    return scores
