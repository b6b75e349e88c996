from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.dhp.discernment import describe_summary
from evalhub.jobs.cli import add_follow_argument, follow, report_state, work_here
from evalhub.scoring.actions import DEFAULT_CHUNK_PROMPTS, do_create_discernment_run
from evalhub.scoring.discernment.config import DiscernmentConfig
from evalhub.scoring.discernment.results import discernment_summary
from evalhub.scoring.shapes import DiscernmentSummary


def _list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(BaseCommand):
    help = "Run a DHP or YESciEval judge run here (or --enqueue it for the workers) and print the summary."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--family", choices=["dhp", "yescieval"], default="dhp")
        parser.add_argument("--task", default="dhp-summarization", help="dhp-summarization, …, or yescieval")
        parser.add_argument(
            "--targets", required=True, help="Comma-separated slugs of the models whose texts are perturbed."
        )
        parser.add_argument(
            "--perturbations",
            required=True,
            help="Comma-separated name:severity, e.g. random_typos:minor,reordering:major",
        )
        parser.add_argument("--metrics", default="", help="Comma-separated; default: all of the task's.")
        parser.add_argument("--judge", action="append", required=True, help="A judge's provider spec; repeat.")
        parser.add_argument("--repeats", type=int, default=5)
        parser.add_argument("--mode", choices=["generate", "probability"], default="generate")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--perturbation-lm", default="")
        parser.add_argument("--shape", default="default")
        parser.add_argument("--weights", default="", help="Expert weights JSON {perturbation: {metric: weight}}.")
        parser.add_argument(
            "--target-variant", default="", help="Only target responses of this variant (imported, answer:0h …)."
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--domain", default="", help="YESciEval: inject this domain's vocabulary and examples (nlp, ecology)."
        )
        parser.add_argument("--chunk-prompts", type=int, default=DEFAULT_CHUNK_PROMPTS)
        parser.add_argument("--enqueue", action="store_true", help="Queue for the workers instead of running here.")
        add_follow_argument(parser)

    def handle(self, *args, **o):
        from evalhub.core.prompts.surveys import DHP_TEMPLATES
        from evalhub.core.yescieval.rubrics import PAPER_RUBRICS, expand

        try:
            benchmark = Benchmark.objects.get(slug=o["benchmark"])
        except Benchmark.DoesNotExist:
            raise CommandError(f"no benchmark {o['benchmark']!r}.") from None
        slugs = _list(o["targets"])
        targets = list(LanguageModel.objects.filter(slug__in=slugs))
        if len(targets) != len(slugs):
            missing = sorted(set(slugs) - {m.slug for m in targets})
            raise CommandError(f"unknown models: {', '.join(missing)}.")
        perturbations = [item.split(":", 1) for item in _list(o["perturbations"])]
        if any(len(p) != 2 for p in perturbations):
            raise CommandError("write perturbations as name:severity, e.g. random_typos:minor.")
        metrics = _list(o["metrics"])
        if o["family"] == "yescieval":  # a family's name stands for its rubrics
            metrics = expand(metrics)
        if not metrics:
            metrics = (
                list(PAPER_RUBRICS)
                if o["family"] == "yescieval"
                else [m["key"] for m in DHP_TEMPLATES.get(o["task"], {"metrics": []})["metrics"]]
            )
        weights = None
        if o["weights"]:
            try:
                weights = json.loads(Path(o["weights"]).read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise CommandError(f"cannot read the weights: {error}") from None
        try:
            run = do_create_discernment_run(
                DiscernmentConfig(
                    benchmark=benchmark,
                    family=o["family"],
                    task=o["task"],
                    targets=targets,
                    perturbations=perturbations,
                    metrics=metrics,
                    judges=o["judge"],
                    repeats=o["repeats"],
                    mode=o["mode"],
                    temperature=o["temperature"],
                    perturbation_lm=o["perturbation_lm"],
                    shape=o["shape"],
                    weights=weights,
                    weights_source=o["weights"],
                    seed=o["seed"],
                    target_variant=o["target_variant"],
                    domain=o["domain"],
                ),
                chunk_prompts=o["chunk_prompts"],
                enqueue=o["enqueue"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Job {run.job.pk}: {run.job.chunks.count()} chunks.")
        if o["enqueue"]:
            self.stdout.write(f"Queued. Follow it at /jobs/{run.job.pk}/.")
            if not o["follow"]:
                return
        job = follow(run.job) if o["enqueue"] else work_here(run.job)
        self.print_summary(discernment_summary(run))
        report_state(self, job, f"Judge run {run.pk} (job {job.pk})")

    def print_summary(self, summary: DiscernmentSummary) -> None:
        for judge, quality in summary["quality"].items():
            self.stdout.write(f"\n{judge}: {quality['scores']} scores, {quality['invalid']} invalid")
            if summary["family"] == "dhp":
                report = summary["dhp"]["judges"].get(judge)
                if report is None:
                    continue
                s = report["summary"]
                self.stdout.write(f"  {describe_summary(s)}")
                for name, entry in report["perturbations"].items():
                    self.stdout.write(f"  {name:<40} level {entry['level']}  p {entry['p']:.4g}  D {entry['D']:.2f}")
            else:
                for rubric, by_variant in summary["optimism"].get(judge, {}).items():
                    for variant, cell in by_variant.items():
                        means = f"benign {cell['mean_benign']:.2f} → {cell['mean_adversarial']:.2f}"
                        self.stdout.write(
                            f"  {rubric:<16} {variant:<8} {means}  drop {cell['drop']:.2f}"
                            f"  ≥4 {cell['optimistic_share']:.0%}  n={cell['n']}"
                        )
