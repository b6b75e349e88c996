"""The demo benchmark evalhub ships for a first look (quickstart) and manual trials.

Its three "systems" are not models: their responses were written for evalhub to show
three quality levels (thorough, terse, sloppy) on twelve prompts in ScaleEval's four
scenarios, some with privileged information (reference answers, rating guidelines, hints).
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from evalhub.catalog.actions import ImportSummary, do_ensure_criterion, do_import_benchmark
from evalhub.catalog.models import LanguageModel, TaskType
from evalhub.core.builtin_criteria import BUILTIN_CRITERIA

DEMO_FILE = Path(__file__).with_name("demo_benchmark.jsonl")
DEMO_BENCHMARK = "demo"
DEMO_SYSTEMS = {
    "demo-thorough": "Demo system: thorough",
    "demo-terse": "Demo system: terse",
    "demo-sloppy": "Demo system: sloppy",
}


def do_load_builtin_criteria() -> int:
    for slug, spec in BUILTIN_CRITERIA.items():
        do_ensure_criterion(slug, spec["name"], spec["definition"], spec["levels"], scenario=spec["scenario"])
    return len(BUILTIN_CRITERIA)


def do_load_demo(user=None) -> ImportSummary:
    """Load (or leave as it is) the demo benchmark; running it twice changes nothing."""
    with transaction.atomic():
        do_load_builtin_criteria()
        created = 0
        for slug, name in DEMO_SYSTEMS.items():
            _, new = LanguageModel.objects.get_or_create(
                slug=slug,
                defaults={
                    "display_name": name,
                    "family": "demo",
                    "notes": "Hand-written demo responses shipped with evalhub; not a language model.",
                },
            )
            created += new
        summary = do_import_benchmark(
            filename=DEMO_FILE.name,
            data=DEMO_FILE.read_bytes(),
            benchmark_slug=DEMO_BENCHMARK,
            benchmark_name="Demo: ScaleEval-style scenarios",
            task_type=TaskType.OPEN_CHAT,
            user=user,
        )
    # The demo systems are made before the import (with their names), so the import itself finds
    # them: count them here, or the summary says "0 new model(s)" right after creating three.
    summary.counts["models_created"] += created
    return summary
