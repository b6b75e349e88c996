"""The generation job kind: work one chunk (evalhub.generation.runner), write it exactly once,
and settle the run from what was stored (evalhub.generation.analysis)."""

from __future__ import annotations

from django.db.models import F

from evalhub.catalog.actions.responses import do_add_generated_responses
from evalhub.catalog.queries import chosen_prompt_ids
from evalhub.generation.actions import CALLS_PER_CHUNK, GenerationRejected, generation_queue
from evalhub.generation.analysis import generation_outcome, run_summary
from evalhub.generation.config import GENERATION, GenerationConfig
from evalhub.generation.models import GenerationRun
from evalhub.generation.runner import GenerationChunkResult, generation_chunk_work
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.worklog.actions import do_record_row_issues


class GenerationRunner(JobRunner[GenerationRun, GenerationChunkResult]):
    """Generation: a chunk is a set of prompts; each candidate model's response to each, written as
    catalog Responses (a response another attempt or run stored first is kept as it is)."""

    kind = GENERATION
    run_attr = "generation_run"
    results = "generation_results"
    config = GenerationConfig
    rejected = GenerationRejected

    @classmethod
    def plan(cls, config: GenerationConfig, run: GenerationRun, size: int | None) -> Plan:
        """Chunks of prompts, about CALLS_PER_CHUNK calls each; progress counts one unit per planned
        response (per prompt when only hints are made)."""
        ids = chosen_prompt_ids(config.benchmark, config.prompt_ids)
        if not ids:
            raise GenerationRejected(f"{config.benchmark.name} has no prompts to answer.")
        per_prompt = len(config.candidates) * len(config.tiers) * config.samples or 1
        title = f"Generation on {config.benchmark.name}" if config.candidates else f"Hints for {config.benchmark.name}"
        return Plan(title, ids, size or max(1, CALLS_PER_CHUNK // per_prompt), {pk: per_prompt for pk in ids})

    @classmethod
    def load(cls, job_id: int) -> GenerationRun:
        return GenerationRun.objects.select_related("job", "template").get(job_id=job_id)

    @classmethod
    def queue(cls, run: GenerationRun) -> str:
        return generation_queue(run)

    def work(self, chunk: JobChunk) -> GenerationChunkResult:
        return generation_chunk_work(self.run, chunk)

    def write(self, chunk: JobChunk, result: GenerationChunkResult) -> int:
        fresh = do_add_generated_responses(result.responses)
        do_record_row_issues(result.issues)
        usage = result.usage
        GenerationRun.objects.filter(pk=self.run.pk).update(
            made=F("made") + len(fresh),
            found=F("found") + result.found + len(result.responses) - len(fresh),
            calls=F("calls") + usage.calls,
            cached_calls=F("cached_calls") + usage.cached_calls,
            input_tokens=F("input_tokens") + usage.input_tokens,
            output_tokens=F("output_tokens") + usage.output_tokens,
            cost_usd=F("cost_usd") + usage.cost_usd,
        )
        return result.failed

    def progress(self, job: Job) -> str:
        run = GenerationRun.objects.get(pk=self.run.pk)
        text = f"{run.made:,} responses generated, {run.found:,} found already"
        if run.cost_usd:
            text += f" · ${run.cost_usd:,.4f}"
        return text + f" · {job.progress_done:,} of {job.progress_total:,}"

    def finish(self, job: Job) -> Settled:
        fresh = GenerationRun.objects.get(pk=self.run.pk)
        issues = fresh.job.row_issues.count()
        reported = f"; {issues} row{'s' if issues != 1 else ''} reported (see below)." if issues else "."
        message = f"{fresh.made:,} responses generated, {fresh.found:,} found already{reported}"
        return Settled(message, run_summary(fresh), generation_outcome(fresh))
