from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.jobs.cli import add_follow_argument, follow, report_state, work_here
from evalhub.scoring.actions import DEFAULT_CHUNK_PROMPTS, do_create_gem_run
from evalhub.scoring.gem.config import GemConfig
from evalhub.scoring.gem.results import gem_summary
from evalhub.scoring.models import GemVariant
from evalhub.scoring.shapes import GemSummary


def _slugs(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(BaseCommand):
    help = "Score a benchmark's responses with GEM (GRE-bench) here, or --enqueue the job for the GPU workers."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--evaluation-lm", required=True, help="transformers:/path or openai-compatible:URL|model")
        parser.add_argument("--references", required=True, help="Comma-separated model slugs (e.g. the humans).")
        parser.add_argument("--candidates", default="", help="Comma-separated model slugs to score.")
        parser.add_argument(
            "--candidate-variant", default="", help="Only candidate responses of this variant (imported, answer:0h …)."
        )
        parser.add_argument(
            "--variants", default="gem", help=f"Comma-separated, among {', '.join(GemVariant.values)} (default gem)."
        )
        parser.add_argument("--preprocessing-lm", default="", help="Chat provider spec for C.1 and C.4.")
        parser.add_argument("--no-imported-preprocessing", action="store_true")
        parser.add_argument("--validate", default="", help="Comma-separated validation strategies (Algorithm 1).")
        parser.add_argument("--validation-lm", default="")
        parser.add_argument("--examiner-lm", default="", help="Chat provider for the LMExaminer baseline (D.1).")
        parser.add_argument("--dtype", default="auto", choices=["auto", "bfloat16", "float32", "float16"])
        parser.add_argument("--device", default="")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--bootstrap", action="store_true")
        parser.add_argument("--chunk-prompts", type=int, default=DEFAULT_CHUNK_PROMPTS)
        parser.add_argument("--enqueue", action="store_true", help="Queue for the gpu workers instead of running here.")
        add_follow_argument(parser)

    def handle(self, *args, **o):
        try:
            benchmark = Benchmark.objects.get(slug=o["benchmark"])
        except Benchmark.DoesNotExist:
            raise CommandError(f"no benchmark {o['benchmark']!r}.") from None

        def models(slugs: list[str]) -> list[LanguageModel]:
            found = {m.slug: m for m in LanguageModel.objects.filter(slug__in=slugs)}
            missing = [s for s in slugs if s not in found]
            if missing:
                raise CommandError(f"unknown models: {', '.join(missing)}.")
            return [found[s] for s in slugs]

        try:
            run = do_create_gem_run(
                GemConfig(
                    benchmark=benchmark,
                    candidates=models(_slugs(o["candidates"])),
                    references=models(_slugs(o["references"])),
                    variants=_slugs(o["variants"]),
                    evaluation_lm=o["evaluation_lm"],
                    preprocessing_lm=o["preprocessing_lm"],
                    use_imported_preprocessing=not o["no_imported_preprocessing"],
                    candidate_variant=o["candidate_variant"],
                    validation_strategies=_slugs(o["validate"]),
                    validation_lm=o["validation_lm"],
                    examiner_lm=o["examiner_lm"],
                    dtype=o["dtype"],
                    device=o["device"],
                    seed=o["seed"],
                    bootstrap=o["bootstrap"],
                ),
                chunk_prompts=o["chunk_prompts"],
                enqueue=o["enqueue"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Job {run.job.pk}: {run.chunks.count()} chunks, about {run.job.progress_total} pairs.")
        if o["enqueue"]:
            self.stdout.write(f"Queued on 'gpu'. Follow it at /jobs/{run.job.pk}/.")
            if not o["follow"]:
                return
        job = follow(run.job) if o["enqueue"] else work_here(run.job)
        run.refresh_from_db()
        self.stdout.write(f"  {run.pairs_done} pairs, {run.tokens_scored} tokens")
        self.print_summary(gem_summary(run))
        report_state(self, job, f"GEM run {run.pk} (job {job.pk})")

    def print_summary(self, summary: GemSummary) -> None:
        for variant in summary["variants"]:
            self.stdout.write(f"\n{variant['label']}  ({summary['interval']})")
            for entry in summary["table"][variant["key"]]:
                interval = f"[{entry['low']:.3f}, {entry['high']:.3f}]" if entry["low"] is not None else "(n < 2)"
                tag = " (human baseline)" if entry["baseline"] else ""
                self.stdout.write(f"  {entry['name'] + tag:<40} {entry['mean']:>9.3f} {interval}  n={entry['n']}")
        for strategy in summary["validation"].values():
            for metric, cell in strategy["by_metric"].items():
                if cell["d"] is not None:
                    self.stdout.write(
                        f"  {strategy['label']} / {metric}: d={cell['d']:.3f} "
                        f"({cell['low']:.3f}, {cell['high']:.3f}) p={cell['p']:.4f} n={cell['n']}"
                    )
        if summary["issues"]:
            self.stdout.write(f"\n{summary['issues']} rows reported; see the job page.")
