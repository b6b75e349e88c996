"""A published judge study imported from its own files, with no converter (issue 81): annotators as side-by-
side columns of the items file, each judge's verdicts and reasons in a file of its own joined on an item
id, a prompt that one model answered differently in two items, an empty answer people judged, the study's
own model names; a study.json says how to read them. The judge lab's figures equal a hand computation
(scikit-learn's κ), and every problem is named by its own file and line."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment, LanguageModel, Prompt, Response
from evalhub.judgelab.report import judge_lab_report

pytestmark = pytest.mark.django_db

ANNOTATORS = ("annotator_1", "annotator_2", "annotator_3")
CODES = {"a": "1", "b": "2", "tie": "0"}  # the study's codes for its verdicts
JUDGE_WORDS = {"a": "model_a", "b": "model_b", "tie": "tie"}  # the GPT-4 file's words for them
ITEMS = 40
MAPPING = {
    "items": "data/items.csv",
    "item_id": "id",
    "columns": {
        "prompt_id": "question_id",
        "prompt": "question",
        "model_a": "model_a",
        "model_b": "model_b",
        "response_a": "answer_a",
        "response_b": "answer_b",
        "response_variant": "id",  # one model answered a prompt differently in two items
    },
    "verdicts": {"1": "a", "2": "b", "0": "tie"},
    "judges": [
        *({"judge": name, "kind": "human", "winner": name} for name in ANNOTATORS),
        {
            "judge": "GPT-4 (0613)",
            "kind": "model",
            "file": "judges/gpt4.jsonl",
            "item_id": "item",
            "winner": "choice",
            "rationale": "explanation",
            "verdicts": {"model_a": "a", "model_b": "b", "tie": "tie"},
        },
        {"judge": "Claude 3", "kind": "model", "file": "judges/claude.csv", "winner": "verdict", "rationale": "reason"},
    ],
}


def study(seed: int = 0, *, mapping: dict | None = None, extra_gpt4: list[dict] | None = None):
    """The study's zip and what it says: per item the three people's verdicts and each judge's."""
    rng = np.random.default_rng(seed)
    items = io.StringIO()
    writer = csv.writer(items, lineterminator="\r\n")
    writer.writerow(["id", "question_id", "question", "model_a", "model_b", "answer_a", "answer_b", *ANNOTATORS])
    gpt4, claude = [], io.StringIO()
    claude_writer = csv.writer(claude, lineterminator="\r\n")
    claude_writer.writerow(["id", "verdict", "reason"])
    said: dict[str, dict[str, str]] = {name: {} for name in (*ANNOTATORS, "GPT-4-0613", "Claude-3")}
    for k in range(ITEMS):
        item = f"item-{k}"
        question = k // 2  # two items per question: 20 prompts, not 40
        pair = ("GPT-4o", "Llama 3 (8B)") if k % 2 == 0 else ("GPT-4o", "Mistral 7B")
        answer_a = "" if k == 5 else f"GPT-4o's answer in item {k}"  # an empty answer, which people judged
        truth = ("a", "b", "tie")[rng.integers(3)]
        people = [truth, truth, ("a", "b", "tie")[rng.integers(3)]]  # a clear majority on every item
        rng.shuffle(people)
        for name, verdict in zip(ANNOTATORS, people, strict=True):
            said[name][item] = verdict
        writer.writerow(
            [item, f"Q{question}", f"Question {question}?", *pair, answer_a, f"{pair[1]}'s answer {k}"]
            + [CODES[verdict] for verdict in people]
        )
        gpt4_verdict = truth if rng.uniform() < 0.8 else ("a", "b", "tie")[rng.integers(3)]
        said["GPT-4-0613"][item] = gpt4_verdict
        gpt4.append({"item": item, "choice": JUDGE_WORDS[gpt4_verdict], "explanation": f"GPT-4 on {item}"})
        if k % 10 != 9:  # Claude skipped every tenth item
            claude_verdict = truth if rng.uniform() < 0.6 else ("a", "b", "tie")[rng.integers(3)]
            said["Claude-3"][item] = claude_verdict
            claude_writer.writerow([item, CODES[claude_verdict], f"Claude on {item}"])
    gpt4 = list(reversed(gpt4)) + (extra_gpt4 or [])  # a joined file in its own order
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("study.json", json.dumps(mapping or MAPPING))
        zipped.writestr("data/items.csv", items.getvalue())
        zipped.writestr("judges/gpt4.jsonl", "".join(json.dumps(row) + "\n" for row in gpt4))
        zipped.writestr("judges/claude.csv", claude.getvalue())
    return archive.getvalue(), said


def majority(said: dict[str, dict[str, str]], item: str) -> str:
    (top, _), *_ = Counter(said[name][item] for name in ANNOTATORS).most_common()
    return top


@pytest.mark.parametrize("at_a_time", [7, 1000])
def test_a_study_in_its_published_files_imports_and_its_figures_equal_a_hand_computation(monkeypatch, at_a_time):
    from evalhub.core.files import study as study_files

    monkeypatch.setattr(study_files, "JOINED_AT_A_TIME", at_a_time)  # items and joined rows looked up in batches
    data, said = study()
    summary = do_import_judgments(filename="study.zip", data=data, benchmark_slug="study", allow_new_models=True)
    labelled = sum(len(verdicts) for verdicts in said.values())
    assert summary.counts["judgments_created"] == labelled
    assert Prompt.objects.filter(benchmark__slug="study").count() == ITEMS // 2, "one prompt per question"
    assert Response.objects.filter(model__slug="GPT-4o").count() == ITEMS, "GPT-4o's answer in each item, apart"
    assert Response.objects.get(model__slug="GPT-4o", variant="item-5").text == "", "the empty answer, kept"
    names = dict(LanguageModel.objects.values_list("slug", "display_name"))
    assert names["Llama-3-8B"] == "Llama 3 (8B)" and names["GPT-4-0613"] == "GPT-4 (0613)"
    reasons = dict(Judgment.objects.filter(judge_model__slug="Claude-3").values_list("response__variant", "rationale"))
    assert reasons["item-3"] == "Claude on item-3" and len(reasons) == len(said["Claude-3"])

    report = judge_lab_report()
    for slug in ("GPT-4-0613", "Claude-3"):
        row = next(judge for judge in report.judges if judge.judge.id == slug)
        hand = np.mean([verdict == majority(said, item) for item, verdict in said[slug].items()])
        assert row.agreement.value == pytest.approx(hand, abs=1e-12), slug
        assert row.n == len(said[slug])
    assert [(pair.first, pair.second) for pair in report.people.pairwise] == [
        ("annotator_1", "annotator_2"),
        ("annotator_1", "annotator_3"),
        ("annotator_2", "annotator_3"),
    ]
    for pair in report.people.pairwise:
        first, second = pair.first, pair.second
        items = sorted(said[first])
        expected = cohen_kappa_score([said[first][i] for i in items], [said[second][i] for i in items])
        assert (pair.pairs, pair.kappa) == (ITEMS, pytest.approx(expected, abs=1e-12))
    distribution = Counter(Judgment.objects.filter(judge_model__is_human=True).values_list("verdict", flat=True))
    assert distribution == Counter(
        {"a": 1, "b": 2, "tie": 0}[said[name][item]] for name in ANNOTATORS for item in said[name]
    )


def test_the_same_study_again_changes_nothing():
    data, _ = study()
    do_import_judgments(filename="study.zip", data=data, benchmark_slug="study", allow_new_models=True)
    again = do_import_judgments(filename="study.zip", data=data, benchmark_slug="study")
    assert (again.counts["judgments_created"], again.counts["judgments_replaced"]) == (0, 0)


@pytest.mark.parametrize("at_a_time", [3, 1000])
def test_problems_in_a_study_are_named_by_their_own_file_and_line_and_nothing_is_written(monkeypatch, at_a_time):
    from evalhub.core.files import study as study_files

    monkeypatch.setattr(study_files, "JOINED_AT_A_TIME", at_a_time)
    data, _ = study(extra_gpt4=[{"item": "item-99", "choice": "model_a"}, {"item": "item-1", "choice": "model_b"}])
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="study.zip", data=data, benchmark_slug="study", allow_new_models=True)
    messages = [str(error) for error in rejected.value.errors]
    assert messages == [
        "judges/gpt4.jsonl line 42: item 'item-1' again (first on line 39).",
        "judges/gpt4.jsonl line 41: item 'item-99' is not in data/items.csv.",
    ]
    assert not Judgment.objects.exists()


def test_a_verdict_the_mapping_does_not_read_is_named_with_its_file_line_and_judge():
    mapping = {**MAPPING, "judges": [{**MAPPING["judges"][3], "verdicts": {"model_a": "a", "tie": "tie"}}]}
    data, said = study(mapping=mapping)
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="study.zip", data=data, benchmark_slug="study", allow_new_models=True)
    # In the items file's order; the GPT-4 file lists item k on line 40 - k.
    unread = [ITEMS - int(item.split("-")[1]) for item, v in said["GPT-4-0613"].items() if v == "b"]
    assert [str(error) for error in rejected.value.errors] == [
        f"judges/gpt4.jsonl line {line} (judge GPT-4 (0613)): verdict 'model_b' is none of a, b, tie, "
        "tie (bothbad), unreadable: say what it means in study.json's verdicts."
        for line in unread
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"items": "items.csv"}, "study.json names 'items.csv', which the zip does not hold."),
        ({"columns": {"answer": "answer_a"}}, "study.json: unknown column(s) answer; map prompt_id, prompt"),
        ({"verdicts": {"1": "first"}}, "study.json: verdict '1' reads as 'first', which is none of a, b, tie"),
        ({"judges": []}, "study.json names no judge."),
        ({"columns": {**MAPPING["columns"], "response_a": "answer"}}, "data/items.csv has no column(s) answer."),
        (
            {"judges": [MAPPING["judges"][3], {**MAPPING["judges"][3], "judge": "again", "item_id": "id"}]},
            "study.json: the judges reading 'judges/gpt4.jsonl' name its item id column differently.",
        ),
    ],
)
def test_a_mapping_that_cannot_be_followed_is_refused_before_any_row(change, message):
    data, _ = study(mapping={**MAPPING, **change})
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="study.zip", data=data, benchmark_slug="study", allow_new_models=True)
    assert [str(error) for error in rejected.value.errors][0].startswith(message)


def test_the_command_reads_a_study_folder_and_the_upload_page_its_zip(tmp_path, client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    from tests.conftest import make_user

    data, said = study()
    folder = tmp_path / "study"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)
    call_command("import_judgments", str(folder), "--benchmark", "from-folder", "--create-models", stdout=io.StringIO())
    labelled = sum(len(verdicts) for verdicts in said.values())
    assert Judgment.objects.filter(response__prompt__benchmark__slug="from-folder").count() == labelled

    client.force_login(make_user("ida", "admin"))
    upload = SimpleUploadedFile("study.zip", data)
    answer = client.post("/judges/import/", {"file": upload, "layout": "auto", "benchmark": "uploaded"})
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert Judgment.objects.filter(response__prompt__benchmark__slug="uploaded").count() == labelled


def test_the_upload_page_previews_the_first_rows_as_read_and_writes_nothing(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.conftest import make_user

    client.force_login(make_user("ida", "admin"))
    data, _ = study()
    page = client.post(
        "/judges/import/",
        {"file": SimpleUploadedFile("study.zip", data), "layout": "auto", "benchmark": "s", "preview": "1"},
    )
    html = page.content.decode()
    assert page.status_code == 200 and 'id="import-preview"' in html
    preview = html[html.index('id="import-preview"') :]
    assert "data/items.csv line 2 (judge annotator_1)" in preview and "Llama-3-8B (Llama 3 (8B))" in preview
    assert "judges/gpt4.jsonl line 40 (judge GPT-4 (0613))" in preview and "GPT-4 on item-0" in preview
    assert not Judgment.objects.exists() and not Prompt.objects.exists()

    generic = b"prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
    generic += b"q1,Q?,GPT-4o,llama-3,,B,human-ana,a\r\nq2,Q2?,m1,m2,A,B,human-ana,first\r\n"
    page = client.post(
        "/judges/import/",
        {"file": SimpleUploadedFile("l.csv", generic), "layout": "auto", "benchmark": "s", "preview": "1"},
    )
    preview = page.content.decode()
    preview = preview[preview.index('id="import-preview"') :]
    assert "(empty answer)" in preview and "(generic)" in preview
    assert "&#x27;winner&#x27; must be a, b, tie" in preview, "a row's own problem, shown beside it"
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("at_a_time", [3, 1000])
def test_an_item_the_items_file_repeats_is_named_whatever_batch_it_falls_in(monkeypatch, at_a_time):
    from evalhub.core.files import study as study_files

    monkeypatch.setattr(study_files, "JOINED_AT_A_TIME", at_a_time)
    data, _ = study()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    lines = files["data/items.csv"].decode().splitlines(keepends=True)
    # Item 39 again beside its first (one batch of three), item 1 again two batches after its first.
    files["data/items.csv"] = "".join([*lines, lines[-1], lines[2]]).encode()
    repacked = io.BytesIO()
    with zipfile.ZipFile(repacked, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="s.zip", data=repacked.getvalue(), benchmark_slug="s", allow_new_models=True)
    assert [str(error) for error in rejected.value.errors] == [
        "data/items.csv line 42: item 'item-39' again (first on line 41).",
        "data/items.csv line 43: item 'item-1' again (first on line 3).",
    ]
