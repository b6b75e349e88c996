"""A judge run's verdicts as an Inspect AI eval log (`.eval`), which `inspect view` opens: one sample per
pair, order and sample asked, the judge's answer as the model's output, the debate-plus-human reference
(ScaleEval's: the agents' consensus, or people's label where they disagreed) as the target, and whether
the judge agreed with it as the score. Written by inspect-ai's own writer, so its reader reads it.

Verdicts are as shown to the judge (1: the first submission, 2: the second, 0: neither); the target is
turned into the same order, so a reversed-order sample reads as the judge saw it.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalhub.core.statistics.agreement import unswap
from evalhub.debates.judging import reference_verdicts
from evalhub.debates.models import JudgeRun

SCORER = "reference_agreement"  # the score's name in the log: agreement with the debate-plus-human reference
CORRECT, INCORRECT = "C", "I"  # Inspect's own values for a right and a wrong answer


def judge_run_log(run: JudgeRun, withheld: Collection[int] = ()) -> Any:
    """The run's verdicts as an `inspect_ai.log.EvalLog`, leaving out the debates in `withheld` (those a
    reader holds on a blind-first screen: `evalhub.debates.visibility`), counted in its metadata."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    debates = {
        d.pk: d for d in run.reference.debates.select_related("prompt", "response_a__model", "response_b__model")
    }
    reference = reference_verdicts(list(debates.values()))
    samples, agreed, scored = [], 0, 0
    verdicts = run.verdicts.order_by("debate_id", "reversed_order", "sample")
    for verdict in verdicts.exclude(debate_id__in=list(withheld)).iterator(chunk_size=2000):
        debate = debates[verdict.debate_id]
        # The debate's first submission is response_b where it was swapped; the judge saw the other
        # order again where its sample is reversed.
        first, second = (
            (debate.response_b, debate.response_a) if debate.swapped else (debate.response_a, debate.response_b)
        )
        if verdict.reversed_order:
            first, second = second, first
        target = reference.get(debate.pk)
        shown_target = unswap(target) if target is not None and verdict.reversed_order else target
        scores = {}
        if shown_target is not None and verdict.verdict is not None:
            right = verdict.verdict == shown_target
            agreed, scored = agreed + right, scored + 1
            scores[SCORER] = Score(value=CORRECT if right else INCORRECT, answer=str(verdict.verdict))
        samples.append(
            EvalSample(
                id=f"{debate.pk}-{'reversed' if verdict.reversed_order else 'shown'}",
                epoch=verdict.sample + 1,
                input=debate.prompt.text,
                target="" if shown_target is None else str(shown_target),
                output=ModelOutput.from_content(model=run.judge, content=verdict.text),
                scores=scores,
                metadata={
                    "debate": debate.pk,
                    "reversed_order": verdict.reversed_order,
                    "first_shown": first.model.slug,
                    "second_shown": second.model.slug,
                    "verdict": verdict.verdict,
                    "reference": "none yet" if target is None else debate.status,
                },
            )
        )
    created = (run.job.created_at if run.job is not None else datetime.now(UTC)).isoformat()
    spec = EvalSpec(
        created=created,
        task="evalhub/judge_run",
        task_id=str(run.pk),
        task_display_name=f"{run} on {run.reference}",
        dataset=EvalDataset(name=run.reference.benchmark.slug, samples=len(debates)),
        model=run.judge,
        config=EvalConfig(epochs=run.samples),
        metadata={
            "criterion": run.reference.criterion.slug,
            "evalhub_judge_run": run.pk,
            "pairs_withheld": len(set(withheld) & set(debates)),  # held by the reader on a blind-first screen
        },
    )
    accuracy = EvalMetric(name="accuracy", value=agreed / scored if scored else 0.0)
    results = EvalResults(
        total_samples=len(samples),
        completed_samples=len(samples),
        scores=[EvalScore(name=SCORER, scorer=SCORER, scored_samples=scored, metrics={"accuracy": accuracy})],
    )
    return EvalLog(status="success", eval=spec, results=results, stats=EvalStats(started_at=created), samples=samples)


def write_judge_run_log(run: JudgeRun, path: Path, withheld: Collection[int] = ()) -> Path:
    """Write the run's log where `inspect view` finds it (`.eval`, inspect-ai's own format)."""
    from inspect_ai.log import write_eval_log

    write_eval_log(judge_run_log(run, withheld), str(path), format="eval")
    return path
