"""DHP and YESciEval judge runs: perturb, have every judge score every text, and summarise.

One chunk of prompts at a time (evalhub.jobs.chunks): the target models' responses get their
perturbed copies (stored as derived responses, LLM-made ones through the stored rewrites),
then each judge scores the originals and the copies:
- DHP: every metric of the task for every text (G-Eval prompt, DHP Appendix G);
- YESciEval: every rubric for the originals, and each adversarial copy under the rubric its
  attack targets (B.3), JSON {rating, rationale}.
Generation is repeated k times (each repeat its own cached call) and averaged; an unreadable
answer is re-asked once with a format reminder, then stored as invalid — it never becomes a
score. Local transformers judges can instead give the expected score from the next-token
distribution over '1'..'5' in one forward pass, with the probability mass on the digits.
"""

from __future__ import annotations

import asyncio
import math
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from evalhub.catalog.actions.responses import do_derive_response
from evalhub.catalog.models import Prompt, Response, variant_q
from evalhub.core.dhp import perturbations as registry
from evalhub.core.dhp.perturbations import split_sentences
from evalhub.core.files.evaluation_events import EvaluationResult
from evalhub.core.prompts.judge_outputs import parse_likert_score, parse_rubric_json
from evalhub.core.prompts.judges import TASKS, geval_messages
from evalhub.core.yescieval import rubrics
from evalhub.core.yescieval.papers import papers_of
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.llm import event_loop
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.scoring.discernment.config import DISCERNMENT, DiscernmentConfig
from evalhub.scoring.discernment.results import discernment_outcome, discernment_summary, perturbation_key
from evalhub.scoring.models import (
    DEFAULT_CHUNK_PROMPTS,
    DiscernmentFamily,
    DiscernmentRun,
    JudgeScore,
    ScoringMode,
)
from evalhub.system.bounded_queries import where_in
from evalhub.system.model_access import chat_client, local_or_remote_scorer, queue_for
from evalhub.system.telemetry import emit_after_commit
from evalhub.worklog.actions import do_record_row_issues
from evalhub.worklog.models import IssueLog, RowIssue
from evalhub.worklog.rewrites import stored_completer

MAX_TOKENS: dict[str, int] = {DiscernmentFamily.DHP: 16, DiscernmentFamily.YESCIEVAL: 400}
REMINDER: dict[str, str] = {
    DiscernmentFamily.DHP: "Answer with the score only: one number from 1 to 5.",
    DiscernmentFamily.YESCIEVAL: 'Answer with JSON only: {"rating": <an integer from 1 to 5>, "rationale": "<why>"}.',
}


@dataclass
class JudgeChunkResult:
    scores: list[JudgeScore] = field(default_factory=list)
    issues: list[RowIssue] = field(default_factory=list)
    failed_calls: int = 0  # judge calls that produced no answer (each also a reported row)


@dataclass(frozen=True)
class Item:
    response: Response
    metric: str
    messages: list[dict[str, str]]


def judge_chunk_work(run: DiscernmentRun, chunk: JobChunk) -> JudgeChunkResult:
    result = JudgeChunkResult(issues=IssueLog(run.job))
    issue = result.issues

    prompts = {p.pk: p for p in Prompt.objects.filter(pk__in=chunk.unit_ids)}
    originals = list(
        Response.objects.filter(
            variant_q(run.target_variant), prompt_id__in=prompts, parent__isnull=True, model__in=run.target_models.all()
        ).order_by("pk")
    )
    derived = _perturbed(run, prompts, originals, issue)
    items = _items(run, prompts, originals, derived)
    done = set(
        JudgeScore.objects.filter(run=run, response__in=[i.response for i in items]).values_list(
            "judge", "response_id", "metric", "repeat"
        )
    )
    for judge in run.judges:
        if run.mode == ScoringMode.PROBABILITY:
            once = [i for i in items if (judge, i.response.pk, i.metric, 0) not in done]
            scores, asked = _probability_scores(run, judge, once, issue), len(once)
        else:
            repeated = [
                (i, r) for i in items for r in range(run.repeats) if (judge, i.response.pk, i.metric, r) not in done
            ]
            scores, asked = event_loop.run(_generated_scores(run, judge, repeated, issue)), len(repeated)
        result.scores += scores
        result.failed_calls += asked - len(scores)
    return result


def _context(run: DiscernmentRun, prompt: Prompt, response: Response, pool: dict[int, list[Response]]) -> dict:
    others = [r.text for r in pool[response.model_id] if r.prompt_id != prompt.pk]
    same_domain = [
        s
        for r in pool[response.model_id]
        if r.prompt_id != prompt.pk and (r.prompt.category == prompt.category)
        for s in split_sentences(r.text)[:1]
    ]
    return {
        "others": others,
        "same_domain": same_domain,
        "wrong_ending": (prompt.metadata or {}).get("wrong_ending", ""),
        "unit": TASKS[run.task].unit if run.task in TASKS else "answer",
        **{k: v for k, v in (prompt.metadata or {}).items() if k in ("sports", "blog", "tweet")},
    }


def _perturbed(run: DiscernmentRun, prompts, originals: list[Response], issue) -> list[Response]:
    if not originals:
        return []
    existing = {
        (r.parent_id, r.perturbation, r.perturbation_severity): r
        for r in Response.objects.filter(parent__in=originals, perturbation_seed=run.seed)
    }
    pool: dict[int, list[Response]] = defaultdict(list)
    for response in Response.objects.filter(
        variant_q(run.target_variant),
        prompt__benchmark_id=run.benchmark_id,
        parent__isnull=True,
        model__in=run.target_models.all(),
    ).select_related("prompt"):
        pool[response.model_id].append(response)
    # What the perturbations may draw on, once per original (not once per perturbation and call).
    contexts = {o.pk: _context(run, prompts[o.prompt_id], o, pool) for o in originals}
    out = []
    for name, severity in run.perturbations:
        perturbation = registry.REGISTRY[name]
        todo = [o for o in originals if (o.pk, name, severity) not in existing]
        out += [existing[(o.pk, name, severity)] for o in originals if (o.pk, name, severity) in existing]

        def arguments(original: Response, name=name, severity=severity) -> dict:
            return {
                "severity": severity,
                "seed": zlib.crc32(f"{run.seed}:{original.pk}:{name}:{severity}".encode()),
                "shape": run.shape,
                "context": contexts[original.pk],
            }

        complete = None
        if perturbation.llm and run.perturbation_lm:
            complete = stored_completer(
                f"perturbation:{name}",
                run.perturbation_lm,
                [partial(_dry_apply, name, o.text, arguments(o)) for o in todo],
            )

        for original in todo:
            label = perturbation_key(name, severity)
            try:
                made = registry.apply(name, original.text, complete=complete, **arguments(original))
            except LLMError as error:
                issue("perturbation", f"{label}: {error}", prompt=prompts[original.prompt_id], response=original)
                continue
            if not made.ok:
                issue("perturbation", f"{label}: {made.note}", prompt=prompts[original.prompt_id], response=original)
                continue
            response = do_derive_response(
                original,
                perturbation=name,
                severity=severity,
                seed=run.seed,
                text=made.text or "",
                level=perturbation.level,
                params={**made.params, "change": made.note, "family": perturbation.family},
            )
            out.append(response)
    return out


def _messages(run: DiscernmentRun, prompt: Prompt, text: str, metric: str) -> list[dict[str, str]]:
    if run.family == DiscernmentFamily.YESCIEVAL:  # the package's prompt for the rubric, as it renders it
        papers = papers_of(prompt.metadata or {}, prompt.source)
        return rubrics.messages(metric, prompt.text, (text,), papers, domain=run.domain or None)
    return geval_messages(run.task, metric, text, prompt.source or prompt.text)


def _items(run: DiscernmentRun, prompts, originals: list[Response], derived: list[Response]) -> list[Item]:
    items = [Item(o, m, _messages(run, prompts[o.prompt_id], o.text, m)) for o in originals for m in run.metrics]
    for response in derived:
        metrics = run.metrics
        if run.family == DiscernmentFamily.YESCIEVAL:  # YESciEval, B.3: each attack targets one rubric
            attack = registry.REGISTRY[response.perturbation]
            targets = rubrics.targets(attack.rubric, attack.rubric_family)
            metrics = [metric for metric in run.metrics if metric in targets]
        items += [Item(response, m, _messages(run, prompts[response.prompt_id], response.text, m)) for m in metrics]
    return items


def _parse(run: DiscernmentRun, text: str) -> tuple[float | None, str]:
    if run.family == DiscernmentFamily.YESCIEVAL:
        rating = parse_rubric_json(text)
        return (float(rating.rating), rating.rationale) if rating else (None, "")
    return parse_likert_score(text), ""


async def _generated_scores(run: DiscernmentRun, judge: str, todo: list[tuple[Item, int]], issue) -> list[JudgeScore]:
    try:
        client = chat_client(judge)
    except (LLMError, UnknownProvider) as error:
        for item, _ in todo:  # every call it was given fails, each reported with the cause
            issue("judging", f"{judge}: {error}", response=item.response, label=item.metric)
        return []

    async def one(item: Item, repeat: int) -> JudgeScore | None:
        sampling = {"temperature": run.temperature, "max_tokens": MAX_TOKENS[run.family], "repeat": repeat}
        try:
            answer = (await client.complete(item.messages, **sampling)).text
            score, rationale = _parse(run, answer)
            reasked = score is None
            if reasked:
                follow_up = [
                    *item.messages,
                    {"role": "assistant", "content": answer},
                    {"role": "user", "content": REMINDER[run.family]},
                ]
                answer = (await client.complete(follow_up, **sampling)).text
                score, rationale = _parse(run, answer)
        except LLMError as error:
            issue("judging", f"{judge}: {error}", response=item.response, label=item.metric)
            return None
        return JudgeScore(
            run=run,
            judge=judge,
            response=item.response,
            metric=item.metric,
            repeat=repeat,
            score=score,
            valid=score is not None,
            reasked=reasked,
            rationale=rationale[:5000],
            raw=answer[:5000],
        )

    try:
        scores = await asyncio.gather(*(one(item, repeat) for item, repeat in todo))
    finally:
        await client.aclose()
    return [s for s in scores if s is not None]


def _probability_scores(run: DiscernmentRun, judge: str, todo: list[Item], issue) -> list[JudgeScore]:
    try:
        scorer = local_or_remote_scorer(judge)
    except (UnknownProvider, OSError, ValueError) as error:
        for item in todo:
            issue("judging", f"{judge}: {error}", response=item.response, label=item.metric)
        return []
    scores = []
    for item in todo:
        distribution = scorer.next_token_distribution(item.messages)
        expected = distribution.expected_score()
        valid = distribution.mass > 0 and not math.isnan(expected)
        scores.append(
            JudgeScore(
                run=run,
                judge=judge,
                response=item.response,
                metric=item.metric,
                repeat=0,
                score=expected if valid else None,
                valid=valid,
                digit_mass=distribution.mass,
                raw=str({k: round(v, 6) for k, v in distribution.probabilities.items()}),
            )
        )
    return scores


# --- results ------------------------------------------------------------------------


def score_events(run: DiscernmentRun, scores: Sequence[JudgeScore]) -> list[EvaluationResult]:
    """A DHP or YESciEval judge's scores (1–5, or none when its answer was unreadable) as evaluation
    events, each naming the perturbation of the text it scored."""
    benchmark = run.benchmark.slug
    perturbation = dict(
        Response.objects.filter(pk__in={s.response_id for s in scores}).values_list("pk", "perturbation")
    )
    return [
        EvaluationResult(
            name=f"{run.family}:{score.metric}",
            evaluator=score.judge,
            benchmark=benchmark,
            score=score.score if score.valid else None,
            label=None if score.valid else "unreadable",
            explanation=score.rationale,
            response_id=str(score.response_id),
            evaluator_version=f"{run.task}:{run.mode}",
            extra={
                "discernment_run.id": run.pk,
                "repeat": score.repeat,
                "perturbation": perturbation.get(score.response_id) or "original",
            },
        )
        for score in scores
    ]


class DiscernmentRunner(JobRunner[DiscernmentRun, JudgeChunkResult]):
    """DHP / YESciEval judging: a chunk is a set of prompts; each original text and its perturbed
    copies scored by every judge, written as JudgeScore rows (and reported rows)."""

    kind = DISCERNMENT
    run_attr = "discernment_run"
    results = "discernment_results"
    config = DiscernmentConfig

    @classmethod
    def plan(cls, config: DiscernmentConfig, run: DiscernmentRun, size: int | None) -> Plan:
        """Chunks of prompts; progress counts one unit per original response of the targets."""
        ids = list(config.benchmark.prompts.order_by("pk").values_list("pk", flat=True))
        targets = Response.objects.filter(
            variant_q(config.target_variant), parent__isnull=True, model__in=config.targets
        )
        units = Counter(where_in(targets.values_list("prompt_id", flat=True), "prompt_id", ids))
        label = "DHP" if config.family == "dhp" else "YESciEval"
        return Plan(f"{label} on {config.benchmark.name}", ids, size or DEFAULT_CHUNK_PROMPTS, units)

    @classmethod
    def load(cls, job_id: int) -> DiscernmentRun:
        return DiscernmentRun.objects.select_related("job").get(job_id=job_id)

    @classmethod
    def queue(cls, run: DiscernmentRun) -> str:
        """Local judges (and next-token probabilities, which only they give) run on the GPU workers."""
        return queue_for(run.judges, local=run.mode == "probability")

    def work(self, chunk: JobChunk) -> JudgeChunkResult:
        return judge_chunk_work(self.run, chunk)

    def write(self, chunk: JobChunk, result: JudgeChunkResult) -> int:
        JudgeScore.objects.bulk_create(result.scores, ignore_conflicts=True)
        do_record_row_issues(result.issues)
        emit_after_commit(partial(score_events, self.run, result.scores))
        return result.failed_calls

    def progress(self, job: Job) -> str:
        scored = JudgeScore.objects.filter(run=self.run).count()
        return f"{job.progress_done} of {job.progress_total} responses judged ({scored:,} scores)"

    def finish(self, job: Job) -> Settled:
        summary = discernment_summary(self.run)
        outcome = discernment_outcome(self.run, summary)
        summary["failed_judges"] = {f.name: f.first_error for f in outcome.failed_components}
        issues = summary["issues"]
        message = f"Done: {outcome.produced:,} scores, {outcome.invalid:,} invalid answers" + (
            f", {issues:,} rows reported." if issues else "."
        )
        return Settled(message, summary, outcome)


def _dry_apply(
    name: str, text: str, arguments: dict[str, Any], record: Callable[[list[dict[str, str]]], str]
) -> object:
    """One perturbation made with a recording stand-in for the LLM (stored_completer's dry run)."""
    return registry.apply(name, text, complete=record, **arguments)
