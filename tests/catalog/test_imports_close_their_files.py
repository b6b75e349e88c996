"""An import's records on disk (each a private temporary SQLite database: `DiskMap`) go when the import
ends, stored or refused, not whenever the collector reaches them: a worker importing file after file
would otherwise hold their files and page caches, and a refused file's traceback keeps them alive."""

from __future__ import annotations

import sqlite3

import pytest

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.core.files import disk_map

pytestmark = pytest.mark.django_db

LABELS = (
    b"prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
    b"q1,Hi?,m1,m2,A,B,human-ana,a\r\n"
    b"q2,Yo?,m1,m2,C,D,gpt-judge,b\r\n"
)
SCORES = b"prompt_id,prompt,model,response,rater,criterion,score\r\nq1,Hi?,m1,A,human-ana,quality,4\r\n"
BENCHMARK = b'{"prompt_id": "q1", "prompt": "Hi?", "model": "m1", "response": "A"}\n'


@pytest.fixture
def opened(monkeypatch) -> list[disk_map.DiskMap]:
    """Every DiskMap made while the test runs."""
    made: list[disk_map.DiskMap] = []
    original = disk_map.DiskMap.__init__

    def remembered(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(disk_map.DiskMap, "__init__", remembered)
    return made


def open_ones(made: list[disk_map.DiskMap]) -> int:
    still = 0
    for one in made:
        try:
            one.connection.execute("SELECT 1")
        except sqlite3.ProgrammingError:  # "Cannot operate on a closed database."
            continue
        still += 1
    return still


def labels(data: bytes = LABELS) -> None:
    do_import_judgments(filename="labels.csv", data=data, benchmark_slug="b", allow_new_models=True)


def scores(data: bytes = SCORES) -> None:
    parsed = check_score_file("scores.csv", data, allow_new_models=True)
    do_import_scores(parsed=parsed, filename="scores.csv", data=data, benchmark_slug="b")


def benchmark(data: bytes = BENCHMARK) -> None:
    do_import_benchmark(filename="b.jsonl", data=data, benchmark_slug="b", allow_new_models=True)


@pytest.mark.parametrize("imports", [labels, scores, benchmark], ids=["labels", "scores", "benchmark"])
def test_an_import_and_the_same_file_again_leave_nothing_open(opened, imports):
    imports()
    imports()
    assert opened and open_ones(opened) == 0


@pytest.mark.parametrize(
    ("imports", "refused"),
    [
        (labels, LABELS + b"q3,Hey?,m1,m2,E,F,gpt-judge,maybe\r\n"),
        (scores, SCORES + b"q2,Yo?,m1,B,human-ana,quality,lots\r\n"),
        (benchmark, BENCHMARK + b'{"prompt_id": "q2", "model": "m1", "response": "B"}\n'),
    ],
    ids=["labels", "scores", "benchmark"],
)
def test_a_refused_file_leaves_nothing_open(opened, imports, refused):
    with pytest.raises(ImportRejected):
        imports(refused)
    assert opened and open_ones(opened) == 0
