from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.scaleeval.aids import AIDS
from evalhub.core.scaleeval.debate import ALL_ROUNDS, LAST_ROUND, MAJORITY, UNANIMOUS
from evalhub.debates.actions import RunRejected, do_create_run, do_start_run, run_counts
from evalhub.debates.forms import DEFAULT_AGENTS
from evalhub.debates.models import BLIND_FIRST, ONE_STAGE
from evalhub.jobs.cli import add_follow_argument, follow, report_state, work_here
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider


class Command(BaseCommand):
    help = "Create a debate run over a benchmark and run it here (or --enqueue it for the workers)."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--criterion", required=True)
        parser.add_argument("--model-a", required=True)
        parser.add_argument("--model-b", required=True)
        parser.add_argument(
            "--agent", action="append", default=[], help="Provider spec; repeat (default: 3 heuristics)."
        )
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--consensus", choices=[UNANIMOUS, MAJORITY], default=UNANIMOUS)
        parser.add_argument("--history", choices=[ALL_ROUNDS, LAST_ROUND], default=ALL_ROUNDS)
        parser.add_argument("--privileged", action="append", default=[], help="Privileged field to show; repeat.")
        parser.add_argument("--category", default="")
        parser.add_argument("--variant", default="", help="Response variant, e.g. answer:1h (a hint tier).")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=512)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--name", default="")
        parser.add_argument("--human-verdicts", type=int, default=1, help="People needed per unresolved debate.")
        parser.add_argument("--tie-policy", choices=["another", "admin"], default="another")
        parser.add_argument(
            "--flow",
            choices=[BLIND_FIRST, ONE_STAGE],
            default=BLIND_FIRST,
            help="How people adjudicate unresolved debates: a blind verdict first, then the aid (default).",
        )
        parser.add_argument(
            "--aid",
            action="append",
            choices=list(AIDS),
            help="Blind first: an aid items may be assigned (repeat; default: all of debate, critique, none).",
        )
        parser.add_argument(
            "--enqueue", action="store_true", help="Queue for the Celery workers instead of running here."
        )
        add_follow_argument(parser)

    def handle(self, *args, **o):
        agents = o["agent"] or DEFAULT_AGENTS.split()
        try:
            for spec in agents:
                parse_spec(spec)
            fields: dict[str, Any] = {
                "benchmark": Benchmark.objects.get(slug=o["benchmark"]),
                "criterion": Criterion.objects.get(slug=o["criterion"]),
                "model_a": LanguageModel.objects.get(slug=o["model_a"]),
                "model_b": LanguageModel.objects.get(slug=o["model_b"]),
            }
        except UnknownProvider as error:
            raise CommandError(str(error)) from None
        except (Benchmark.DoesNotExist, Criterion.DoesNotExist, LanguageModel.DoesNotExist) as error:
            raise CommandError(str(error)) from None
        pair = f"{fields['model_a'].slug} vs {fields['model_b'].slug}"
        name = o["name"] or f"{pair} on {fields['benchmark'].slug} ({fields['criterion'].slug})"
        try:
            run = do_create_run(
                name=name,
                agents=agents,
                rounds=o["rounds"],
                consensus_rule=o["consensus"],
                history=o["history"],
                privileged_sources=o["privileged"],
                category=o["category"],
                variant=o["variant"],
                temperature=o["temperature"],
                max_tokens=o["max_tokens"],
                seed=o["seed"],
                human_verdicts=o["human_verdicts"],
                tie_policy=o["tie_policy"],
                adjudication_flow=o["flow"],
                aids=o["aid"] or list(AIDS),
                **fields,
            )
        except RunRejected as error:
            raise CommandError(str(error)) from None
        # The same job and the same chunk code as the web path: in this process, or on the workers.
        run = do_start_run(run, enqueue=o["enqueue"])
        if o["enqueue"]:
            self.stdout.write(f"Queued run {run.pk} ({run.debates.count()} debates) as job {run.job_id}.")
            if not o["follow"]:
                return
        assert run.job is not None  # do_create_run and do_start_run made it
        job = follow(run.job) if o["enqueue"] else work_here(run.job)
        counts = run_counts(run)
        summary = ", ".join(f"{counts[s]} {s}" for s in ("consensus", "unresolved", "failed", "pending") if counts[s])
        self.stdout.write(f"Run {run.pk} '{run.name}': {summary}.")
        report_state(self, job, f"Run {run.pk} '{run.name}'")
