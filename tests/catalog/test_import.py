"""Importing benchmark files: all rows or none, every problem reported, idempotent."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.exports import response_rows
from evalhub.catalog.models import Benchmark, DataImport, LanguageModel, Prompt, Response
from evalhub.core.files.tables import to_text

pytestmark = pytest.mark.django_db

ROWS = [
    {
        "prompt_id": "q1",
        "prompt": "Is 221 prime?",
        "category": "math",
        "reference_answer": "No: 13 x 17",
        "model": "alpha",
        "response": "No.",
    },
    {"prompt_id": "q1", "model": "beta", "response": "Yes."},
    {"prompt_id": "q2", "prompt": "Name a prime.", "model": "alpha", "response": "7"},
]


@pytest.fixture
def models(db):
    for slug in ("alpha", "beta"):
        LanguageModel.objects.create(slug=slug, display_name=slug.title())


def as_bytes(rows: list[dict], fmt: str) -> bytes:
    if fmt == "parquet":
        buffer = io.BytesIO()
        pd.DataFrame(rows).to_parquet(buffer)
        return buffer.getvalue()
    return to_text(rows, fmt).encode()


def table_sizes() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in (Benchmark, Prompt, Response, LanguageModel, DataImport))


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_good_file_in_each_format_imports_every_prompt_and_response(models, fmt):
    summary = do_import_benchmark(filename=f"f.{fmt}", data=as_bytes(ROWS, fmt), benchmark_slug="primes")
    assert summary.counts["prompts_created"] == 2
    assert summary.counts["responses_created"] == 3
    q1 = Prompt.objects.get(benchmark__slug="primes", external_id="q1")
    assert (q1.text, q1.category, q1.reference_answer) == ("Is 221 prime?", "math", "No: 13 x 17")
    assert dict(q1.responses.values_list("model__slug", "text")) == {"alpha": "No.", "beta": "Yes."}


def test_reimporting_the_same_file_changes_nothing(models):
    data = as_bytes(ROWS, "jsonl")
    do_import_benchmark(filename="f.jsonl", data=data, benchmark_slug="primes")
    before = table_sizes()
    summary = do_import_benchmark(filename="f.jsonl", data=data, benchmark_slug="primes")
    assert table_sizes() == before
    assert summary.counts["prompts_unchanged"] == 2
    assert summary.counts["responses_unchanged"] == 3


def test_reimporting_an_edited_file_updates_rows_in_place(models):
    do_import_benchmark(filename="f.jsonl", data=as_bytes(ROWS, "jsonl"), benchmark_slug="primes")
    original_id = Response.objects.get(model__slug="beta").id
    edited = [dict(ROWS[0]), {**ROWS[1], "response": "No, 13 x 17."}, ROWS[2]]
    summary = do_import_benchmark(filename="f.jsonl", data=as_bytes(edited, "jsonl"), benchmark_slug="primes")
    assert summary.counts["responses_updated"] == 1
    assert summary.counts["responses_created"] == 0
    assert Response.objects.get(id=original_id).text == "No, 13 x 17."


BAD_FILES = {
    "missing field": [ROWS[0], {"prompt_id": "q9", "model": "alpha", "response": "no prompt text"}],
    "wrong type": [ROWS[0], {"prompt_id": "q9", "prompt": ["a", "list"]}],
    "unknown model": [ROWS[0], {"prompt_id": "q9", "prompt": "p", "model": "gamma", "response": "r"}],
    "duplicate id": [ROWS[0], {"prompt_id": "q1", "model": "alpha", "response": "twice"}],
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_file_with_one_bad_row_writes_nothing_and_names_the_row(models, case):
    before = table_sizes()
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="f.jsonl", data=as_bytes(BAD_FILES[case], "jsonl"), benchmark_slug="new")
    assert table_sizes() == before
    assert [error.line for error in rejected.value.errors] == [2]


def test_non_utf8_bytes_write_nothing(models):
    before = table_sizes()
    with pytest.raises(ImportRejected, match="1 problem"):
        do_import_benchmark(filename="f.csv", data=b"prompt_id,prompt\nq1,caf\xe9\n", benchmark_slug="new")
    assert table_sizes() == before


def test_new_models_are_created_only_when_asked(models):
    rows = [{"prompt_id": "q1", "prompt": "p", "model": "human-expert", "response": "r"}]
    with pytest.raises(ImportRejected):
        do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="b")
    do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="b", allow_new_models=True)
    assert LanguageModel.objects.get(slug="human-expert").is_human


def test_the_responses_export_imports_back_to_the_same_rows(models):
    rows = [*ROWS, {"prompt_id": "q3", "prompt": "orphan", "privileged": {"hint": "h"}, "metadata": {"n": 1}}]
    do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="one")
    for fmt in ("jsonl", "csv"):
        exported = to_text(list(response_rows(Benchmark.objects.get(slug="one"))), fmt).encode()
        do_import_benchmark(filename=f"x.{fmt}", data=exported, benchmark_slug=f"copy-{fmt}")
        assert list(response_rows(Benchmark.objects.get(slug=f"copy-{fmt}"))) == [
            row if fmt == "jsonl" else {k: (str(v) if k == "metadata.n" else v) for k, v in row.items()}
            for row in response_rows(Benchmark.objects.get(slug="one"))
        ]


def test_the_import_command_reports_every_problem_and_writes_nothing(models, tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(as_bytes(BAD_FILES["unknown model"] + BAD_FILES["wrong type"][1:], "jsonl"))
    before = table_sizes()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("import_benchmark", str(path), "--benchmark", "b")
    err = capsys.readouterr().err
    assert "bad.jsonl: line 2: unknown model 'gamma'" in err
    assert "bad.jsonl: line 3: 'prompt' must be text" in err
    assert table_sizes() == before


def test_the_import_command_refuses_a_file_over_the_limit_before_reading_it(models, tmp_path, settings):
    settings.EVALHUB_MAX_IMPORT_BYTES = 1000
    path = tmp_path / "big.jsonl"
    path.write_bytes(b" " * 1001)
    with pytest.raises(CommandError):
        call_command("import_benchmark", str(path), "--benchmark", "b")
    assert not Benchmark.objects.exists()


def test_export_results_writes_each_table_of_each_benchmark(models, tmp_path):
    do_import_benchmark(filename="f.jsonl", data=as_bytes(ROWS, "jsonl"), benchmark_slug="primes")
    call_command("export_results", "--out", str(tmp_path), "--format", "jsonl")
    lines = (tmp_path / "primes.responses.jsonl").read_text().splitlines()
    assert [json.loads(line)["model"] for line in lines] == ["alpha", "beta", "alpha"]
    assert (tmp_path / "primes.judgments.jsonl").read_text() == ""


# --- the upload page ---------------------------------------------------------------


def upload(client, name: str, data: bytes, **fields):
    return client.post(
        "/benchmarks/import/",
        {"file": SimpleUploadedFile(name, data), "benchmark": "primes", "task_type": "other", **fields},
    )


def test_an_admin_uploads_a_file_and_lands_on_its_benchmark(models, admin_user, login):
    response = upload(login(admin_user), "f.csv", as_bytes(ROWS, "csv"))
    assert response.status_code == 302
    assert response.url == "/benchmarks/primes/"
    assert DataImport.objects.get().imported_by == admin_user


def test_an_upload_with_bad_rows_shows_every_problem_and_writes_nothing(models, admin_user, login):
    before = table_sizes()
    response = upload(login(admin_user), "f.jsonl", as_bytes(BAD_FILES["duplicate id"], "jsonl"))
    assert response.status_code == 400
    assert "Nothing was imported: 1 problem" in response.content.decode()
    assert "line 2: duplicate response for prompt_id" in response.content.decode()
    assert table_sizes() == before


def test_an_upload_over_the_limit_is_refused_without_writing(models, admin_user, login, settings):
    settings.EVALHUB_MAX_IMPORT_BYTES = 2_000_000
    big = b"x" * 2_000_001
    before = table_sizes()
    response = upload(login(admin_user), "big.jsonl", big)
    assert response.status_code == 400
    assert "over the import limit of 2.0 MB (EVALHUB_MAX_IMPORT_BYTES)" in response.content.decode()
    assert table_sizes() == before


def test_the_default_limit_takes_a_million_row_judgments_csv():
    """50 MiB refused a million-row labels file (75 MiB in evalhub's generic layout, measured for
    docs/importing/benchmarks.md) unread."""
    from evalhub.settings import DEFAULT_MAX_IMPORT_BYTES

    assert DEFAULT_MAX_IMPORT_BYTES >= 1.5 * 75 * 1024 * 1024


def test_response_metadata_is_stored_on_the_response_and_round_trips_through_the_export(models):
    """`response_metadata.NAME` describes a response (GEM's imported `preprocessed` text), not its prompt."""
    rows = [
        {
            "prompt_id": "q1",
            "prompt": "Review it.",
            "metadata": {"venue": "iclr"},
            "model": "alpha",
            "response": "Good paper.",
            "response_metadata": {"preprocessed": "The reviewer appreciates the paper."},
        },
        {
            "prompt_id": "q1",
            "model": "beta",
            "response": "Weak baselines.",
            "response_metadata.preprocessed": "The reviewer criticizes the baselines.",
        },
    ]
    do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="meta")
    prompt = Benchmark.objects.get(slug="meta").prompts.get()
    assert prompt.metadata == {"venue": "iclr"}, "the prompt keeps only its own metadata"
    stored = dict(prompt.responses.values_list("model__slug", "metadata"))
    assert stored == {
        "alpha": {"preprocessed": "The reviewer appreciates the paper."},
        "beta": {"preprocessed": "The reviewer criticizes the baselines."},
    }
    for fmt in ("jsonl", "csv"):
        exported = to_text(list(response_rows(Benchmark.objects.get(slug="meta"))), fmt).encode()
        do_import_benchmark(filename=f"x.{fmt}", data=exported, benchmark_slug=f"meta-{fmt}")
        copy = Benchmark.objects.get(slug=f"meta-{fmt}").prompts.get()
        assert dict(copy.responses.values_list("model__slug", "metadata")) == stored


def test_response_metadata_without_a_response_is_refused_naming_the_line(models):
    rows = [{"prompt_id": "q1", "prompt": "p", "response_metadata": {"preprocessed": "x"}}]
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="b")
    assert [str(e) for e in rejected.value.errors] == [
        "line 1: 'response_metadata' is given without 'model': it describes a response."
    ]


def test_the_responses_csv_download_neutralises_formulas_and_imports_back_unchanged(models, admin_user, login):
    hostile = [
        {"prompt_id": "q1", "prompt": "=1+1", "model": "alpha", "response": '=HYPERLINK("http://evil.example","x")'},
        {"prompt_id": "q1", "model": "beta", "response": "- a bullet\r\n@mention"},
    ]
    do_import_benchmark(filename="f.jsonl", data=as_bytes(hostile, "jsonl"), benchmark_slug="evil")
    body = login(admin_user).get("/benchmarks/evil/export/responses.csv").content.decode()
    cells = [cell for row in csv.reader(io.StringIO(body, newline="")) for cell in row]
    assert '\'=HYPERLINK("http://evil.example","x")' in cells
    assert "'=1+1" in cells
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "@", "-")], "no cell starts a formula"
    do_import_benchmark(filename="back.csv", data=body.encode(), benchmark_slug="evil-copy")
    assert list(response_rows(Benchmark.objects.get(slug="evil-copy"))) == list(
        response_rows(Benchmark.objects.get(slug="evil"))
    )


def test_edited_prompts_are_updated_in_place_slice_by_slice_and_a_new_category_marks_the_counts_stale(
    models, monkeypatch
):
    """The file's prompts are compared with the stored ones a slice at a time: an edit in any slice is
    found and stored in place, and only a changed category (the boards count battles per scenario)
    marks the counts stale."""
    from evalhub.system import bounded_queries
    from evalhub.tallies.actions import is_stale
    from evalhub.tallies.models import TallyState

    monkeypatch.setattr(bounded_queries, "PER_QUERY", 2)
    rows = [{"prompt_id": f"q{n}", "prompt": f"Question {n}?", "category": "math"} for n in range(5)]
    do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="b")
    keys = dict(Prompt.objects.values_list("external_id", "pk"))
    TallyState.objects.update_or_create(pk=1, defaults={"stale": False})
    rows[3]["prompt"] = "Question 3, reworded?"
    summary = do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="b")
    assert (summary.counts["prompts_updated"], summary.counts["prompts_unchanged"]) == (1, 4)
    assert Prompt.objects.get(external_id="q3").text == "Question 3, reworded?"
    assert not is_stale()
    rows[4]["category"] = "logic"
    summary = do_import_benchmark(filename="f.jsonl", data=as_bytes(rows, "jsonl"), benchmark_slug="b")
    assert (summary.counts["prompts_updated"], summary.counts["prompts_unchanged"]) == (1, 4)
    assert is_stale()
    assert dict(Prompt.objects.values_list("external_id", "pk")) == keys, "updated in place"
