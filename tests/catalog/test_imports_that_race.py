"""Two imports of the same rows at once, on PostgreSQL (one import's transaction beside another's, each
on its own connection; SQLite holds its write lock for the whole import, so there they queue). The one
that commits second finds the database refusing its rows when its COPY ends: it is refused with a reason
a person can act on, and nothing of it is kept; the first import's rows stay.

Each test holds the import at a known point (once it has read what is stored, before it writes) and
runs the other import to its commit there, in another thread: nothing waits on the machine's speed."""

from __future__ import annotations

import pytest
from django.db import connection

from evalhub.catalog.actions import importing
from evalhub.catalog.actions import judgments as judgment_actions
from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Benchmark, Judgment, LanguageModel, Prompt
from tests.worker_threads import WorkerThreads

pytestmark = [
    pytest.mark.django_db(transaction=True),  # the other import commits on its own connection
    pytest.mark.skipif(connection.vendor != "postgresql", reason="two writers at once: DATABASE_URL=postgres://…"),
]

RACED = "was written by another import or edit while this one ran; nothing of this file was kept: import it again."


def labels(judge: str, rows: int = 3) -> bytes:
    lines = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    lines += [f"q{n},Question {n}?,gpt-4o,llama-3,A{n},B{n},{judge},a" for n in range(rows)]
    return ("\r\n".join(lines) + "\r\n").encode()


def run_to_commit(work) -> None:
    workers = WorkerThreads()
    workers.start(work)
    workers.join()


def test_labels_another_import_stored_meanwhile_refuse_the_file_with_a_reason(monkeypatch):
    """Both imports find the judge with no label in the benchmark, so both write every label; the second
    to commit had a raw IntegrityError from its COPY's end (a server error page on the upload)."""
    do_import_judgments(filename="first.csv", data=labels("other-judge"), benchmark_slug="m", allow_new_models=True)
    LanguageModel.objects.create(slug="late-judge", display_name="Late judge")
    stored_labels_read = judgment_actions._JudgmentImport._judge
    held = []

    def the_other_import_commits_first(self, slug):
        judge = stored_labels_read(self, slug)
        if slug == "late-judge" and not held:
            held.append(slug)  # this import has read the judge's stored labels (none): the other runs now
            run_to_commit(lambda: do_import_judgments(filename="b.csv", data=labels("late-judge"), benchmark_slug="m"))
        return judge

    monkeypatch.setattr(judgment_actions._JudgmentImport, "_judge", the_other_import_commits_first)
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="same.csv", data=labels("late-judge"), benchmark_slug="m")
    assert held == ["late-judge"]
    assert [str(error) for error in rejected.value.errors] == [f"A row of this file {RACED}"]
    assert Judgment.objects.filter(judge_model__slug="late-judge").count() == 3  # the other import's


def benchmark_file(rows: int = 3) -> bytes:
    lines = ["prompt_id,prompt,model,response"]
    lines += [f"p{n},Question {n}?,gpt-4o,Answer {n}" for n in range(rows)]
    return ("\r\n".join(lines) + "\r\n").encode()


def test_prompts_another_import_stored_meanwhile_refuse_the_benchmark_file_with_a_reason(monkeypatch):
    """Two uploads of one benchmark file into a benchmark that exists: each finds none of its prompts and
    writes them all; the second to commit broke the prompts' natural key at its COPY's end."""
    Benchmark.objects.create(slug="twice", name="Twice")
    LanguageModel.objects.create(slug="gpt-4o", display_name="GPT-4o")
    reserve_ids = importing.reserve_ids  # called once this import has read which prompts are stored (none)
    held = []

    def the_other_import_commits_first(model, count):
        if not held:
            held.append(model)
            run_to_commit(lambda: do_import_benchmark(filename="b.csv", data=benchmark_file(), benchmark_slug="twice"))
        return reserve_ids(model, count)

    monkeypatch.setattr(importing, "reserve_ids", the_other_import_commits_first)
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="b.csv", data=benchmark_file(), benchmark_slug="twice")
    assert held == [Prompt]
    assert [str(error) for error in rejected.value.errors] == [f"A row of this file {RACED}"]
    assert Prompt.objects.filter(benchmark__slug="twice").count() == 3  # the other import's


def test_scores_another_import_stored_meanwhile_are_found_by_the_servers_merge_and_left_as_they_are(monkeypatch):
    """Two uploads of one score file. The server merges the file's scores with the stored ones
    (`merge_staged_scores`): the other import committed before the merge, so its scores are found there
    and left as they are, none stored twice. (Read back and compared in the client, they were missed,
    and the second import broke the scores' natural key at its COPY's end.)"""
    from evalhub.catalog.actions import scores
    from tests.catalog.test_import_score_streams import imported, scores_csv

    imported("first.csv", scores_csv(80), as_stream=False)  # the prompts, responses and raters exist
    Judgment.objects.all().delete()
    held = []
    merge = scores.merge_staged_scores

    def merged_after_the_other_import(staged: str) -> tuple[int, int, int]:
        if not held:  # this import's merge: the other one (merged at once) commits first
            held.append("staged")
            run_to_commit(lambda: imported("s.csv", scores_csv(80), as_stream=False))
        return merge(staged)

    monkeypatch.setattr(scores, "merge_staged_scores", merged_after_the_other_import)
    summary = imported("s.csv", scores_csv(80), as_stream=False)
    assert held == ["staged"]
    assert (summary.counts["scores_created"], summary.counts["scores_unchanged"]) == (0, 80)
    assert Judgment.objects.count() == 80  # the other import's, none twice
