"""Imports add; they never blank: a benchmark imported with every prompt field, then people's labels,
scores or another model's responses that do not restate those fields, leaves every prompt as it was.
A field is cleared only by a file that carries its column empty, and a changed field is named."""

from __future__ import annotations

import hashlib
import io
import json

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.catalog.models import LanguageModel, Prompt

pytestmark = pytest.mark.django_db

HAIKU = "Write a haiku."
SAY_HI = "Say hi."
AE_ID = "ae-" + hashlib.sha1(SAY_HI.encode(), usedforsecurity=False).hexdigest()[:12]


def full_prompt(prompt_id: str, text: str) -> dict:
    """A benchmark row with every field a prompt can carry."""
    return {
        "prompt_id": prompt_id,
        "prompt": text,
        "category": "writing",
        "synopsis": f"synopsis of {prompt_id}",
        "source": f"source of {prompt_id}",
        "reference_answer": f"reference of {prompt_id}",
        "rating_guidelines": f"guidelines of {prompt_id}",
        "privileged": {"hint": f"hint of {prompt_id}", "rubric": "be kind"},
        "metadata": {"instruction_difficulty": 2.5, "source_dataset": "demo"},
        "model": "alpha",
        "response": f"alpha on {prompt_id}",
    }


def jsonl(rows: list[dict]) -> bytes:
    return "\n".join(json.dumps(row) for row in rows).encode()


def prompt_fields() -> dict[str, tuple]:
    return {
        prompt.external_id: (
            prompt.text,
            prompt.category,
            prompt.synopsis,
            prompt.source,
            prompt.reference_answer,
            prompt.rating_guidelines,
            prompt.privileged,
            prompt.metadata,
        )
        for prompt in Prompt.objects.filter(benchmark__slug="bench")
    }


@pytest.fixture
def stored(db):
    """The benchmark as a team imports it first, and what its prompts hold."""
    for slug in ("alpha", "beta"):
        LanguageModel.objects.create(slug=slug, display_name=slug)
    rows = [full_prompt("q1", "Is 221 prime?"), full_prompt("81", HAIKU), full_prompt(AE_ID, SAY_HI)]
    do_import_benchmark(filename="bench.jsonl", data=jsonl(rows), benchmark_slug="bench")
    before = prompt_fields()
    assert before["q1"][4] == "reference of q1" and before["81"][6]["hint"] == "hint of 81"
    return before


def test_another_models_responses_without_the_prompt_fields_leave_every_prompt_as_it_was(stored):
    rows = [
        {"prompt_id": "q1", "model": "beta", "response": "No."},
        {"prompt_id": "81", "model": "beta", "response": "Snow."},
    ]
    summary = do_import_benchmark(filename="beta.jsonl", data=jsonl(rows), benchmark_slug="bench")
    assert prompt_fields() == stored
    assert (summary.counts["prompts_updated"], summary.counts["responses_created"]) == (0, 2)
    # The same in CSV, with the prompt restated unchanged and no column for the rest.
    csv = b"prompt_id,prompt,model,response\r\nq1,Is 221 prime?,beta,No.\r\n"
    do_import_benchmark(filename="beta.csv", data=csv, benchmark_slug="bench")
    assert prompt_fields() == stored


def test_generic_labels_in_csv_imported_twice_leave_every_prompt_as_it_was(stored):
    labels = (
        b"prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
        b"q1,Is 221 prime?,alpha,beta,alpha on q1,No.,human-ana,a\r\n"
        b"q1,,alpha,beta,alpha on q1,No.,human-bo,b\r\n"
    )
    for _ in range(2):
        summary = do_import_judgments(filename="labels.csv", data=labels, benchmark_slug="bench", allow_new_models=True)
        assert prompt_fields() == stored
        assert summary.counts["prompts_updated"] == 0


def label(prompt_id: str, response_a: str, response_b: str) -> dict:
    """A person's label in the generic layout, with no prompt text."""
    return {
        "prompt_id": prompt_id,
        "model_a": "alpha",
        "model_b": "beta",
        "response_a": response_a,
        "response_b": response_b,
        "judge": "human-ana",
        "winner": "a",
    }


def test_labels_that_leave_out_the_prompt_text_are_taken_for_a_prompt_the_benchmark_holds(stored):
    labels = jsonl([label("q1", "alpha on q1", "No.")])
    summary = do_import_judgments(filename="labels.jsonl", data=labels, benchmark_slug="bench")
    assert prompt_fields() == stored
    assert summary.counts["judgments_created"] == 1


def test_a_new_prompt_still_needs_its_text_and_nothing_is_written_without_it(stored):
    labels = jsonl([label("q-new", "a", "b")])
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="labels.jsonl", data=labels, benchmark_slug="bench", allow_new_models=True)
    assert [str(error) for error in rejected.value.errors] == [
        "line 1: missing required field 'prompt' (first row of prompt_id 'q-new', new here)."
    ]
    assert prompt_fields() == stored
    assert not LanguageModel.objects.filter(slug="human-ana").exists()
    # A Parquet file's errors count rows, as its other errors do.
    buffer = io.BytesIO()
    pd.DataFrame([{"prompt_id": "q-new", "model": "beta", "response": "r"}]).to_parquet(buffer)
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="new.parquet", data=buffer.getvalue(), benchmark_slug="bench")
    assert [str(error) for error in rejected.value.errors] == [
        "row 1: missing required field 'prompt' (first row of prompt_id 'q-new', new here)."
    ]


def test_mt_bench_and_arena_style_records_leave_every_prompt_as_it_was(stored):
    conversation = [{"role": "user", "content": HAIKU}, {"role": "assistant", "content": "Snow falls."}]
    record = {
        "question_id": 81,
        "model_a": "alpha",
        "model_b": "beta",
        "winner": "model_a",
        "judge": "arena_user_1",
        "turn": 1,
        "conversation_a": conversation,
        "conversation_b": [conversation[0], {"role": "assistant", "content": "A poem."}],
    }
    do_import_judgments(filename="arena.jsonl", data=jsonl([record]), benchmark_slug="bench", allow_new_models=True)
    assert prompt_fields() == stored


def test_alpaca_eval_annotations_leave_every_prompt_as_it_was(stored):
    annotation = {
        "instruction": SAY_HI,
        "output_1": "Hi!",
        "output_2": "Hello!",
        "generator_1": "alpha",
        "generator_2": "beta",
        "preference": 1.25,
        "annotator": "alpaca_eval_gpt4",
    }
    data = json.dumps([annotation]).encode()
    do_import_judgments(filename="annotations.json", data=data, benchmark_slug="bench", allow_new_models=True)
    assert prompt_fields() == stored


def test_scores_leave_every_prompt_as_it_was(stored):
    scores = jsonl(
        [
            {"prompt_id": "q1", "model": "alpha", "response": "alpha on q1", "rater": "human-ana", "score": 4},
            {
                "prompt_id": "81",
                "prompt": HAIKU,
                "model": "beta",
                "response": "Snow.",
                "rater": "human-ana",
                "score": 2,
            },
        ]
    )
    parsed = check_score_file("scores.jsonl", scores)
    do_import_scores(parsed=parsed, filename="scores.jsonl", data=scores, benchmark_slug="bench")
    assert prompt_fields() == stored


def test_an_inspect_log_leaves_every_prompt_as_it_was(stored, tmp_path):
    from tests.catalog.test_import_scores import inspect_log

    # The benchmark's prompt as an Inspect task's sample is keyed (task/sample id).
    Prompt.objects.filter(external_id="q1").update(external_id="tiny/q1", text="Question q1?")
    stored["tiny/q1"] = ("Question q1?", *stored.pop("q1")[1:])
    inspect_log(tmp_path / "log.eval", {"q1": {"match": "C"}})
    call_command("import_scores", str(tmp_path / "log.eval"), "--benchmark", "bench", "--create-models")
    assert prompt_fields() == stored


def test_a_team_uploads_a_benchmark_then_labels_twice_and_the_prompt_page_still_shows_its_privileged_box(
    db, admin_user, login
):
    for slug in ("alpha", "beta"):
        LanguageModel.objects.create(slug=slug, display_name=slug)
    client = login(admin_user)
    benchmark = jsonl([full_prompt("q1", "Is 221 prime?"), {"prompt_id": "q1", "model": "beta", "response": "No."}])
    uploaded = client.post(
        "/benchmarks/import/",
        {"file": SimpleUploadedFile("bench.jsonl", benchmark), "benchmark": "bench", "task_type": "other"},
    )
    assert uploaded.status_code == 302, uploaded.content.decode()[:2000]
    labels = (
        b"prompt_id,model_a,model_b,response_a,response_b,judge,winner\r\nq1,alpha,beta,alpha on q1,No.,human-ana,a\r\n"
    )
    for _ in range(2):  # the same labels file again, as a second upload of it
        response = client.post(
            "/judges/import/",
            {"file": SimpleUploadedFile("labels.csv", labels), "benchmark": "bench", "layout": "auto"},
        )
        assert response.status_code == 302, response.content.decode()[:2000]
    prompt = Prompt.objects.get(benchmark__slug="bench", external_id="q1")
    page = client.get(f"/benchmarks/bench/prompts/{prompt.pk}/").content.decode()
    assert "Privileged information" in page
    assert "reference of q1" in page and "hint of q1" in page
    metadata = page[page.index('id="prompt-metadata"') :]
    assert "<dt>instruction_difficulty</dt><dd>2.5</dd>" in metadata and "<dd>demo</dd>" in metadata


def test_a_field_changes_only_where_the_file_carries_it_and_the_summary_names_it(stored):
    rows = [
        {
            "prompt_id": "q1",
            "category": "maths",
            "reference_answer": "No: 13 x 17.",
            "privileged": {"hint": "try 13"},
            "metadata": {"instruction_difficulty": 3.0},
        }
    ]
    summary = do_import_benchmark(filename="edit.jsonl", data=jsonl(rows), benchmark_slug="bench")
    after = prompt_fields()
    text, category, synopsis, source, reference, guidelines, privileged, metadata = after["q1"]
    assert (text, category, synopsis, source, reference, guidelines) == (
        "Is 221 prime?",
        "maths",
        "synopsis of q1",
        "source of q1",
        "No: 13 x 17.",
        "guidelines of q1",
    )
    assert privileged == {"hint": "try 13", "rubric": "be kind"}
    assert metadata == {"instruction_difficulty": 3.0, "source_dataset": "demo"}
    assert {key: after[key] for key in ("81", AE_ID)} == {key: stored[key] for key in ("81", AE_ID)}
    assert summary.counts["prompts_updated"] == 1
    assert summary.counts["prompt_fields_updated"] == [
        "category",
        "metadata.instruction_difficulty",
        "privileged.hint",
        "reference_answer",
    ]
    assert (
        "prompts 0 new, 1 updated (category, metadata.instruction_difficulty, privileged.hint, " in summary.describe()
    )


def test_an_empty_value_in_a_column_the_file_has_is_the_explicit_way_to_clear_a_field(stored):
    csv = b"prompt_id,reference_answer,privileged.hint,metadata.source_dataset\r\nq1,,,\r\n"
    summary = do_import_benchmark(filename="clear.csv", data=csv, benchmark_slug="bench")
    text, category, _, _, reference, guidelines, privileged, metadata = prompt_fields()["q1"]
    assert (text, category, reference, guidelines) == ("Is 221 prime?", "writing", "", "guidelines of q1")
    assert privileged == {"rubric": "be kind"}
    assert metadata == {"instruction_difficulty": 2.5}
    assert summary.counts["prompt_fields_updated"] == ["metadata.source_dataset", "privileged.hint", "reference_answer"]


def test_a_file_that_carries_a_few_fields_reads_and_writes_back_only_those(stored):
    """A re-import read every stored prompt's source, guidelines, privileged fields and metadata, and
    wrote them all back for a prompt whose text changed: a paper's source read back for nothing."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    rows = [
        {"prompt_id": "q1", "prompt": "Is 221 a prime?", "model": "alpha", "response": "alpha on q1"},
        {"prompt_id": "81", "category": "poetry", "model": "alpha", "response": "alpha on 81"},
    ]
    with CaptureQueriesContext(connection) as queries:
        summary = do_import_benchmark(filename="few.jsonl", data=jsonl(rows), benchmark_slug="bench")
    after = prompt_fields()
    assert after["q1"] == ("Is 221 a prime?", *stored["q1"][1:])
    assert after["81"] == (HAIKU, "poetry", *stored["81"][2:])
    assert summary.counts["prompt_fields_updated"] == ["category", "prompt"]
    table = Prompt._meta.db_table
    touching = [  # the reads and the updates; the rows a file adds are written whole
        query["sql"]
        for query in queries
        if f'"{table}"' in query["sql"]
        and "catalog_response" not in query["sql"]
        and query["sql"].startswith(("SELECT", "UPDATE"))
    ]
    assert {sql.split(" ", 1)[0] for sql in touching} == {"SELECT", "UPDATE"}
    for sql in touching:
        for column in ("source", "synopsis", "rating_guidelines", "privileged", "metadata"):
            assert f'"{column}"' not in sql, (column, sql)
    responses = [
        query["sql"] for query in queries if query["sql"].startswith("SELECT") and "catalog_response" in query["sql"]
    ]
    assert responses and not any('"metadata"' in sql for sql in responses)


def test_a_response_whose_text_changes_keeps_its_metadata_beside_a_row_that_gives_some(stored):
    from evalhub.catalog.models import Response

    def metadata(prompt_id: str) -> tuple[str, dict]:
        response = Response.objects.get(prompt__external_id=prompt_id, model__slug="alpha", parent__isnull=True)
        return response.text, response.metadata

    first = [
        {"prompt_id": "q1", "model": "alpha", "response": "alpha on q1", "response_metadata": {"temperature": 0.2}},
        {"prompt_id": "81", "model": "alpha", "response": "alpha on 81", "response_metadata": {"temperature": 0.7}},
    ]
    do_import_benchmark(filename="meta.jsonl", data=jsonl(first), benchmark_slug="bench")
    mixed = [
        {"prompt_id": "q1", "model": "alpha", "response": "alpha again on q1"},
        {"prompt_id": "81", "model": "alpha", "response": "alpha on 81", "response_metadata": {"seed": 1}},
    ]
    do_import_benchmark(filename="mixed.jsonl", data=jsonl(mixed), benchmark_slug="bench")
    assert metadata("q1") == ("alpha again on q1", {"temperature": 0.2})
    assert metadata("81") == ("alpha on 81", {"temperature": 0.7, "seed": 1})
    plain = [{"prompt_id": "81", "model": "alpha", "response": "alpha once more on 81"}]
    do_import_benchmark(filename="plain.jsonl", data=jsonl(plain), benchmark_slug="bench")
    assert metadata("81") == ("alpha once more on 81", {"temperature": 0.7, "seed": 1})
