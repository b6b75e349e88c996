"""Single-judge runs over a debate run's pairs (ScaleEval, Section 5), and their report.

A judge sees the same prompt family as the debate agents' first round, optionally with a
criteria variant (Table 5) and privileged information, k times per pair (self-consistency),
and optionally with the pair reversed (position bias). Finished judgments are stored one by
one, so a resumed run asks only for what is missing.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from evalhub.core.alignment.prompting import example_turns
from evalhub.core.alignment.versions import WorkedExample
from evalhub.core.files.evaluation_events import EvaluationResult
from evalhub.core.privileged.graded import GRADE_REMINDER, graded_prompt, parse_grade, verdict_of_grade
from evalhub.core.prompts import sections as ps
from evalhub.core.prompts.criteria_variants import criteria_section
from evalhub.core.prompts.judge_outputs import parse_pairwise_rubric_json
from evalhub.core.runs.outcomes import ComponentFailure, Outcome
from evalhub.core.runs.usage import CallStats
from evalhub.core.scaleeval.debate import PRIVILEGED_NOTE, DebateSetup, ask_for_verdict, initial_prompt
from evalhub.core.scaleeval.verdict_probabilities import TokenLogprobs, verdict_probabilities
from evalhub.core.statistics.agreement import (
    Rate,
    by_group,
    coverage,
    example_agreement,
    judged_pairs,
    majorities,
    mode,
    position_flip_rate,
    system_agreement,
    unswap,
)
from evalhub.core.yescieval import rubrics
from evalhub.core.yescieval.papers import papers_of
from evalhub.debates.actions import DEBATES_PER_JUDGE_CHUNK, RunRejected, judge_queue
from evalhub.debates.config import JUDGE_RUN, JudgeRunConfig
from evalhub.debates.evaluation_events import PairVerdict, pair_events
from evalhub.debates.models import GRADED, RUBRIC, Debate, DebateStatus, JudgeRun, JudgeVerdict
from evalhub.debates.runner import PRIVILEGED_TITLES
from evalhub.debates.verdict_counts import REFERENCE_STATUSES, do_recount_judge_run
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.llm import event_loop
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.system.model_access import chat_client
from evalhub.system.telemetry import emit_after_commit


def judge_messages(run: JudgeRun, debate: Debate, reversed_order: bool) -> list[dict[str, str]]:
    """The prompt a single judge is asked: ScaleEval's first round, Figure 8's for a graded run, or the
    `yescieval` package's pairwise rubric prompt (the pair in the order shown as its A and B)."""
    setup = judge_setup(run, debate, reversed_order)
    if run.scale == RUBRIC:
        papers = papers_of(debate.prompt.metadata or {}, debate.prompt.source)
        answers = (setup.submission_1, setup.submission_2)
        return rubrics.messages(
            run.rubric, setup.question, answers, papers, kind=rubrics.PAIRWISE, domain=run.domain or None
        )
    if run.scale != GRADED:
        # A judge version's worked examples come first, each asked and answered as a pair would be.
        examples = [WorkedExample(**example) for example in run.examples]
        return example_turns(examples, setup.criteria) + initial_prompt(setup)
    return graded_prompt(
        setup.question,
        setup.submission_1,
        setup.submission_2,
        criteria=setup.criteria,
        privileged=setup.privileged,
        reference_title=PRIVILEGED_TITLES.get("reference_answer", ps.REFERENCE_ANSWER),
        privileged_note=PRIVILEGED_NOTE,
    )


def judge_setup(run: JudgeRun, debate: Debate, reversed_order: bool) -> DebateSetup:
    first, second = debate.shown
    if reversed_order:
        first, second = second, first
    criterion = debate.run.criterion
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
        criteria_section(criterion.name, criterion.definition, criterion.levels, run.criteria_variant, run.seed),
        agents=1,
        rounds=1,
        privileged=privileged,
        instructions=run.instructions,
    )


RUBRIC_REMINDER = (
    'Answer in the JSON format the instructions give: {"<characteristic>": {"ResponseA": {"rating": <1-5>, '
    '"rationale": "..."}, "ResponseB": {"rating": <1-5>, "rationale": "..."}}}.'
)


def rubric_verdict(text: str) -> int | None:
    """A YESciEval pairwise answer as a verdict in the order shown: the higher-rated answer is
    preferred, equal ratings are neither (0); None when the answer holds no two readable ratings."""
    ratings = parse_pairwise_rubric_json(text)
    if ratings is None:
        return None
    a, b = ratings
    return verdict_of_grade(a.rating - b.rating)


@dataclass
class JudgeChunkResult:
    verdicts: list[JudgeVerdict] = field(default_factory=list)
    failed: int = 0
    first_error: str = ""


TOP_LOGPROBS = 5  # alternatives per token: the three verdict digits and room for their look-alikes


def _probabilities(tokens: list[list[Any]] | None, verdict: int | None) -> dict[str, float] | None:
    """The verdict's three probabilities from the answer's token log-probabilities, where it has them."""
    if not tokens:
        return None
    read = [TokenLogprobs(t[0], t[1], tuple((a[0], a[1]) for a in t[2])) for t in tokens]
    found = verdict_probabilities(read, verdict)
    return found.as_dict() if found else None


def judge_chunk_work(run: JudgeRun, chunk: JobChunk) -> JudgeChunkResult:
    """Ask the judge about every (debate, order, sample) of the chunk not stored yet. A failed call
    is counted with its cause (a resume asks again); the verdicts are written when the chunk is."""
    debates = list(
        Debate.objects.filter(pk__in=chunk.unit_ids).select_related(
            "run__criterion", "prompt", "response_a", "response_b"
        )
    )
    done = set(run.verdicts.filter(debate__in=debates).values_list("debate_id", "reversed_order", "sample"))
    orders = [False, True] if run.check_position else [False]
    todo = [(d, o, k) for d in debates for o in orders for k in range(run.samples) if (d.pk, o, k) not in done]
    result = JudgeChunkResult()
    try:
        client = chat_client(run.judge)
    except (LLMError, UnknownProvider, ValueError) as error:
        return JudgeChunkResult(failed=len(todo), first_error=str(error))

    async def judge_one(debate: Debate, reversed_order: bool, sample: int) -> None:
        seed = (
            None if run.temperature == 0 else zlib.crc32(f"{run.seed}:{debate.pk}:{reversed_order}:{sample}".encode())
        )

        latest: dict[str, Any] = {}  # the last answer's token log-probabilities (the one the verdict is read from)

        async def ask(messages: list[dict[str, str]]) -> tuple[str, CallStats]:
            completion = await client.complete(
                messages,
                temperature=run.temperature,
                max_tokens=run.max_tokens,
                seed=seed,
                repeat=sample if run.samples > 1 else None,
                top_logprobs=TOP_LOGPROBS if run.probabilities else 0,
            )
            latest["tokens"] = completion.token_logprobs
            return completion.text, completion.stats()

        try:
            messages = judge_messages(run, debate, reversed_order)
            if run.scale == GRADED:
                answer = await ask_for_verdict(messages, ask, parse_grade, GRADE_REMINDER)
                grade, verdict = answer.verdict, verdict_of_grade(answer.verdict)
            elif run.scale == RUBRIC:
                answer = await ask_for_verdict(messages, ask, rubric_verdict, RUBRIC_REMINDER)
                grade, verdict = None, answer.verdict
            else:
                answer = await ask_for_verdict(messages, ask)
                grade, verdict = None, answer.verdict
            text, reasked, extra = answer.text, answer.reasked, answer.extra
        except LLMError as error:
            result.failed += 1
            result.first_error = result.first_error or str(error)
            return
        result.verdicts.append(
            JudgeVerdict(
                judge_run=run,
                debate=debate,
                reversed_order=reversed_order,
                sample=sample,
                text=text,
                verdict=verdict,
                grade=grade,
                reasked=reasked,
                probabilities=_probabilities(latest.get("tokens"), verdict) if run.scale != GRADED else None,
                input_tokens=extra.input_tokens,
                output_tokens=extra.output_tokens,
                latency_s=extra.latency_s,
                cached=extra.cached,
            )
        )

    async def all_of_them() -> None:
        try:
            await asyncio.gather(*(judge_one(*item) for item in todo))
        finally:  # its connections belong to this loop
            await client.aclose()

    event_loop.run(all_of_them())
    return result


def verdict_events(run: JudgeRun, verdicts: Sequence[JudgeVerdict]) -> list[EvaluationResult]:
    """A single judge's verdicts as evaluation events (evalhub.debates.evaluation_events)."""
    return pair_events(
        [
            PairVerdict(
                debate_id=verdict.debate_id,
                verdict=verdict.verdict,
                evaluator=run.judge,
                reversed_order=verdict.reversed_order,
                explanation=verdict.text,
                evaluator_version=run.criteria_variant,
                extra={"judge_run.id": run.pk, "sample": verdict.sample, "reversed_order": verdict.reversed_order},
            )
            for verdict in verdicts
        ]
    )


class JudgeRunRunner(JobRunner[JudgeRun, JudgeChunkResult]):
    """Single-judge runs: a chunk is a set of debates; the judge's verdicts on each pair (k samples,
    both orders where asked), written as JudgeVerdict rows with the boards' counts."""

    kind = JUDGE_RUN
    run_attr = "judge_run"
    results = "debate_judge_run_results"
    config = JudgeRunConfig
    rejected = RunRejected

    @classmethod
    def plan(cls, config: JudgeRunConfig, run: JudgeRun, size: int | None) -> Plan:
        """Chunks of debates; progress counts each answer asked for (k samples, both orders where asked)."""
        per_pair = run.samples * (2 if run.check_position else 1)
        ids = list(run.reference.debates.order_by("id").values_list("id", flat=True))
        return Plan(
            f"Judge {run} on {run.reference.name}", ids, size or DEBATES_PER_JUDGE_CHUNK, {pk: per_pair for pk in ids}
        )

    @classmethod
    def load(cls, job_id: int) -> JudgeRun:
        return JudgeRun.objects.select_related("reference").get(job_id=job_id)

    @classmethod
    def queue(cls, run: JudgeRun) -> str:
        return judge_queue(run)

    def work(self, chunk: JobChunk) -> JudgeChunkResult:
        return judge_chunk_work(self.run, chunk)

    def write(self, chunk: JobChunk, result: JudgeChunkResult) -> int:
        JudgeVerdict.objects.bulk_create(result.verdicts, ignore_conflicts=True)  # a retried chunk adds nothing
        do_recount_judge_run(self.run, chunk.unit_ids)  # the boards' counts, in the chunk's transaction
        emit_after_commit(partial(verdict_events, self.run, result.verdicts))
        return result.failed

    def first_error(self, result: JudgeChunkResult) -> str:
        return result.first_error

    def progress(self, job: Job) -> str:
        return f"{job.progress_done:,} of {job.progress_total:,} judgments"

    def finish(self, job: Job) -> Settled:
        outcome = judge_outcome(self.run, job)
        return Settled(f"{outcome.produced:,} judgments, {outcome.invalid:,} unreadable.", {}, outcome)


def judge_outcome(run: JudgeRun, job: Job) -> Outcome:
    """Judgments stored against calls that failed; a judge with no judgment at all is named."""
    stored = run.verdicts.count()
    invalid = run.verdicts.filter(verdict__isnull=True).count()
    chunks = job.chunks.filter(units_failed__gt=0)
    failed = sum(chunks.values_list("units_failed", flat=True))
    first_error = chunks.exclude(first_error="").order_by("index").values_list("first_error", flat=True).first()
    failures = (ComponentFailure("Judge", run.judge, first_error),) if stored == 0 and first_error else ()
    return Outcome(
        planned=job.progress_total,
        produced=stored - invalid,
        failed=failed,
        invalid=invalid,
        failed_components=failures,
    )


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
    coverage: Rate | None = None  # pairs with a reference that the judge answered
    ties: int = 0  # for the plain vote: pairs whose vote tied (no verdict; not counted as misses)


def reference_verdicts(debates: list[Debate]) -> dict[int, int]:
    """The reference per debate, in the order the agents saw: the agents' consensus, or the
    people's final label where the agents could not agree (ScaleEval's debate-plus-human reference)."""
    return {d.pk: d.verdict for d in debates if d.status in REFERENCE_STATUSES and d.verdict is not None}


def judge_verdicts(run: JudgeRun) -> tuple[dict[int, int | None], dict[int, int | None], int]:
    """Per debate: the majority of samples in the debate's order, the same for the reversed order
    (mapped back), and the number of invalid answers."""
    rows: list[tuple[int, bool, int | None]] = list(run.verdicts.values_list("debate_id", "reversed_order", "verdict"))
    return majorities(rows)


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
        judged, predicted, expected = judged_pairs(same, reference)
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
                by_group([scenario[i] for i in judged], predicted, expected),
                flips,
                invalid,
                run,
                coverage(same, reference),
            )
        )
    if len(per_judge) > 1:
        # A plain vote of the independent single judges above (not ScaleEval's multi-LLM consistency
        # baseline): pairs where the vote ties have no verdict and are counted apart, not as misses.
        votes = {i: [judge[i] for judge in per_judge if i in judge] for i in ids}
        majority = {i: mode(v) for i, v in votes.items() if v}
        ties = sum(verdict is None for verdict in majority.values())
        decided = {i: v for i, v in majority.items() if v is not None}
        judged, predicted, expected = judged_pairs(decided, reference)
        reports.append(
            JudgeReport(
                "Plain vote of the judges above",
                example_agreement(predicted, expected),
                system_agreement(predicted, expected),
                by_group([scenario[i] for i in judged], predicted, expected),
                None,
                0,
                coverage=coverage(decided, reference),
                ties=ties,
            )
        )
    waiting = sum(d.status == DebateStatus.UNRESOLVED for d in debates)
    return reports, len(ids), waiting
