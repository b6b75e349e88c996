"""Single-judge runs over a debate run's pairs (ScaleEval, Section 5), and their report.

A judge sees the same prompt family as the debate agents' first round, optionally with a
criteria variant (Table 5) and privileged information, k times per pair (self-consistency),
and optionally with the pair reversed (position bias). Finished judgments are stored one by
one, so a resumed run asks only for what is missing.
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from evalhub.core.agreement import (
    Rate,
    by_group,
    example_agreement,
    majorities,
    mode,
    position_flip_rate,
    system_agreement,
    unswap,
)
from evalhub.core.criteria_variants import criteria_variant
from evalhub.core.debate import DebateSetup, ask_for_verdict, criteria_text, initial_prompt
from evalhub.debates.models import Debate, DebateStatus, JudgeRun, JudgeVerdict
from evalhub.debates.runner import PRIVILEGED_TITLES
from evalhub.jobs.actions import do_create_job, do_fail_job, do_finish_job, do_progress_job
from evalhub.jobs.models import Job
from evalhub.llm import event_loop
from evalhub.llm.types import LLMError
from evalhub.system.db_thread import DatabaseThread
from evalhub.system.model_access import chat_client

JUDGE_RUN = "judge_run"


def do_create_judge_run(user=None, **fields) -> JudgeRun:
    with transaction.atomic():
        run = JudgeRun.objects.create(created_by=user if getattr(user, "is_authenticated", False) else None, **fields)
        per_pair = run.samples * (2 if run.check_position else 1)
        run.job = do_create_job(
            JUDGE_RUN,
            f"Judge {run} on {run.reference.name}",
            user=user,
            params={"judge_run": run.pk},
            total=run.reference.debates.count() * per_pair,
        )
        run.save(update_fields=["job"])

        def enqueue() -> None:
            from evalhub.debates.tasks import run_judge_task

            run_judge_task.delay(run.pk)

        transaction.on_commit(enqueue)
    return run


def judge_setup(run: JudgeRun, debate: Debate, reversed_order: bool) -> DebateSetup:
    first, second = debate.shown
    if reversed_order:
        first, second = second, first
    criterion = debate.run.criterion
    levels = criteria_variant(criterion.levels, run.criteria_variant, seed=run.seed)
    available = debate.prompt.privileged_information()
    privileged = {
        PRIVILEGED_TITLES.get(n, n.replace("_", " ").capitalize()): available[n]
        for n in run.privileged_sources
        if n in available
    }
    return DebateSetup(
        debate.prompt.text,
        first.text,
        second.text,
        criteria_text(criterion.name, criterion.definition, levels),
        agents=1,
        rounds=1,
        privileged=privileged,
    )


def run_judge(judge_run_id: int) -> str:
    run = JudgeRun.objects.select_related("reference__criterion", "job").get(pk=judge_run_id)
    job = run.job
    if job is not None and job.cancel_requested:
        return "cancelled"
    debates = list(run.reference.debates.select_related("run__criterion", "prompt", "response_a", "response_b"))
    done = set(run.verdicts.values_list("debate_id", "reversed_order", "sample"))
    orders = [False, True] if run.check_position else [False]
    todo = [(d, o, k) for d in debates for o in orders for k in range(run.samples) if (d.pk, o, k) not in done]
    setups = {(d.pk, o): judge_setup(run, d, o) for d in debates for o in orders}
    client = chat_client(run.judge)

    async def judge_one(db: DatabaseThread, debate: Debate, reversed_order: bool, sample: int) -> None:
        seed = (
            None if run.temperature == 0 else zlib.crc32(f"{run.seed}:{debate.pk}:{reversed_order}:{sample}".encode())
        )

        async def ask(messages):
            completion = await client.complete(
                messages,
                temperature=run.temperature,
                max_tokens=run.max_tokens,
                seed=seed,
                repeat=sample if run.samples > 1 else None,
            )
            return completion.text, {
                "input_tokens": completion.input_tokens,
                "output_tokens": completion.output_tokens,
                "latency_s": completion.latency_s,
                "cached": completion.cached,
            }

        text, verdict, reasked, extra = await ask_for_verdict(initial_prompt(setups[(debate.pk, reversed_order)]), ask)
        await db.run(_store, run, debate, reversed_order, sample, text, verdict, reasked, extra)

    async def all_of_them() -> None:
        async with DatabaseThread() as db:
            try:
                await asyncio.gather(*(judge_one(db, *item) for item in todo))
            finally:  # its connections belong to this loop
                await client.aclose()

    try:
        event_loop.run(all_of_them())
    except LLMError as error:
        if job:
            do_fail_job(job, str(error))
        return "failed"
    if job:
        do_finish_job(job, f"{run.verdicts.count()} judgments.")
    return "succeeded"


def _store(
    run: JudgeRun, debate: Debate, reversed_order: bool, sample: int, text: str, verdict, reasked, extra
) -> None:
    try:
        with transaction.atomic():
            JudgeVerdict.objects.create(
                judge_run=run,
                debate=debate,
                reversed_order=reversed_order,
                sample=sample,
                text=text,
                verdict=verdict,
                reasked=reasked,
                input_tokens=extra.get("input_tokens", 0),
                output_tokens=extra.get("output_tokens", 0),
                latency_s=extra.get("latency_s", 0.0),
                cached=extra.get("cached", False),
            )
    except IntegrityError:  # a retried task found it stored already
        return
    if run.job_id:
        do_progress_job(Job(pk=run.job_id), 1)  # it locks and re-reads the row itself


# --- the report ----------------------------------------------------------------------------


@dataclass
class JudgeReport:
    label: str
    example: Rate
    system: bool | None
    by_scenario: dict[str, tuple[Rate, bool | None]]
    flips: Rate | None
    invalid: int
    judge_run: JudgeRun | None = None


REFERENCE_STATUSES = (DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED)


def reference_verdicts(debates: list[Debate]) -> dict[int, int]:
    """The reference per debate, in the order the agents saw: the agents' consensus, or the
    people's final label where the agents could not agree (ScaleEval's debate-plus-human reference)."""
    return {d.pk: d.verdict for d in debates if d.status in REFERENCE_STATUSES and d.verdict is not None}


def judge_verdicts(run: JudgeRun) -> tuple[dict[int, int | None], dict[int, int | None], int]:
    """Per debate: the majority of samples in the debate's order, the same for the reversed order
    (mapped back), and the number of invalid answers."""
    return majorities(run.verdicts.values_list("debate_id", "reversed_order", "verdict"))


def meta_evaluation(reference_run) -> tuple[list[JudgeReport], int, int]:
    """Each judge run (and the majority of all judges) against the reference; plus the number of
    pairs with a reference and of pairs still waiting for one."""
    debates = list(reference_run.debates.select_related("prompt"))
    reference = reference_verdicts(debates)
    scenario = {d.pk: d.prompt.category or "—" for d in debates}
    ids = sorted(reference)
    reports, per_judge = [], []
    for run in reference_run.judge_runs.select_related("job"):
        same, reversed_, invalid = judge_verdicts(run)
        per_judge.append(same)
        predicted = [same.get(i) for i in ids]
        expected = [reference[i] for i in ids]
        paired = [i for i in same if i in reversed_]
        flips = (
            position_flip_rate([same[i] for i in paired], [unswap(reversed_[i]) for i in paired])
            if run.check_position
            else None
        )
        reports.append(
            JudgeReport(
                str(run),
                example_agreement(predicted, expected),
                system_agreement(predicted, expected),
                by_group([scenario[i] for i in ids], predicted, expected),
                flips,
                invalid,
                run,
            )
        )
    if len(per_judge) > 1:  # multi-LLM consistency baseline: the judges' majority, without debate
        majority = [mode(judge.get(i) for judge in per_judge) for i in ids]
        expected = [reference[i] for i in ids]
        reports.append(
            JudgeReport(
                "Majority of the judges above",
                example_agreement(majority, expected),
                system_agreement(majority, expected),
                by_group([scenario[i] for i in ids], majority, expected),
                None,
                0,
            )
        )
    waiting = sum(d.status == DebateStatus.UNRESOLVED for d in debates)
    return reports, len(ids), waiting
