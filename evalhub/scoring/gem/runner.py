"""One chunk of a GEM job: texts for each variant, the pairs, their log-probabilities, the rows.

The pure parts (pairs, PMI, aggregates) live in evalhub.core.gem.pairs; this module gathers the
inputs from the database, asks the LLMs for rewrites (stored, see rewrites.py), scores on
the worker's evaluation LM (loaded once per worker process) and hands the rows to
do_record_chunk, which writes them in one transaction.

Inputs that cannot be scored become RowIssue rows with their cause — a prompt with fewer
than two responses, an empty text, a failed rewrite, a missing chat template — and never a
wrong score. Context too long: the candidate x (the conditioning text) is cut token-wise
from its end until the conditional sequence fits the model's context; the reference y is
never cut because it is what is scored; the row is flagged `truncated`. A pair whose
marginal alone does not fit is skipped and reported.
"""

from __future__ import annotations

import logging
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from django.db.models import F
from django.utils import timezone

from evalhub.catalog.actions import do_derive_response
from evalhub.catalog.models import Prompt, Response, variant_matches
from evalhub.catalog.queries import chosen_prompt_ids
from evalhub.celery import GPU_QUEUE
from evalhub.core.gem import prompts as gem_prompts
from evalhub.core.gem.pairs import GemPair, PairScore, score_pairs, task_pairs
from evalhub.core.gem.validation import STRATEGIES, derive
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.llm.scoring.chat_template import TemplateError, encode_request
from evalhub.llm.types import LLMError
from evalhub.scoring.gem.config import GEM, GemConfig
from evalhub.scoring.gem.planning import check_preprocessing, planned_pairs
from evalhub.scoring.gem.results import gem_outcome, gem_summary
from evalhub.scoring.models import DEFAULT_CHUNK_PROMPTS, ExaminerScore, GemPairScore, GemRun, GemVariant
from evalhub.system.model_access import local_or_remote_scorer
from evalhub.worklog.actions import do_record_row_issues
from evalhub.worklog.models import IssueLog, RowIssue
from evalhub.worklog.rewrites import RewriteFailed, messages_key, rewrite_all, stored_completer

logger = logging.getLogger(__name__)


def scorer_for(run: GemRun):
    """The run's evaluation LM, loaded once per worker process and reused by every chunk."""
    return local_or_remote_scorer(run.evaluation_lm, run.dtype, run.device)


def strategy_name(strategy: str, run: GemRun) -> str:
    """The Response.perturbation of a derived text; LLM-made ones name their LLM."""
    suffix = f":{run.validation_lm}" if STRATEGIES[strategy].needs_llm else ""
    return f"gem:{strategy}{suffix}"[:100]


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
    derived = _derived_responses(run, prompts, candidates, issue)
    if run.examiner_lm and derived:
        result.examiner = _examine(run, prompts, candidates + derived, issue)

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
        texts = _variant_texts(run, variant, all_texts, issue)
        synopses = _synopses(run, variant, prompts, issue)
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
            pairs = _fit(scorer, pairs, variant, result, issue, responses={r.pk: r for r in all_texts})
            started = time.perf_counter()
            result.scores[variant] = score_pairs(scorer, pairs)
            result.seconds += time.perf_counter() - started
        except (TemplateError, LLMError, OSError, ValueError) as error:
            # The evaluation LM cannot score these at all (no chat template, unreachable server, bad
            # path): every prompt of the chunk is reported, nothing is written for this variant.
            for prompt in prompts.values():
                issue("scoring", f"{type(error).__name__}: {error}", prompt=prompt, label=variant)
    return result


def _derived_responses(run: GemRun, prompts: dict[int, Prompt], candidates: list[Response], issue) -> list[Response]:
    """Degraded or manipulated copies of the candidates, one per validation strategy (Algorithm 1)."""
    if not run.validation_strategies or not candidates:
        return []
    names = {strategy: strategy_name(strategy, run) for strategy in run.validation_strategies}
    existing = {
        (r.parent_id, r.perturbation): r
        for r in Response.objects.filter(
            parent__in=candidates, perturbation__in=names.values(), perturbation_seed=run.seed
        )
    }
    others_by_model: dict[int, list[tuple[int, str]]] = defaultdict(list)
    if "random_replacement" in names:
        for prompt_id, model_id, text in Response.objects.filter(
            prompt__benchmark_id=run.benchmark_id, parent__isnull=True, model_id__in={c.model_id for c in candidates}
        ).values_list("prompt_id", "model_id", "text"):
            others_by_model[model_id].append((prompt_id, text))

    out = []
    for strategy, name in names.items():
        out += [existing[(c.pk, name)] for c in candidates if (c.pk, name) in existing]
        todo = [c for c in candidates if (c.pk, name) not in existing]
        if todo:
            out += _derive_with(run, strategy, name, todo, prompts, others_by_model, issue)
    return out


def _derive_with(run: GemRun, strategy: str, name: str, todo, prompts, others_by_model, issue) -> list[Response]:
    def arguments(candidate: Response) -> dict:
        return {
            "abstract": prompts[candidate.prompt_id].synopsis,
            "others": [t for p, t in others_by_model[candidate.model_id] if p != candidate.prompt_id],
            "seed": zlib.crc32(f"{run.seed}:{candidate.pk}".encode()),
        }

    complete = None
    if STRATEGIES[strategy].needs_llm and run.validation_lm:
        complete = stored_completer(
            f"gem:{strategy}",
            run.validation_lm,
            [partial(_dry_derive, strategy, c.text, arguments(c)) for c in todo],
        )

    out = []
    for candidate in todo:
        prompt = prompts[candidate.prompt_id]
        try:
            made = derive(strategy, candidate.text, complete=complete, **arguments(candidate))
        except LLMError as error:
            issue("validation", f"{STRATEGIES[strategy].label}: {error}", prompt=prompt, response=candidate)
            continue
        if made.text is None:
            issue("validation", f"{STRATEGIES[strategy].label}: {made.note}", prompt=prompt, response=candidate)
            continue
        response = do_derive_response(
            candidate,
            perturbation=name,
            severity="",
            seed=run.seed,
            text=made.text,
            params={
                "strategy": strategy,
                "kind": STRATEGIES[strategy].kind,
                "provider": run.validation_lm if STRATEGIES[strategy].needs_llm else "",
                **made.params,
            },
        )
        out.append(response)
    return out


def _examine(run: GemRun, prompts: dict[int, Prompt], responses: list[Response], issue) -> list[ExaminerScore]:
    """The LMExaminer baseline (GEM, Appendix D.1) for originals and their derived copies."""
    scored = set(ExaminerScore.objects.filter(run=run, response__in=responses).values_list("response_id", flat=True))
    todo = [r for r in responses if r.pk not in scored]

    def messages(response: Response) -> list[dict[str, str]]:
        prompt = prompts[response.prompt_id]
        return gem_prompts.examiner_messages(prompt.source or prompt.synopsis or prompt.text, response.text)

    answers = rewrite_all("gem:examiner", run.examiner_lm, [messages(r) for r in todo])
    out = []
    for response in todo:
        answer = answers[messages_key(messages(response))]
        score = None if isinstance(answer, RewriteFailed) else gem_prompts.parse_examiner_score(answer)
        if score is None:
            reason = answer if isinstance(answer, RewriteFailed) else "no <overall_score> from 0 to 10 in the answer"
            issue("validation", f"LMExaminer: {reason}", prompt=prompts[response.prompt_id], response=response)
            continue
        out.append(ExaminerScore(run=run, response=response, score=score, raw=answer[:5000]))
    return out


def _variant_texts(run: GemRun, variant: str, responses: list[Response], issue) -> dict[int, str]:
    """Raw texts for GEM-raw; C.1-preprocessed texts (imported, or made by the preprocessing LM) otherwise."""
    if variant == GemVariant.RAW:
        return {r.pk: r.text for r in responses}
    texts, todo = {}, []
    for response in responses:
        imported = (response.metadata or {}).get("preprocessed") if run.use_imported_preprocessing else None
        if isinstance(imported, str) and imported.strip():
            texts[response.pk] = imported
        else:
            todo.append(response)
    if todo and not run.preprocessing_lm:
        for response in todo:
            issue(
                "preprocess",
                "No preprocessing LM is configured and the response has no imported preprocessed text.",
                response=response,
                label=variant,
            )
        return texts
    answers = rewrite_all(
        "gem:c1", run.preprocessing_lm, [gem_prompts.chat(gem_prompts.PREPROCESS_SYSTEM, r.text) for r in todo]
    )
    for response in todo:
        answer = answers[messages_key(gem_prompts.chat(gem_prompts.PREPROCESS_SYSTEM, response.text))]
        if isinstance(answer, RewriteFailed):
            issue("preprocess", f"Preprocessing failed: {answer}", response=response, label=variant)
        else:
            texts[response.pk] = answer
    return texts


def _synopses(run: GemRun, variant: str, prompts: dict[int, Prompt], issue) -> dict[int, str | None]:
    """None for GEM and GEM-raw ("Not Available"); the abstract, or abstract + ASSW summary, for GEM-S."""
    if variant in (GemVariant.RAW, GemVariant.GEM):
        return dict.fromkeys(prompts)
    synopses: dict[int, str | None] = {}
    for prompt_id, prompt in prompts.items():
        if prompt.synopsis.strip():
            synopses[prompt_id] = prompt.synopsis
        else:
            issue("input", "The prompt has no synopsis (abstract), which GEM-S needs.", prompt=prompt, label=variant)
    if variant == GemVariant.ABSTRACT:
        return synopses

    def assw_messages(prompt: Prompt) -> list[dict[str, str]]:
        return gem_prompts.chat(gem_prompts.ASSW_SYSTEM, f"```\n{prompt.source}\n```")

    with_source = {pid: prompts[pid] for pid in synopses if prompts[pid].source.strip()}
    for pid in set(synopses) - set(with_source):
        issue("input", "The prompt has no source text for the ASSW summary.", prompt=prompts[pid], label=variant)
    if not run.preprocessing_lm:
        for prompt in with_source.values():
            issue("preprocess", "GEM-S (ASSW) needs a preprocessing LM for the C.4 summary.", prompt=prompt)
        return {}
    answers = rewrite_all("gem:c4", run.preprocessing_lm, [assw_messages(p) for p in with_source.values()])
    out: dict[int, str | None] = {}
    for pid, prompt in with_source.items():
        answer = answers[messages_key(assw_messages(prompt))]
        if isinstance(answer, RewriteFailed):
            issue("preprocess", f"ASSW summary failed: {answer}", prompt=prompt, label=variant)
        else:
            out[pid] = f"{synopses[pid]}\n\n{answer}"
    return out


def _fit(scorer, pairs: list[GemPair], variant: str, result: ChunkResult, issue, responses) -> list[GemPair]:
    """Apply the truncation rule of the module docstring (only where the scorer knows its context)."""
    limit = getattr(scorer, "max_length", None)
    tokenizer = getattr(scorer, "tokenizer", None)
    if not limit or tokenizer is None:
        return pairs
    fitted: list[GemPair] = []
    cut_cache: dict[tuple[Hashable, int], str] = {}
    for pair in pairs:
        conditional = encode_request(tokenizer, list(pair.conditional_request().prefix), pair.reference_text)
        if conditional.length <= limit:
            fitted.append(pair)
            continue
        marginal = encode_request(tokenizer, list(pair.marginal_request().prefix), pair.reference_text)
        overflow = conditional.length - limit
        ids = tokenizer(pair.candidate_text, add_special_tokens=False)["input_ids"]
        keep = len(ids) - overflow - 8  # a margin: decoding and re-encoding can merge tokens differently
        if marginal.length > limit or keep <= 0:
            issue(
                "scoring",
                f"Skipped the pair with candidate response {pair.candidate}: the reference needs "
                f"{marginal.length} tokens with the prompt, and the context holds {limit} even with the candidate cut.",
                response=responses.get(pair.reference),
                label=variant,
            )
            continue
        text = cut_cache.setdefault((pair.candidate, keep), tokenizer.decode(ids[:keep]))
        fitted.append(GemPair(pair.candidate, pair.reference, text, pair.reference_text, pair.synopsis))
        result.truncated.add((variant, pair.candidate, pair.reference))
    return fitted


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


def _dry_derive(
    strategy: str, text: str, arguments: dict[str, Any], record: Callable[[list[dict[str, str]]], str]
) -> object:
    """One validation text made with a recording stand-in for the LLM (stored_completer's dry run)."""
    return derive(strategy, text, complete=record, **arguments)
