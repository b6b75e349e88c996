from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.debates.actions import do_create_judge_run
from evalhub.debates.forms import JudgeRunForm
from evalhub.debates.models import DebateRun
from evalhub.jobs.cli import add_follow_argument, follow, report_state, work_here


class Command(BaseCommand):
    help = (
        "Run one single LLM judge on the pairs of a debate run (ScaleEval, Section 5) and print its job's "
        "outcome; the same job as the meta-evaluation page's form, here or --enqueue'd for the workers."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, help="The debate run whose pairs are judged.")
        parser.add_argument("--judge", required=True, help="Provider spec, e.g. openai:gpt-4o-mini.")
        parser.add_argument("--criteria-variant", default="original")
        parser.add_argument("--privileged", action="append", default=[], help="Privileged field to show; repeat.")
        parser.add_argument("--samples", type=int, default=1)
        parser.add_argument(
            "--scale",
            choices=("choice", "graded", "rubric"),
            default="choice",
            help="graded: Figure 8's A >> B … B >> A; rubric: a YESciEval pairwise rubric (--rubric).",
        )
        parser.add_argument("--rubric", default="", help="With --scale rubric: e.g. method_coverage.")
        parser.add_argument("--domain", default="", help="With a rubric: nlp or ecology (the package's vocabularies).")
        parser.add_argument("--no-position-check", action="store_true", help="Do not also ask in reverse order.")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=512)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--probabilities",
            action="store_true",
            help="Read each verdict's probability from the judge's token log-probabilities (OpenAI chat models, "
            "OpenAI-compatible servers).",
        )
        parser.add_argument("--enqueue", action="store_true", help="Hand the chunks to the workers.")
        add_follow_argument(parser)

    def handle(self, *args, **o):
        reference = DebateRun.objects.filter(pk=o["run"]).first()
        if reference is None:
            raise CommandError(f"No debate run {o['run']}.")
        form = JudgeRunForm(
            {
                "judge": o["judge"],
                "criteria_variant": o["criteria_variant"],
                "privileged_sources": o["privileged"],
                "samples": o["samples"],
                "scale": o["scale"],
                "rubric": o["rubric"],
                "domain": o["domain"],
                "check_position": not o["no_position_check"],
                "temperature": o["temperature"],
                "max_tokens": o["max_tokens"],
                "seed": o["seed"],
                "probabilities": o["probabilities"],
            }
        )
        if not form.is_valid():  # the form's checks, so the command refuses what the page refuses
            reasons = [f"{field}: {' '.join(str(e) for e in errors)}" for field, errors in form.errors.items()]
            raise CommandError("; ".join(reasons))
        judge_run = do_create_judge_run(reference=reference, enqueue=o["enqueue"], **form.cleaned_data)
        if o["enqueue"]:
            self.stdout.write(f"Queued judge run {judge_run.pk} as job {judge_run.job_id}.")
            if not o["follow"]:
                return
        assert judge_run.job is not None  # do_create_judge_run made it
        job = follow(judge_run.job) if o["enqueue"] else work_here(judge_run.job)
        report_state(self, job, f"Judge run {judge_run.pk} ({judge_run})")
