"""The quickstart's first debate run on the demo benchmark (evalhub.catalog.demo)."""

from __future__ import annotations

from evalhub.catalog.demo import DEMO_BENCHMARK
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.debates.models import DebateRun

DEMO_RUN_NAME = "Demo: thorough vs terse, helpfulness (three heuristic agents)"


def demo_run_fields() -> dict:
    """The demo's debate: thorough vs terse on helpfulness, three heuristic agents seeing the privileged fields."""
    return {
        "benchmark": Benchmark.objects.get(slug=DEMO_BENCHMARK),
        "criterion": Criterion.objects.get(slug="helpfulness"),
        "model_a": LanguageModel.objects.get(slug="demo-thorough"),
        "model_b": LanguageModel.objects.get(slug="demo-terse"),
        "agents": ["heuristic", "heuristic:reference", "heuristic:detail"],
        "privileged_sources": ["reference_answer", "rating_guidelines"],
    }


def do_create_demo_debate_run():
    """A first debate run on the demo, started once: consensus, changed minds and unresolved ones."""
    if DebateRun.objects.filter(name=DEMO_RUN_NAME).exists():
        return None
    return do_start_run(do_create_run(name=DEMO_RUN_NAME, **demo_run_fields()))
