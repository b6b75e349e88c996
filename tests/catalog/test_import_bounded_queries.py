"""Every import asks the database in queries of bounded size, however many prompts its file has.

SQLite refuses a statement with more variables than its build allows (32,766 by default, 250,000 in
Debian's): a file with more prompts than that failed at its last step, after minutes of work, with
`too many SQL variables`, and imported nothing. Here each bounded query asks 200 values and SQLite is
held to 999 variables (its limit before 3.32), so a file of 1,200 prompts is "larger than the limit".
"""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.catalog.models import Judgment, Prompt, Response
from tests.query_sizes import PER_QUERY, longest_in_list, value_lists

pytestmark = pytest.mark.django_db
PROMPTS = 1_200


def answer(n: int) -> dict[str, object]:
    return {"prompt_id": f"q{n}", "prompt": f"Question {n}?", "model": "m", "response": f"answer {n}"}


def test_a_benchmark_of_more_prompts_than_a_query_may_name_imports_and_imports_again(bounded):
    data = "\n".join(json.dumps(answer(n)) for n in range(PROMPTS)).encode()
    for _ in range(2):  # the second import finds every response stored
        summary = do_import_benchmark(filename="f.jsonl", data=data, benchmark_slug="big", allow_new_models=True)
    assert summary.counts["responses_unchanged"] == PROMPTS
    assert Prompt.objects.count() == Response.objects.count() == PROMPTS
    assert longest_in_list(bounded) <= PER_QUERY


def test_scores_of_more_responses_than_a_query_may_name_import_and_import_again(bounded):
    score = {"rater": "human-ann", "criterion": "coherence", "scale": "1-5"}
    rows = [answer(n) | score | {"score": 1 + n % 5} for n in range(PROMPTS)]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    for _ in range(2):
        parsed = check_score_file("s.jsonl", data, allow_new_models=True)
        summary = do_import_scores(parsed=parsed, filename="s.jsonl", data=data, benchmark_slug="big")
    assert summary.counts["scores_unchanged"] == Judgment.objects.count() == PROMPTS
    assert longest_in_list(bounded) <= PER_QUERY


def test_labels_on_more_prompts_than_a_query_may_name_import_and_import_again(bounded):
    lines = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    lines += [f"q{n},Question {n}?,m1,m2,A{n},B{n},judge-{n % 3},{'ab'[n % 2]}" for n in range(PROMPTS)]
    data = "\n".join(lines).encode()
    for _ in range(2):
        summary = do_import_judgments(filename="l.csv", data=data, benchmark_slug="big", allow_new_models=True)
    assert summary.counts["judgments_unchanged"] == Judgment.objects.count() == PROMPTS
    assert Response.objects.count() == 2 * PROMPTS
    assert longest_in_list(bounded) <= PER_QUERY


def test_a_small_file_added_to_a_large_benchmark_reads_back_only_its_own_prompts_and_responses():
    """Every prompt of the benchmark, texts and all, was read to import a file of a few: 1,000 rows into a
    benchmark of a million prompts took 8 s and 600 MiB."""
    many = "\n".join(json.dumps(answer(n)) for n in range(300)).encode()
    do_import_benchmark(filename="f.jsonl", data=many, benchmark_slug="big", allow_new_models=True)
    few = "\n".join(json.dumps(answer(n)) for n in (7, 300, 301)).encode()
    with CaptureQueriesContext(connection) as queries:
        summary = do_import_benchmark(filename="f.jsonl", data=few, benchmark_slug="big")
    assert (summary.counts["prompts_created"], summary.counts["prompts_unchanged"]) == (2, 1)
    # The rows read back (not `SELECT 1 … LIMIT 1`, whether the benchmark holds any) name the file's own.
    reads = [
        q["sql"]
        for q in queries
        if q["sql"].startswith('SELECT "') and re.search(r'FROM "catalog_(prompt|response)"', q["sql"])
    ]
    assert reads and all(value_lists(sql) and max(value_lists(sql)) <= 3 for sql in reads), reads
