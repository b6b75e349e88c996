"""The quickstart's judge improvement: a small benchmark of brief and wordy answers, labels by a
simulated person who prefers the brief one on most pairs, a held-out split, and the offline heuristic
judge improved with few-shot examples from its train disagreements, both versions run on the same pairs
so the versions page shows the held-out comparison on first login.

The person is simulated and says so (their slug and the labels file name it), and the numbers show the
workflow, not anything about judges: the heuristic judge learns from examples only which length people
prefer (evalhub.llm.providers.heuristic). The versions run here (offline: well under a second).
"""

from __future__ import annotations

import json
import random

from evalhub.alignment.actions import do_create_judge, do_run_version
from evalhub.alignment.improvers.fewshot import do_improve_with_examples
from evalhub.alignment.models import JudgeVersion
from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.splits import do_make_split
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.jobs.cli import work_here

DEMO_ALIGNMENT_BENCHMARK = "demo-brevity"
DEMO_JUDGE_NAME = "demo-detail-judge"
SIMULATED_RATER = "human-simulated-rater"
PROMPTS = 24
PREFERS_BRIEF = 0.85  # how often the simulated person prefers the brief answer


def _brief(number: int) -> str:
    return f"{number} squared is {number * number}."


def _wordy(number: int) -> str:
    return (
        f"To answer this we multiply {number} by itself, which is what squaring means, and after doing the "
        f"multiplication carefully we find that the result is {number * number}."
    )


def do_demo_judge_improvement(seed: int = 0) -> JudgeVersion | None:
    """Once: the benchmark, the simulated labels, the split, version 1 run, version 2 made and run."""
    if Benchmark.objects.filter(slug=DEMO_ALIGNMENT_BENCHMARK).exists():
        return None
    rows, labels = [], []
    rng = random.Random(seed)
    for number in range(PROMPTS):
        prompt_id = f"sq{number}"
        question = {"prompt_id": prompt_id, "prompt": f"What is {number} squared?", "category": "ab"[number % 2]}
        rows.append({**question, "model": "demo-brief", "response": _brief(number)})
        rows.append({"prompt_id": prompt_id, "model": "demo-wordy", "response": _wordy(number)})
        brief_wins = rng.random() < PREFERS_BRIEF
        labels.append(
            {
                "prompt_id": prompt_id,
                "model_a": "demo-brief",
                "model_b": "demo-wordy",
                "response_a": _brief(number),
                "response_b": _wordy(number),
                "judge": SIMULATED_RATER,
                "judge_kind": "human",
                "winner": "a" if brief_wins else "b",
                "criterion": "helpfulness",
            }
        )
    data = "\n".join(json.dumps(row) for row in rows).encode()
    do_import_benchmark(
        filename="demo-brevity.jsonl",
        data=data,
        benchmark_slug=DEMO_ALIGNMENT_BENCHMARK,
        benchmark_name="Demo: brief or wordy (simulated labels)",
        allow_new_models=True,
    )
    do_import_judgments(
        filename="demo-brevity-simulated-person.json",
        data=json.dumps(labels).encode(),
        benchmark_slug=DEMO_ALIGNMENT_BENCHMARK,
    )
    benchmark = Benchmark.objects.get(slug=DEMO_ALIGNMENT_BENCHMARK)
    do_make_split(benchmark, held_out_fraction=0.5, seed=seed)
    reference = do_create_run(
        name="Demo: brief vs wordy (pairs for the judge versions)",
        benchmark=benchmark,
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="demo-brief"),
        model_b=LanguageModel.objects.get(slug="demo-wordy"),
        agents=["heuristic"],
        rounds=1,
    )
    # Debated too (one offline agent, one round): a run made and never started reads "Draft" on every
    # page that lists it, and the demo's first page would show a step nobody took.
    started = do_start_run(reference, enqueue=False).job
    assert started is not None  # do_start_run made it
    work_here(started)
    first = do_create_judge(
        DEMO_JUDGE_NAME,
        JudgeDefinition(spec="heuristic:detail"),
        note="The offline judge that weighs length most (demo numbers).",
    )
    _run_here(first, reference)
    second = do_improve_with_examples(first, DEMO_ALIGNMENT_BENCHMARK, "helpfulness", k=4, seed=seed)
    _run_here(second, reference)
    return second


def _run_here(version: JudgeVersion, reference) -> None:
    run = do_run_version(version, reference, enqueue=False)
    assert run.job is not None  # do_run_version made it
    work_here(run.job)
