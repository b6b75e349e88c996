"""The pointwise page gives one answer (issue 77): the same scores written in another row order,
imported in batches, or imported twice give the same report, bootstrap intervals included."""

from __future__ import annotations

import itertools
import random

import pytest

from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.core.statistics.pointwise import meta_evaluation
from evalhub.judgelab.pointwise import stored_scores
from tests.core.statistics.test_pointwise import survey

pytestmark = pytest.mark.django_db

_benchmarks = itertools.count(1)
HEADER = "prompt_id,prompt,model,response,rater,rater_kind,score,criterion"


def lines(seed: int = 4) -> list[str]:
    return [
        f"q{s.prompt},Question {s.prompt}?,{s.system},{s.system} on {s.prompt},"
        f"{'human-' if s.person else ''}{s.rater},{'human' if s.person else 'model'},{s.score!r},fluency"
        for s in survey(seed, prompts=16, systems=4)
    ]


def report_of(rows: list[str], batches: int = 1, times: int = 1) -> dict:
    slug = f"pw{next(_benchmarks)}"
    size = -(-len(rows) // batches)
    for _ in range(times):
        for start in range(0, len(rows), size):
            data = "\n".join([HEADER, *rows[start : start + size]]).encode()
            parsed = check_score_file("s.csv", data, allow_new_models=True)
            do_import_scores(parsed=parsed, filename="s.csv", data=data, benchmark_slug=slug)
    return meta_evaluation(stored_scores(slug), resamples=200)


def test_the_pointwise_report_is_the_same_however_the_scores_are_ordered_batched_or_imported_again():
    rows = lines()
    expected = report_of(rows)
    assert expected["criteria"]["fluency"]["judges"], "the judges are measured"
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    assert report_of(shuffled) == expected
    assert report_of(list(reversed(rows)), batches=3) == expected
    assert report_of(shuffled, times=2) == expected


def test_a_warm_pointwise_page_reads_no_judgment_and_a_cold_one_reads_them_only_for_its_benchmark(
    client, viewer, django_assert_max_num_queries
):
    """Issue 79: the page listed its benchmarks by reading every score's benchmark on every view."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    slug = f"pw{next(_benchmarks)}"
    data = "\n".join([HEADER, *lines()]).encode()
    do_import_scores(
        parsed=check_score_file("s.csv", data, allow_new_models=True), filename="s.csv", data=data, benchmark_slug=slug
    )
    client.force_login(viewer)
    assert client.get(f"/judges/pointwise/?benchmark={slug}").status_code == 200
    with CaptureQueriesContext(connection) as warm:
        assert client.get(f"/judges/pointwise/?benchmark={slug}").status_code == 200
    judgments = [q["sql"] for q in warm if '"catalog_judgment"' in q["sql"] and "MAX(" not in q["sql"]]
    assert not judgments, judgments
