from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.catalog.models import Benchmark, LanguageModel, select_prompts
from evalhub.core.privileged.answers import MatchMode
from evalhub.generation.actions import (
    GenerationRejected,
    do_create_generation_run,
    do_ensure_builtin_templates,
    do_register_candidate,
    plan_generation,
)
from evalhub.generation.config import GenerationConfig
from evalhub.generation.models import PromptTemplate
from evalhub.jobs.cli import add_follow_argument, follow, report_state, work_here
from evalhub.llm.types import UnknownProvider


class Command(BaseCommand):
    help = "Have candidate models answer a benchmark's prompts (optionally at hint tiers), here or --enqueue'd."

    def add_arguments(self, parser):
        parser.add_argument("benchmark", help="The benchmark's slug.")
        parser.add_argument(
            "--candidate",
            action="append",
            default=[],
            help="A model slug or a provider spec (a new spec becomes a model); repeat.",
        )
        parser.add_argument("--prompts", default="", help="Only these prompt ids (comma-separated); default all.")
        parser.add_argument("--category", default="", help="Only prompts of this category.")
        parser.add_argument("--template", default="answer", help="Template slug (built in: answer, gre-bench-review).")
        parser.add_argument("--tiers", default="0", help="Comma-separated hint tiers, e.g. 0,1,2,3.")
        parser.add_argument("--hints", type=int, default=3, help="Hints per prompt (k).")
        parser.add_argument("--hint-maker", default="", help="Chat provider spec, or reference-prefix (rule-based).")
        parser.add_argument("--samples", type=int, default=1)
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=1024)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--answer-match", choices=[m.value for m in MatchMode], default=MatchMode.SYMBOLIC)
        parser.add_argument("--anchor", default="", help="Model slug (or spec) that win rates are against.")
        parser.add_argument("--chunk-prompts", type=int, default=None, help="Prompts per chunk (default: ~40 calls).")
        parser.add_argument("--enqueue", action="store_true", help="Queue for the Celery workers instead.")
        add_follow_argument(parser)
        parser.add_argument("--dry-run", action="store_true", help="Say how many calls it would make, and stop.")

    def handle(self, *args, **o):
        do_ensure_builtin_templates()
        try:
            benchmark = Benchmark.objects.get(slug=o["benchmark"])
            template = PromptTemplate.objects.get(slug=o["template"])
            candidates = [self._model(value) for value in o["candidate"]]
            anchor = self._model(o["anchor"]) if o["anchor"] else None
            tiers = [int(t) for t in o["tiers"].split(",") if t.strip()]
            prompt_ids = select_prompts(benchmark, o["prompts"], o["category"])
        except Benchmark.DoesNotExist:
            raise CommandError(f"no benchmark {o['benchmark']!r}.") from None
        except PromptTemplate.DoesNotExist:
            known = ", ".join(PromptTemplate.objects.values_list("slug", flat=True))
            raise CommandError(f"no template {o['template']!r}; there are: {known}.") from None
        except (UnknownProvider, ValueError) as error:
            raise CommandError(str(error)) from None
        if o["dry_run"]:
            plan = plan_generation(benchmark, candidates, template, tiers, o["samples"], prompt_ids)
            found, bare = plan["found"], plan["tier_0_only"]
            self.stdout.write(
                f"{plan['prompts']} prompts × {len(candidates)} candidates × tiers {sorted(set(tiers))} × "
                f"{o['samples']} sample(s): {plan['calls']} calls to make, {found} response{'s' * (found != 1)} "
                f"found already"
                + (
                    f", {bare} prompt{'s' * (bare != 1)} without a reference get{'s' * (bare == 1)} tier 0 only"
                    if bare
                    else ""
                )
                + ". Nothing was created."
            )
            return
        try:
            run = do_create_generation_run(
                GenerationConfig(
                    benchmark=benchmark,
                    prompt_ids=prompt_ids,
                    candidates=candidates,
                    template=template,
                    tiers=tiers,
                    hint_count=o["hints"],
                    hint_maker=o["hint_maker"],
                    samples=o["samples"],
                    temperature=o["temperature"],
                    max_tokens=o["max_tokens"],
                    seed=o["seed"],
                    answer_match=o["answer_match"],
                    anchor=anchor,
                ),
                chunk_prompts=o["chunk_prompts"],
                enqueue=o["enqueue"],
            )
        except GenerationRejected as error:
            raise CommandError(str(error)) from None
        if o["enqueue"]:
            self.stdout.write(f"Queued generation run {run.pk} (job {run.job_id}, {run.job.chunks.count()} chunks).")
            if not o["follow"]:
                return
        try:
            job = follow(run.job) if o["enqueue"] else work_here(run.job)
        except Exception as error:  # the job records the cause; say it here too, then stop
            raise CommandError(f"job {run.job_id} failed: {error}") from None
        for key, n in job.result.get("responses", {}).items():
            self.stdout.write(f"  {key}: {n}")
        for key, cell in job.result.get("accuracy", {}).items():
            self.stdout.write(f"  accuracy {key}: {cell['mean']:.1%} [{cell['low']:.1%}, {cell['high']:.1%}]")
        report_state(self, job, f"Generation run {run.pk} (job {job.pk})")

    @staticmethod
    def _model(value: str) -> LanguageModel:
        found = LanguageModel.objects.filter(slug=value).first()
        return found or do_register_candidate(value)
