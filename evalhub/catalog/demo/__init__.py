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
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportSummary
from evalhub.catalog.actions.responses import do_ensure_criterion
from evalhub.catalog.models import LanguageModel, TaskType
from evalhub.core.prompts.builtin_criteria import BUILTIN_CRITERIA

DEMO_BENCHMARK = "demo"
DEMO_MATHS_BENCHMARK = "demo-arithmetic"


@dataclass(frozen=True)
class DemoBenchmark:
    slug: str
    name: str
    task_type: str
    file: Path
    human_authors: bool = False  # its file names human authors the import creates


HERE = Path(__file__).parent
DEMO_BENCHMARKS = (
    DemoBenchmark(DEMO_BENCHMARK, "Demo: ScaleEval-style scenarios", TaskType.OPEN_CHAT, HERE / "demo_benchmark.jsonl"),
    DemoBenchmark(
        DEMO_MATHS_BENCHMARK,
        "Demo: arithmetic with worked solutions",
        TaskType.QUESTION_ANSWERING,
        HERE / "demo_maths.jsonl",
        human_authors=True,
    ),
)
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
        summaries = [
            do_import_benchmark(
                filename=demo.file.name,
                data=demo.file.read_bytes(),
                benchmark_slug=demo.slug,
                benchmark_name=demo.name,
                task_type=demo.task_type,
                allow_new_models=demo.human_authors,
                user=user,
            )
            for demo in DEMO_BENCHMARKS
        ]
    # The demo systems are made before the import (with their names), so the import itself finds
    # them: count them here, or the summary says "0 new model(s)" right after creating three.
    summaries[0].counts["models_created"] += created
    return summaries


def demo_texts() -> list[str]:
    """Every prompt, reference and response of the demo files: a corpus for make_tiny_model's tokenizer."""
    texts = []
    for demo in DEMO_BENCHMARKS:
        for line in demo.file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [row.get(key, "") for key in ("prompt", "response", "reference_answer", "rating_guidelines")]
    return [text for text in texts if text]
