"""Labels and scores as studies publish them: a response named by its model and prompt (and variant)
without repeating a text the benchmark holds, a prompt one model answered twice (`response_variant`),
and an empty answer that people judged kept as the empty answer it is (issue 81)."""

from __future__ import annotations

import json

import pytest

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.catalog.models import Judgment, Prompt, Response

pytestmark = pytest.mark.django_db


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


BENCHMARK = [
    {"prompt_id": "q1", "prompt": "Is 221 prime?", "model": "gpt-4o", "response": "No: 13 x 17."},
    {"prompt_id": "q1", "model": "llama-3", "response": "Yes."},
    {"prompt_id": "q2", "prompt": "Name a prime above 100.", "model": "gpt-4o", "response": "101"},
    {"prompt_id": "q2", "model": "llama-3", "response": "100"},
]


def stored_benchmark() -> None:
    do_import_benchmark(filename="b.jsonl", data=jsonl(BENCHMARK), benchmark_slug="study", allow_new_models=True)


def label(prompt_id: str, judge: str, winner: str, **more) -> dict:
    return {"prompt_id": prompt_id, "model_a": "gpt-4o", "model_b": "llama-3", "judge": judge, "winner": winner, **more}


def pairs() -> set[tuple[str, str, str, str, int]]:
    return {
        (j.response.prompt.external_id, j.judge_model.slug, j.response.text, j.response_2.text, j.verdict)
        for j in Judgment.objects.select_related("response__prompt", "response_2", "judge_model")
    }


def test_a_labels_file_names_the_benchmarks_responses_without_repeating_their_text():
    stored_benchmark()
    rows = [label("q1", "human-ana", "a"), label("q2", "human-ana", "b"), label("q1", "judge-x", "a")]
    summary = do_import_judgments(filename="l.jsonl", data=jsonl(rows), benchmark_slug="study")
    assert summary.counts["responses_created"] == 0
    assert Response.objects.count() == 4, "the stored responses, none made again"
    assert pairs() == {
        ("q1", "human-ana", "No: 13 x 17.", "Yes.", 1),
        ("q2", "human-ana", "101", "100", 2),
        ("q1", "judge-x", "No: 13 x 17.", "Yes.", 1),
    }


def test_a_response_named_by_reference_that_the_benchmark_lacks_is_refused_with_its_line():
    stored_benchmark()
    rows = [label("q1", "human-ana", "a"), label("q3", "human-ana", "a", prompt="New?")]
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="l.jsonl", data=jsonl(rows), benchmark_slug="study")
    messages = [str(error) for error in rejected.value.errors]
    assert messages == [
        "line 2: response_a is not given, and the benchmark holds no response of 'gpt-4o' to prompt 'q3': "
        "give its text.",
        "line 2: response_b is not given, and the benchmark holds no response of 'llama-3' to prompt 'q3': "
        "give its text.",
    ]
    assert not Judgment.objects.exists() and not Prompt.objects.filter(external_id="q3").exists()


def test_a_response_given_on_one_row_may_be_named_by_reference_on_the_others():
    rows = [
        label("q1", "human-ana", "a", prompt="Is 221 prime?"),
        label("q1", "human-bo", "a", response_a="No: 13 x 17.", response_b="Yes."),
        label("q1", "judge-x", "b"),
    ]
    do_import_judgments(filename="l.jsonl", data=jsonl(rows), benchmark_slug="new-study", allow_new_models=True)
    assert {row[1:] for row in pairs()} == {
        ("human-ana", "No: 13 x 17.", "Yes.", 1),
        ("human-bo", "No: 13 x 17.", "Yes.", 1),
        ("judge-x", "No: 13 x 17.", "Yes.", 2),
    }


def test_one_prompt_answered_twice_by_a_model_keeps_both_answers_apart_by_variant():
    """A study's two items share a prompt that one model answered differently in each: one prompt, two
    responses of that model, and each label on its own pair (one prompt per item split the prompt's
    resampling unit in two)."""
    rows = [
        label("q1", "human-ana", "a", prompt="Is 221 prime?", response_a="No: 13 x 17.", response_b="Yes."),
        label("q1", "human-ana", "b", response_variant_a="item-2", response_a="No.", response_b="Yes.")
        | {"model_b": "mistral"},
        label("q1", "human-bo", "b", response_variant_a="item-2") | {"model_b": "mistral"},
    ]
    do_import_judgments(filename="l.jsonl", data=jsonl(rows), benchmark_slug="study", allow_new_models=True)
    assert Prompt.objects.count() == 1
    assert sorted(Response.objects.filter(model__slug="gpt-4o").values_list("variant", "text")) == [
        ("", "No: 13 x 17."),
        ("item-2", "No."),
    ]
    labels = {
        (j.judge_model.slug, j.response.variant, j.response.text, j.response_2.model.slug)
        for j in Judgment.objects.select_related("response", "response_2__model", "judge_model")
    }
    assert labels == {
        ("human-ana", "", "No: 13 x 17.", "llama-3"),
        ("human-ana", "item-2", "No.", "mistral"),
        ("human-bo", "item-2", "No.", "mistral"),
    }


def test_a_variant_named_with_different_text_is_the_same_repeat_error_as_any_response():
    rows = [
        label("q1", "human-ana", "a", prompt="Q?", response_a="A1", response_b="B", response_variant="v1"),
        label("q1", "human-bo", "a", response_a="A2", response_b="B", response_variant="v1"),
    ]
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="l.jsonl", data=jsonl(rows), benchmark_slug="study", allow_new_models=True)
    assert [str(error) for error in rejected.value.errors] == [
        "line 2: response_a of 'gpt-4o' differs from the one on line 1."
    ]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_empty_answer_that_people_judged_is_kept_as_an_empty_answer(fmt):
    if fmt == "jsonl":
        data = jsonl([label("q1", "human-ana", "b", prompt="Say hi.", response_a="", response_b="Hi!")])
    else:
        data = b"prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
        data += b"q1,Say hi.,gpt-4o,llama-3,,Hi!,human-ana,b\r\n"
    do_import_judgments(filename=f"l.{fmt}", data=data, benchmark_slug="study", allow_new_models=True)
    assert pairs() == {("q1", "human-ana", "", "Hi!", 2)}


def test_a_score_file_names_stored_responses_by_reference_and_keeps_an_empty_answer():
    """An empty answer is kept where the benchmark had none; it never blanks one the benchmark holds."""
    stored_benchmark()
    data = (
        b"prompt_id,prompt,model,response,rater,score\r\nq1,,gpt-4o,,human-ana,1\r\nq3,Say hi.,gpt-4o,,human-ana,1\r\n"
    )
    empty = check_score_file("s.csv", data, benchmark_slug="study")
    do_import_scores(parsed=empty, filename="s.csv", data=data, benchmark_slug="study")
    by_reference = jsonl([{"prompt_id": "q2", "model": "llama-3", "rater": "human-ana", "score": 2}])
    parsed = check_score_file("s.jsonl", by_reference, benchmark_slug="study")
    do_import_scores(parsed=parsed, filename="s.jsonl", data=by_reference, benchmark_slug="study")
    scores = {
        (j.response.prompt.external_id, j.response.variant, j.response.text, j.score)
        for j in Judgment.objects.filter(response_2__isnull=True).select_related("response__prompt")
    }
    # The empty cell names the stored answer (an import never blanks one) or, for a new one, is kept.
    assert scores == {("q1", "", "No: 13 x 17.", 1.0), ("q3", "", "", 1.0), ("q2", "", "100", 2.0)}
    missing = jsonl([{"prompt_id": "q9", "model": "llama-3", "rater": "human-ana", "score": 2}])
    with pytest.raises(ImportRejected) as rejected:
        check_score_file("s.jsonl", missing, benchmark_slug="study")
    assert [str(error) for error in rejected.value.errors] == [
        "line 1: the response is not given, and the benchmark holds no response of 'llama-3' to prompt 'q9': "
        "give its text."
    ]


def test_scores_of_a_models_second_answer_export_with_its_variant_and_import_again():
    from evalhub.catalog.exports import score_rows

    rows = [
        {"prompt_id": "q1", "prompt": "Q?", "model": "m1", "response": "one", "rater": "human-a", "score": 1},
        {"prompt_id": "q1", "model": "m1", "response": "uno", "response_variant": "v2", "rater": "human-a", "score": 3},
    ]
    parsed = check_score_file("s.jsonl", jsonl(rows), allow_new_models=True)
    summary = do_import_scores(parsed=parsed, filename="s.jsonl", data=jsonl(rows), benchmark_slug="study")
    exported = list(score_rows(summary.benchmark))
    assert [(row["response_variant"], row["response"], row["score"]) for row in exported] == [
        ("", "one", 1.0),
        ("v2", "uno", 3.0),
    ]
    again = check_score_file("again.jsonl", jsonl(exported), benchmark_slug="study")
    summary = do_import_scores(parsed=again, filename="again.jsonl", data=jsonl(exported), benchmark_slug="study")
    assert summary.counts["scores_unchanged"] == 2


def test_the_preview_says_which_responses_left_out_the_benchmark_holds_and_writes_nothing(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.conftest import make_user

    stored_benchmark()
    judgments = Judgment.objects.count()
    client.force_login(make_user("ida", "admin"))
    rows = [label("q1", "human-ana", "a"), label("q9", "human-ana", "b"), label("q2", "human-ana", "maybe")]
    page = client.post(
        "/judges/import/",
        {"file": SimpleUploadedFile("l.jsonl", jsonl(rows)), "layout": "auto", "benchmark": "study", "preview": "1"},
    )
    html = page.content.decode()
    table = html[html.index('id="import-preview"') :]
    cells = [row.split("</tr>")[0] for row in table.split("<tr>")[2:]]  # after the header row
    assert cells[0].count("(not given: the benchmark&#x27;s)") == 2, "q1's responses are stored"
    assert cells[1].count("(not given; the benchmark holds none)") == 2, "q9 is not in the benchmark"
    assert cells[2].count("(not given)") == 2 and "must be a, b, tie" in cells[2], "a row with its own problem"
    assert Judgment.objects.count() == judgments and Response.objects.count() == 4
