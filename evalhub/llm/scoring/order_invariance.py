"""Does a log-probability server give the same numbers whatever else it is asked, and in what order?

vLLM's prefix cache has returned prompt log-probabilities that depended on which requests came before
and which shared a batch; GEM's PMI is a difference of two such sums, so an order-dependent server
moves scores by more than the differences between systems. The check scores the same requests in two
orders (as given and reversed, all at once) and in another batch composition (one at a time), and
reports the largest difference of any request's summed log-probability between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from evalhub.core.gem.prompts import prediction_messages
from evalhub.llm.scoring.base import ScoreRequest

TOLERANCE = 1e-3  # nats on a request's summed log-probability: bf16 servers differ by about this across batches


class Scorer(Protocol):
    def score(self, requests: Sequence[ScoreRequest]) -> list[float]: ...


@dataclass(frozen=True)
class InvarianceReport:
    requests: int
    max_difference: float
    worst: int  # the index of the request that moved most
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.max_difference <= self.tolerance

    def describe(self) -> str:
        verdict = "order-invariant" if self.ok else "ORDER-DEPENDENT"
        return (
            f"{verdict}: over {self.requests} requests asked in order, reversed and one at a time, "
            f"the largest difference of a request's log-probability is {self.max_difference:.2e} nats "
            f"(request {self.worst}; tolerance {self.tolerance:g})."
        )


def sample_requests(count: int = 12) -> list[ScoreRequest]:
    """GEM-shaped requests that share prefixes pairwise, so a prefix cache has something to reuse."""
    reviews = [
        f"The reviewer {verb} the {topic}."
        for verb in ("praises", "questions", "doubts")
        for topic in ("method", "data")
    ]
    requests = []
    for index in range(count):
        candidate, reference = reviews[index % len(reviews)], reviews[(index * 5 + 1) % len(reviews)]
        requests.append(ScoreRequest.of(prediction_messages(None, candidate), reference))
    return requests


def order_invariance(
    scorer: Scorer, requests: Sequence[ScoreRequest], tolerance: float = TOLERANCE
) -> InvarianceReport:
    requests = list(requests)
    in_order = scorer.score(requests)
    reversed_order = scorer.score(requests[::-1])[::-1]
    alone = [scorer.score([request])[0] for request in requests]
    spreads = [max(values) - min(values) for values in zip(in_order, reversed_order, alone, strict=True)]
    worst = max(range(len(spreads)), key=spreads.__getitem__)
    return InvarianceReport(len(requests), spreads[worst], worst, tolerance)
