"""One chunk of a GEM job: texts for each variant, the pairs, their log-probabilities, the rows.

The pure parts (pairs, PMI, aggregates) live in evalhub.core.gem.pairs; this module gathers the
inputs from the database, asks the LLMs for rewrites (stored, see rewrites.py), scores on
the worker's evaluation LM (loaded once per worker process) and hands the rows to
do_record_chunk, which writes them in one transaction.

Inputs that cannot be scored become RowIssue rows with their cause — a prompt with fewer
than two responses, an empty text, a failed rewrite, a missing chat template — and never a
wrong score. What each variant reads (and how a pair is fitted to the context) is in texts.py;
the validation copies and the LMExaminer baseline in validation_texts.py.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, cast

from django.db.models import F
from django.utils import timezone

from evalhub.catalog.models import Prompt, Response, variant_matches
from evalhub.catalog.queries import chosen_prompt_ids
from evalhub.celery import GPU_QUEUE
from evalhub.core.gem import prompts as gem_prompts
from evalhub.core.gem.pairs import GemPair, PairScore, score_pairs, task_pairs
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.llm.scoring.chat_template import TemplateError
from evalhub.llm.types import LLMError
from evalhub.scoring.gem.config import GEM, GemConfig
from evalhub.scoring.gem.planning import check_preprocessing, planned_pairs
from evalhub.scoring.gem.results import gem_outcome, gem_summary
from evalhub.scoring.gem.texts import fit_to_context, synopses_for, variant_texts
from evalhub.scoring.gem.validation_texts import derived_responses, examiner_scores
from evalhub.scoring.models import DEFAULT_CHUNK_PROMPTS, ExaminerScore, GemPairScore, GemRun
from evalhub.system.model_access import local_or_remote_scorer
from evalhub.worklog.actions import do_record_row_issues
from evalhub.worklog.models import IssueLog, RowIssue

logger = logging.getLogger(__name__)


def scorer_for(run: GemRun):
    """The run's evaluation LM, loaded once per worker process and reused by every chunk."""
    return local_or_remote_scorer(run.evaluation_lm, run.dtype, run.device)


@dataclass
class ChunkResult:
    scores: dict[str, list[PairScore]] = field(default_factory=dict)
    truncated: set[tuple[str, Hashable, Hashable]] = field(default_factory=set)
    issues: list[RowIssue] = field(default_factory=list)
    examiner: list[ExaminerScore] = field(default_factory=list)
    seconds: float = 0.0


def run_chunk_work(run: GemRun, chunk: JobChunk) -> ChunkResult:
    issue = IssueLog(run.job)
    result = ChunkResult(issues=issue)

    prompts = {p.pk: p for p in Prompt.objects.filter(pk__in=chunk.unit_ids)}
    candidate_models = set(run.candidate_models.values_list("pk", flat=True))
    reference_models = set(run.reference_models.values_list("pk", flat=True))
    originals = list(
        Response.objects.filter(
            prompt_id__in=prompts, parent__isnull=True, model_id__in=candidate_models | reference_models
        ).order_by("prompt_id", "model_id", "variant", "pk")
    )
    usable = []
    for response in originals:
        if response.text.strip():
            usable.append(response)
        else:
            issue("input", "The response is empty.", prompt=prompts[response.prompt_id], response=response)
    candidates = [
        r for r in usable if r.model_id in candidate_models and variant_matches(run.candidate_variant, r.variant)
    ]
    references = [r for r in usable if r.model_id in reference_models]
    derived = derived_responses(run, prompts, candidates, issue)
    if run.examiner_lm and derived:
        result.examiner = examiner_scores(run, prompts, candidates + derived, issue)

    by_prompt: dict[int, dict[str, list[Response]]] = defaultdict(lambda: {"c": [], "r": [], "d": []})
    for response in candidates + [r for r in references if r.model_id not in candidate_models]:
        by_prompt[response.prompt_id]["c"].append(response)  # references also stand as candidates: the human baseline
    for response in references:
        by_prompt[response.prompt_id]["r"].append(response)
    for response in derived:
        by_prompt[response.prompt_id]["d"].append(response)
    for prompt_id, prompt in prompts.items():
        if len(by_prompt[prompt_id]["r"]) < 2 and by_prompt[prompt_id]["c"]:
            issue(
                "input",
                "Fewer than two responses to compare: every candidate needs at least one other reference.",
                prompt=prompt,
            )

    done = set(
        GemPairScore.objects.filter(run=run, candidate__prompt_id__in=prompts).values_list(
            "variant", "candidate_id", "reference_id"
        )
    )
    all_texts = list({r.pk: r for group in by_prompt.values() for r in group["c"] + group["r"] + group["d"]}.values())
    scorer = None
    for variant in run.variants:
        texts = variant_texts(run, variant, all_texts, issue)
        synopses = synopses_for(run, variant, prompts, issue)
        pairs: list[GemPair] = []
        for prompt_id, group in by_prompt.items():
            if prompt_id not in synopses:
                continue
            cands: dict[Hashable, str] = {r.pk: texts[r.pk] for r in group["c"] + group["d"] if r.pk in texts}
            refs: dict[Hashable, str] = {r.pk: texts[r.pk] for r in group["r"] if r.pk in texts}
            excluded: dict[Hashable, list[Hashable]] = {r.pk: [r.parent_id] for r in group["d"]}
            pairs += [
                p
                for p in task_pairs(cands, refs, synopses[prompt_id], excluded)
                if (variant, p.candidate, p.reference) not in done
            ]
        if not pairs:
            continue
        try:
            scorer = scorer or scorer_for(run)
            pairs = fit_to_context(
                scorer, pairs, variant, result.truncated, issue, responses={r.pk: r for r in all_texts}
            )
            started = time.perf_counter()
            result.scores[variant] = score_pairs(scorer, pairs)
            result.seconds += time.perf_counter() - started
        except (TemplateError, LLMError, OSError, ValueError) as error:
            # The evaluation LM cannot score these at all (no chat template, unreachable server, bad
            # path): every prompt of the chunk is reported, nothing is written for this variant.
            for prompt in prompts.values():
                issue("scoring", f"{type(error).__name__}: {error}", prompt=prompt, label=variant)
    return result


class GemRunner(JobRunner[GemRun, ChunkResult]):
    """GEM / GRE-bench scoring: a chunk is a set of prompts; its pairs' log-probabilities on the
    worker's evaluation LM, written as GemPairScore rows (and examiner scores and reported rows)."""

    kind = GEM
    run_attr = "gem_run"
    results = "gem_results"
    config = GemConfig

    @classmethod
    def more_columns(cls, config: GemConfig) -> dict[str, Any]:
        return {"prompt_version": gem_prompts.PROMPT_VERSION}

    @classmethod
    def plan(cls, config: GemConfig, run: GemRun, size: int | None) -> Plan:
        """Chunks of prompts; progress counts the pairs each prompt plans. Texts GEM cannot score
        (not preprocessed, no preprocessing LM) refuse the run before anything is written."""
        ids = chosen_prompt_ids(config.benchmark, config.prompt_ids)
        candidate_ids, reference_ids = {m.pk for m in config.candidates}, {m.pk for m in config.references}
        missing = check_preprocessing(
            ids,
            candidate_ids | reference_ids,
            config.variants,
            config.preprocessing_lm,
            config.use_imported_preprocessing,
        )
        if missing:
            raise cls.rejected(missing)
        planned = planned_pairs(
            ids,
            candidate_ids,
            reference_ids,
            len(config.variants),
            len(config.validation_strategies),
            config.candidate_variant,
        )
        return Plan(f"GEM on {config.benchmark.name}", ids, size or DEFAULT_CHUNK_PROMPTS, planned)

    @classmethod
    def load(cls, job_id: int) -> GemRun:
        return GemRun.objects.select_related("job").get(job_id=job_id)

    @classmethod
    def queue(cls, run: GemRun) -> str:
        return GPU_QUEUE

    def work(self, chunk: JobChunk) -> ChunkResult:
        return run_chunk_work(self.run, chunk)

    def write(self, chunk: JobChunk, result: ChunkResult) -> int:
        run = self.run
        rows = [
            GemPairScore(
                run=run,
                variant=variant,
                candidate_id=cast(int, score.pair.candidate),
                reference_id=cast(int, score.pair.reference),
                conditional=score.conditional,
                marginal=score.marginal,
                pmi=score.pmi,
                tokens=score.tokens,
                truncated=(variant, score.pair.candidate, score.pair.reference) in result.truncated,
            )
            for variant, scores in result.scores.items()
            for score in scores
        ]
        GemPairScore.objects.bulk_create(rows, ignore_conflicts=True)
        stored = GemPairScore.objects.filter(run=run, candidate__prompt_id__in=chunk.unit_ids).count()
        ExaminerScore.objects.bulk_create(result.examiner, ignore_conflicts=True)
        do_record_row_issues(result.issues)
        GemRun.objects.filter(pk=run.pk).update(
            pairs_done=F("pairs_done") + len(rows),
            tokens_scored=F("tokens_scored") + sum(r.tokens for r in rows),
            scoring_seconds=F("scoring_seconds") + result.seconds,
        )
        return max(0, chunk.units_planned - stored)

    def progress(self, job: Job) -> str:
        run = GemRun.objects.get(pk=self.run.pk)
        rate = run.tokens_scored / run.scoring_seconds if run.scoring_seconds else 0.0
        text = f"{run.pairs_done:,} of about {job.progress_total:,} pairs scored"
        if rate:
            text += f" · {rate:,.0f} tokens/s"
        if job.started_at and job.progress_done and job.progress_done < job.progress_total:
            elapsed = (timezone.now() - job.started_at).total_seconds()
            eta = elapsed / job.progress_done * (job.progress_total - job.progress_done)
            text += f" · about {eta / 60:.0f} min left" if eta >= 90 else f" · about {eta:.0f} s left"
        return text

    def finish(self, job: Job) -> Settled:
        fresh = GemRun.objects.get(pk=self.run.pk)
        issues = fresh.issues.count()
        reported = f"; {issues} row{'s' if issues != 1 else ''} reported (see below)." if issues else "."
        return Settled(f"Scored {fresh.pairs_done:,} pairs{reported}", gem_summary(fresh), gem_outcome(fresh))
