"""Verdicts on a debate's pair as OpenTelemetry evaluation events (evalhub.system.telemetry): a single
judge's, a debate agent's turn, a person's adjudication. The score is response A's share (1 better,
½ a tie, 0 worse), the label which response won, the response id response A's (B's beside it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evalhub.core.files.evaluation_events import EvaluationResult
from evalhub.debates.models import SHARE_OF_A, Debate, winner_for

PAIR_LABELS = {"a": "response_a_better", "b": "response_b_better", "tie": "tie"}


@dataclass(frozen=True)
class PairVerdict:
    debate_id: int
    verdict: int | None  # 1, 2 or 0 in the order given by `swapped_from_debate`; None: unreadable
    evaluator: str
    reversed_order: bool = False  # shown in the opposite order to the debate's own
    explanation: str = ""
    evaluator_version: str = ""
    extra: Mapping[str, str | float | int | bool] = field(default_factory=dict)


def pair_events(verdicts: Sequence[PairVerdict]) -> list[EvaluationResult]:
    debates = {
        d.pk: d
        for d in Debate.objects.filter(pk__in={v.debate_id for v in verdicts}).select_related(
            "prompt__benchmark", "run__criterion"
        )
    }
    out = []
    for item in verdicts:
        debate = debates.get(item.debate_id)
        if debate is None:  # deleted meanwhile
            continue
        winner = None if item.verdict is None else winner_for(item.verdict, debate.swapped != item.reversed_order)
        out.append(
            EvaluationResult(
                name=debate.run.criterion.slug,
                evaluator=item.evaluator,
                benchmark=debate.prompt.benchmark.slug,
                score=SHARE_OF_A[winner] if winner else None,
                label=PAIR_LABELS[winner] if winner else "unreadable",
                explanation=item.explanation,
                response_id=str(debate.response_a_id),
                evaluator_version=item.evaluator_version,
                extra={"response_b.id": str(debate.response_b_id), "debate.id": debate.pk, **item.extra},
            )
        )
    return out
