"""The demo benchmarks evalhub ships for a first look (quickstart) and manual trials.

Its three "systems" are not models: their responses were written for evalhub to show
three quality levels (thorough, terse, sloppy) on twelve prompts in ScaleEval's four
scenarios, some with privileged information (reference answers, rating guidelines, hints).
A second, small arithmetic benchmark has worked reference solutions ending in \\boxed{}
(so hint tiers and answer accuracy are real) and two human tutors' answers (GEM's human
references and GRE-bench's human baseline).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.db import transaction

from evalhub.catalog.actions import ImportSummary, do_ensure_criterion, do_import_benchmark
from evalhub.catalog.models import LanguageModel, TaskType
from evalhub.core.builtin_criteria import BUILTIN_CRITERIA

DEMO_FILE = Path(__file__).with_name("demo_benchmark.jsonl")
DEMO_BENCHMARK = "demo"
DEMO_MATHS_FILE = Path(__file__).with_name("demo_maths.jsonl")
DEMO_MATHS_BENCHMARK = "demo-arithmetic"
DEMO_SYSTEMS = {
    "demo-thorough": "Demo system: thorough",
    "demo-terse": "Demo system: terse",
    "demo-sloppy": "Demo system: sloppy",
}


def do_load_builtin_criteria() -> int:
    for slug, spec in BUILTIN_CRITERIA.items():
        do_ensure_criterion(slug, spec["name"], spec["definition"], spec["levels"], scenario=spec["scenario"])
    return len(BUILTIN_CRITERIA)


def do_load_demo(user=None) -> list[ImportSummary]:
    """Load (or leave as they are) the demo benchmarks; running it twice changes nothing."""
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
        maths = do_import_benchmark(
            filename=DEMO_MATHS_FILE.name,
            data=DEMO_MATHS_FILE.read_bytes(),
            benchmark_slug=DEMO_MATHS_BENCHMARK,
            benchmark_name="Demo: arithmetic with worked solutions",
            task_type=TaskType.QUESTION_ANSWERING,
            allow_new_models=True,  # the two human tutors
            user=user,
        )
    # The demo systems are made before the import (with their names), so the import itself finds
    # them: count them here, or the summary says "0 new model(s)" right after creating three.
    summary.counts["models_created"] += created
    return [summary, maths]


def demo_texts() -> list[str]:
    """Every prompt, reference and response of the demo files: a corpus for make_tiny_model's tokenizer."""
    texts = []
    for path in (DEMO_FILE, DEMO_MATHS_FILE):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [row.get(key, "") for key in ("prompt", "response", "reference_answer", "rating_guidelines")]
    return [text for text in texts if text]
