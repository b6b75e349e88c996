"""A cold board reads the counts, not the verdicts (issue 23): as many queries and as many rows at
50,000 single-judge verdicts as at 5,000."""

from __future__ import annotations

import itertools

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response
from evalhub.dashboards.counts import do_rebuild_tallies
from evalhub.debates.models import Debate, DebateRun, DebateStatus, JudgeRun, JudgeVerdict, winner_for

PAGES = [
    "/leaderboards/",
    "/leaderboards/?source=consensus&source=human&source=single_judge",
    "/models/m0/",
    "/models/m0/?source=single_judge",
]


def build(judge_runs_per_debate_run: int) -> None:
    """5 models, every pair debated on 25 prompts (250 debates), and that many judge runs per debate
    run; verdicts are added by `add_verdicts`."""
    benchmark = Benchmark.objects.create(slug="arena", name="Arena")
    criterion = Criterion.objects.get(slug="helpfulness")  # built in: every database has it
    models = LanguageModel.objects.bulk_create(
        LanguageModel(slug=f"m{i}", display_name=f"M{i}", provider="openai", model_id=f"m{i}") for i in range(5)
    )
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=f"p{i}", text=f"q{i}", category=["math", "writing"][i % 2])
        for i in range(25)
    )
    responses = {
        (r.prompt_id, r.model_id): r
        for r in Response.objects.bulk_create(
            Response(prompt=p, model=m, text=f"{m.slug} {p.external_id}") for p in prompts for m in models
        )
    }
    debates = []
    for number, (a, b) in enumerate(itertools.combinations(models, 2)):
        run = DebateRun.objects.create(
            name=f"run {number}", benchmark=benchmark, criterion=criterion, model_a=a, model_b=b, agents=["heuristic"]
        )
        for k, prompt in enumerate(prompts):
            verdict, swapped = (1, 2, 0)[k % 3], k % 2 == 0
            debates.append(
                Debate(
                    run=run,
                    prompt=prompt,
                    response_a=responses[(prompt.pk, a.pk)],
                    response_b=responses[(prompt.pk, b.pk)],
                    swapped=swapped,
                    status=DebateStatus.CONSENSUS if k % 5 else DebateStatus.UNRESOLVED,
                    verdict=verdict if k % 5 else None,
                    winner=winner_for(verdict, swapped) if k % 5 else "",
                )
            )
        for j in range(judge_runs_per_debate_run):
            JudgeRun.objects.create(reference=run, judge=f"openai:judge-{j}", check_position=True, samples=10)
    Debate.objects.bulk_create(debates)


def add_verdicts(samples: range) -> None:
    rows = [
        JudgeVerdict(
            judge_run=run,
            debate=debate,
            reversed_order=order,
            sample=sample,
            text="…",
            verdict=(debate.pk + sample + run.pk) % 3,
            input_tokens=10,
            output_tokens=2,
            latency_s=0.1,
        )
        for run in JudgeRun.objects.all()
        for debate in Debate.objects.filter(run_id=run.reference_id)
        for order in (False, True)
        for sample in samples
    ]
    JudgeVerdict.objects.bulk_create(rows, batch_size=5000)


def reads(client, url: str) -> tuple[int, int]:
    """(queries, rows) of a cold request: every SELECT it made is run again and its rows counted."""
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    rows = 0
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if query["sql"].lstrip().upper().startswith("SELECT"):
                cursor.execute(query["sql"])
                rows += len(cursor.fetchall())
    return len(captured.captured_queries), rows


def test_every_board_reads_as_many_rows_at_50000_verdicts_as_at_5000(client, db, viewer, login):
    build(judge_runs_per_debate_run=2)
    add_verdicts(range(1))  # 10 pairs × 25 prompts × 2 runs × 2 orders × 1 sample = 1,000
    add_verdicts(range(1, 5))  # 5,000 in all
    assert JudgeVerdict.objects.count() == 5_000
    do_rebuild_tallies()  # as after a restore: the rows above were written behind the actions' back
    client = login(viewer)
    small = {url: reads(client, url) for url in PAGES}
    add_verdicts(range(5, 50))
    assert JudgeVerdict.objects.count() == 50_000
    do_rebuild_tallies()
    large = {url: reads(client, url) for url in PAGES}
    assert large == small
    assert max(rows for _, rows in large.values()) < 1_000, large
