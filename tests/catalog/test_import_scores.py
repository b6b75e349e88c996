"""Scores of single responses (people's ratings, judges' and metrics' scores) and Inspect AI eval logs,
imported all or nothing, each bad row named."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.catalog.models import Judgment, LanguageModel, Prompt

pytestmark = pytest.mark.django_db


def rows() -> list[dict]:
    out = []
    for prompt in ("p1", "p2"):
        for model, text in (("model-a", f"A answers {prompt}"), ("model-b", f"B answers {prompt}")):
            for rater, score in (("human-ann", 4), ("human-bob", 3)):
                out.append(
                    {
                        "prompt_id": prompt,
                        "prompt": f"Summarise {prompt}",
                        "model": model,
                        "response": text,
                        "rater": rater,
                        "criterion": "coherence",
                        "score": score if model == "model-a" else score - 2,
                        "scale": "1-5",
                    }
                )
    return out


def jsonl(records: list[dict]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def imported(records: list[dict], name: str = "scores.jsonl"):
    data = jsonl(records)
    parsed = check_score_file(name, data, allow_new_models=True)
    return do_import_scores(parsed=parsed, filename=name, data=data, benchmark_slug="summaries")


def test_peoples_scores_are_stored_per_rater_and_response_and_a_second_import_changes_nothing():
    summary = imported(rows())
    assert summary.counts["scores_created"] == 8 and summary.counts["raters_created"] == 2
    scores = Judgment.objects.filter(response_2__isnull=True, criterion__slug="coherence")
    assert scores.count() == 8
    ann = scores.filter(judge_model__slug="human-ann", response__model__slug="model-a").values_list("score", flat=True)
    assert sorted(ann) == [4.0, 4.0]
    assert LanguageModel.objects.get(slug="human-bob").is_human
    again = imported(rows())
    assert again.counts["scores_unchanged"] == 8 and Judgment.objects.count() == 8
    edited = rows()
    edited[0]["score"] = 5
    assert imported(edited).counts["scores_changed"] == 1
    assert Judgment.objects.count() == 8, "updated in place"


def test_exported_scores_import_again_unchanged(tmp_path):
    imported(rows())
    call_command("export_results", "--out", str(tmp_path), "--benchmark", "summaries", "--table", "scores")
    exported = (tmp_path / "summaries.scores.jsonl").read_bytes()
    assert len(exported.splitlines()) == 8
    again = do_import_scores(
        parsed=check_score_file("again.jsonl", exported),
        filename="again.jsonl",
        data=exported,
        benchmark_slug="summaries",
    )
    assert again.counts["scores_unchanged"] == 8 and again.counts["scores_created"] == 0


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_score_file_in_csv_or_parquet_imports_as_its_jsonl_does(fmt):
    """CSV and Parquet score files were refused at their header ('unknown column 'rater''): the
    benchmark schema's header check was applied to them."""
    import pandas as pd

    frame = pd.DataFrame(rows())
    data = frame.to_csv(index=False).encode() if fmt == "csv" else frame.to_parquet()
    parsed = check_score_file(f"scores.{fmt}", data, allow_new_models=True)
    summary = do_import_scores(parsed=parsed, filename=f"scores.{fmt}", data=data, benchmark_slug="summaries")
    assert summary.counts["scores_created"] == 8
    assert imported(rows()).counts["scores_unchanged"] == 8, "the same scores as the JSONL file's"


def test_a_csv_with_an_unknown_or_repeated_column_is_refused_once_at_its_header():
    cases = {
        "prompt_id,prompt,model,response,rater,score,grader": "unknown column(s) grader; a score file has prompt_id,",
        "prompt_id,model,response,rater,score,score": "duplicate column(s): score.",
    }
    for header, message in cases.items():
        data = (header + "\n" + "\n".join("p1,Q,m,text,human-ann,3,x" for _ in range(50))).encode()
        with pytest.raises(ImportRejected) as rejected:
            check_score_file("scores.csv", data, allow_new_models=True)
        assert [error.line for error in rejected.value.errors] == [1]
        assert message in rejected.value.errors[0].message


def test_a_bad_file_names_every_bad_row_and_writes_nothing():
    bad = rows()
    bad[1]["score"] = "high"
    bad[2]["score"] = 7  # outside 1-5
    bad[3] = dict(bad[0])  # the same rater, response and criterion twice
    bad[4]["rater"] = "Ann Smith"
    with pytest.raises(ImportRejected) as rejected:
        check_score_file("scores.jsonl", jsonl(bad), allow_new_models=True)
    text = "\n".join(str(error) for error in rejected.value.errors)
    assert "line 2: 'score' must be a number, not 'high'." in text
    assert "line 3: score 7 is outside its scale 1-5." in text
    assert "line 4: the same rater, response and criterion as on line 1." in text
    assert "line 5: rater 'Ann Smith' must be a slug" in text
    assert Judgment.objects.count() == 0 and Prompt.objects.count() == 0


def inspect_log(
    path,
    samples_scores: dict[str, dict] | list[tuple[str, dict]],
    model: str = "mockllm/model",
    task: str = "tiny",
    transcript: int = 0,
) -> None:
    """An Inspect eval log written with inspect-ai's own API (a list of (id, scores) may repeat an id);
    `transcript` characters of conversation a sample, as an agent's samples carry."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.model import ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    listed = list(samples_scores.items()) if isinstance(samples_scores, dict) else samples_scores
    spec = EvalSpec(
        created="2026-11-25T00:00:00+00:00",
        task=task,
        dataset=EvalDataset(name=task, samples=len(listed)),
        model=model,
        config=EvalConfig(),
    )
    samples = [
        EvalSample(
            id=sample_id,
            epoch=1,
            input=f"Question {sample_id}?",
            target="2",
            output=ModelOutput.from_content(model=model, content=f"Answer to {sample_id}"),
            scores={name: Score(value=value, explanation=f"{name} on {sample_id}") for name, value in scores.items()},
            messages=[ChatMessageUser(content=f"turn of {sample_id} " * (transcript // 12))] if transcript else [],
        )
        for sample_id, scores in listed
    ]
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))


def test_an_inspect_eval_set_becomes_scores_by_each_scorer(tmp_path):
    logs = tmp_path / "eval-set"
    logs.mkdir()
    inspect_log(logs / "first.eval", {"q1": {"match": "C", "model_graded_qa": "I"}, "q2": {"match": 0.5}})
    inspect_log(logs / "second.json", {"q3": {"model_graded_qa": {"accuracy": 1, "style": 0.25}}}, model="other/m-2")
    call_command("import_scores", str(logs), "--benchmark", "tiny", "--create-models")
    stored = {
        (j.response.prompt.external_id, j.judge_model.slug, j.criterion.slug): (j.score, j.rationale)
        for j in Judgment.objects.select_related("response__prompt", "judge_model", "criterion")
    }
    assert stored == {
        ("tiny/q1", "match", "match"): (1.0, "match on q1"),
        ("tiny/q1", "model_graded_qa", "model_graded_qa"): (0.0, "model_graded_qa on q1"),
        ("tiny/q2", "match", "match"): (0.5, "match on q2"),
        ("tiny/q3", "model_graded_qa", "model_graded_qa-accuracy"): (1.0, "model_graded_qa on q3"),
        ("tiny/q3", "model_graded_qa", "model_graded_qa-style"): (0.25, "model_graded_qa on q3"),
    }
    assert set(Judgment.objects.values_list("response__model__slug", flat=True)) == {"mockllm-model", "other-m-2"}
    assert Prompt.objects.get(external_id="tiny/q1").text == "Question q1?"


def test_an_eval_sets_tasks_that_number_their_samples_alike_import_in_one_call(tmp_path):
    logs = tmp_path / "eval-set"
    logs.mkdir()
    for task in ("arithmetic", "trivia"):  # inspect eval-set: one log per task, each numbering from 1
        inspect_log(logs / f"{task}.eval", {1: {"match": "C"}, 2: {"match": "I"}}, task=task)
    inspect_log(logs / "trivia-other.eval", {1: {"match": "I"}}, task="trivia", model="other/m-2")
    out = io.StringIO()
    call_command("import_scores", str(logs), "--benchmark", "set", "--create-models", stdout=out)
    assert set(Prompt.objects.values_list("external_id", flat=True)) == {
        "arithmetic/1",
        "arithmetic/2",
        "trivia/1",
        "trivia/2",
    }
    # The same task's sample by two models is one prompt with two responses.
    assert Judgment.objects.filter(response__prompt__external_id="trivia/1").count() == 2


def test_an_inspect_problem_names_the_file_and_the_sample_id_not_a_count_across_the_folder(tmp_path):
    logs = tmp_path / "eval-set"
    logs.mkdir()
    inspect_log(logs / "a.eval", {f"s{i}": {"match": "C"} for i in range(10)})
    inspect_log(logs / "b.json", {"x7": {"match": "maybe"}}, task="other")
    errors = io.StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_scores", str(logs), "--create-models", stderr=errors)
    assert "b.json, sample x7: scorer 'match' gave 'maybe', which is no score." in errors.getvalue()
    assert "sample 12" not in errors.getvalue()


def test_a_log_whose_samples_carry_no_scores_says_so(tmp_path):
    inspect_log(tmp_path / "log.eval", {"q1": {}, "q2": {}, "q3": {}})
    errors = io.StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_scores", str(tmp_path / "log.eval"), "--create-models", stderr=errors)
    assert "3 sample(s), none scored: nothing to import." in errors.getvalue()
    assert "no rows" not in errors.getvalue()


def test_samples_with_no_score_beside_scored_ones_are_left_out_and_counted(tmp_path):
    inspect_log(tmp_path / "log.eval", {"q1": {"match": "C"}, "q2": {}})
    out = io.StringIO()
    call_command("import_scores", str(tmp_path / "log.eval"), "--create-models", stdout=out)
    assert "1 sample(s) with no output or no score left out" in out.getvalue()
    assert "See it on pointwise judges against people (/judges/pointwise/?benchmark=imported-scores)" in out.getvalue()
    assert Judgment.objects.count() == 1


def test_a_log_with_one_sample_id_twice_is_refused_rather_than_one_replacing_the_other(tmp_path):
    inspect_log(tmp_path / "log.json", [("q1", {"match": "C"}), ("q1", {"match": "I"})])
    errors = io.StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_scores", str(tmp_path / "log.json"), "--create-models", stderr=errors)
    assert "log.json, sample q1: a second sample with this id" in errors.getvalue()
    assert Judgment.objects.count() == 0


def test_a_eval_zip_holding_a_sample_entry_twice_is_refused(tmp_path):
    import zipfile

    inspect_log(tmp_path / "log.eval", {"q1": {"match": "C"}})
    with zipfile.ZipFile(tmp_path / "log.eval") as source:
        entries = [(name, source.read(name)) for name in source.namelist()]
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(tmp_path / "twice.eval", "w") as target:
        for name, data in entries + [(n, d) for n, d in entries if n.startswith("samples/")]:
            target.writestr(name, data)
    errors = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_scores", str(tmp_path / "twice.eval"), "--create-models", stderr=errors)
    assert "twice.eval: the log holds samples/q1_epoch_1.json twice" in errors.getvalue()


INSPECT_VALUES = [
    "C",
    "I",
    "P",
    "N",
    "c",
    " C",
    "C ",
    "yes",
    "Yes",
    " yes",
    "no ",
    "TRUE",
    "false",
    "maybe",
    "1",
    " 5 ",
    "0.25",
    "1e3",
    "-2",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "",
    1,
    0,
    0.5,
    True,
    False,
    float("nan"),
    float("inf"),
    [1],
    None,
]


@pytest.mark.parametrize("value", INSPECT_VALUES, ids=repr)
def test_a_value_is_taken_exactly_when_inspects_own_reading_is_a_finite_number_it_meant(value, caplog):
    """Against inspect-ai's value_to_float: it warns when it falls back to 0, and passes NaN and
    infinities through; evalhub takes a value exactly when neither happens."""
    import math

    from inspect_ai.scorer import value_to_float

    from evalhub.catalog.inspect_logs import readable

    caplog.clear()
    read = value_to_float()(value)
    fell_back = any("Unable to convert" in record.getMessage() for record in caplog.records)
    assert readable(value) == (not fell_back and math.isfinite(read))


def test_an_inspect_log_with_a_score_that_is_no_number_names_the_sample_and_writes_nothing(tmp_path):
    inspect_log(tmp_path / "log.eval", {"q1": {"match": "C"}, "q2": {"match": "maybe"}, "q3": {"match": "c"}})
    errors = io.StringIO()
    with pytest.raises(CommandError, match="2 problem"):  # Inspect itself would read both as 0
        call_command("import_scores", str(tmp_path / "log.eval"), "--create-models", stderr=errors)
    assert "log.eval, sample q2: scorer 'match' gave 'maybe', which is no score." in errors.getvalue()
    assert Judgment.objects.count() == 0 and Prompt.objects.count() == 0
    broken = tmp_path / "broken.json"
    broken.write_text('{"eval": "not a log"}')
    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_scores", str(broken), "--create-models")


def test_without_inspect_ai_the_command_says_what_to_install(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    (tmp_path / "log.eval").write_bytes(b"PK")
    monkeypatch.setattr(builtins, "__import__", no_inspect)
    with pytest.raises(CommandError, match=r"pip install -r requirements.txt"):
        call_command("import_scores", str(tmp_path / "log.eval"))


def test_the_pointwise_report_reads_the_stored_scores_as_it_reads_the_same_csv(tmp_path):
    from evalhub.core.statistics.pointwise import Score, meta_evaluation

    records = rows()
    judge = [
        {**r, "rater": "judge-x", "rater_kind": "model", "score": r["score"] + 1}
        for r in records
        if r["rater"] == "human-ann"
    ]
    imported(records + judge)
    out = tmp_path / "report.json"
    call_command("pointwise_report", "--benchmark", "summaries", "--out", str(out), "--resamples", "50")
    report = json.loads(out.read_text())
    by_hand = meta_evaluation(
        [
            Score(
                r["prompt_id"],
                r["model"],
                r["rater"],
                r["rater"].startswith("human"),
                float(r["score"]),
                r["criterion"],
            )
            for r in records + judge
        ],
        resamples=50,
    )
    assert report == json.loads(json.dumps(by_hand))
    assert "judge-x" in report["criteria"]["coherence"]["judges"]
    with pytest.raises(CommandError, match="no benchmark 'nothing'"):
        call_command("pointwise_report", "--benchmark", "nothing", "--out", str(out))


def test_the_judge_lab_shows_each_judge_against_peoples_scores_as_the_command_reports_it(
    tmp_path, login, viewer, client, django_capture_on_commit_callbacks
):
    from evalhub.judgelab.pointwise import pointwise_report

    records = rows()
    judge = [
        {**r, "rater": "judge-x", "rater_kind": "model", "score": 6 - r["score"]}
        for r in records
        if r["rater"] == "human-ann"
    ]
    empty = login(viewer).get("/judges/pointwise/").content.decode()
    assert 'class="empty"' in empty and "import_scores" in empty
    imported(records + judge)
    page = login(viewer).get("/judges/pointwise/").content.decode()
    entry = pointwise_report("summaries")["criteria"]["coherence"]
    found = entry["judges"]["judge-x"]
    assert "judge-x" in page and 'id="criterion-coherence"' in page
    assert f"{found['item_spearman']['value']:.3f}" in page
    assert f"{entry['people']} people scored {entry['responses_scored_by_people']} responses" in page
    assert login(viewer).get("/judges/pointwise/?benchmark=nothing").status_code == 404
    edited = [
        {**r, "score": r["score"] - 1} if r["rater"] == "judge-x" and r["model"] == "model-a" else r
        for r in records + judge
    ]
    with django_capture_on_commit_callbacks(execute=True):
        imported(edited)  # scores edited in place: no new row, and the cached report must not stay as it was
    assert (
        pointwise_report("summaries")["criteria"]["coherence"]["judges"]["judge-x"]["score_distribution"]
        != found["score_distribution"]
    )
    assert client.logout() is None and client.get("/judges/pointwise/").status_code == 302


def test_a_rater_evalhub_holds_as_a_person_cannot_come_back_as_a_model():
    imported(rows())
    again = rows()
    again[2]["rater_kind"] = "model"  # human-ann, a person since the first import
    with pytest.raises(ImportRejected) as rejected:
        check_score_file("scores.jsonl", jsonl(again), allow_new_models=True)
    assert [str(e) for e in rejected.value.errors] == [
        "line 3: rater 'human-ann' is a person in evalhub; rater_kind says otherwise."
    ]


def scored(criterion: str, scale: str) -> bytes:
    return jsonl([{**row, "criterion": criterion, "scale": scale} for row in rows()])


def import_scored(data: bytes) -> None:
    parsed = check_score_file("s.jsonl", data, allow_new_models=True)
    do_import_scores(parsed=parsed, filename="s.jsonl", data=data, benchmark_slug="summ")


def test_a_criterion_a_score_file_creates_takes_its_levels_from_the_files_scale():
    """It was created with no levels, and the rating screen had nothing to rate on."""
    from evalhub.catalog.models import Criterion

    import_scored(scored("correctness", "1-5"))
    assert Criterion.objects.get(slug="correctness").levels == {
        "1": "1 of 5: the lowest",
        "2": "2 of 5",
        "3": "3 of 5",
        "4": "4 of 5",
        "5": "5 of 5: the highest",
    }
    import_scored(jsonl([{**row, "criterion": "accuracy", "scale": "0-1", "score": 1} for row in rows()]))
    assert Criterion.objects.get(slug="accuracy").levels == {}, "0-1 is no Likert scale to rate on"


def test_a_criterion_without_levels_gets_them_from_a_later_file_and_keeps_levels_it_has():
    from evalhub.catalog.models import Criterion

    import_scored(jsonl([{k: v for k, v in row.items() if k != "scale"} | {"criterion": "clarity"} for row in rows()]))
    assert Criterion.objects.get(slug="clarity").levels == {}
    import_scored(scored("clarity", "1-7"))
    assert len(Criterion.objects.get(slug="clarity").levels) == 7, "an import adds what was missing"
    Criterion.objects.filter(slug="clarity").update(levels={"1": "poor", "2": "fine", "3": "good"})
    import_scored(scored("clarity", "1-5"))
    assert Criterion.objects.get(slug="clarity").levels == {"1": "poor", "2": "fine", "3": "good"}, "never replaced"


def test_scores_name_which_of_a_models_responses_by_its_variant():
    """Hint tiers give one model several responses to a prompt; a score file could not say which it scored
    ("unknown column response_variant") and matched only the variant-less one."""
    from evalhub.catalog.models import Response

    tiers = [
        {**row, "response": f"{row['response']} (tier {tier})", "response_variant": f"answer:{tier}h"}
        for row in rows()
        for tier in (0, 1)
    ]
    import_scored(jsonl(tiers))
    tiered = Response.objects.filter(variant__in=["answer:0h", "answer:1h"])
    assert tiered.count() == 8, "2 prompts x 2 models x 2 tiers"
    scores = Judgment.objects.filter(response__in=tiered)
    assert scores.count() == 16, "two raters each"
    assert scores.filter(response__variant="answer:1h", response__text__endswith="(tier 1)").count() == 8
    import_scored(jsonl(tiers))
    assert Judgment.objects.count() == 16, "the same file again changes nothing"


def test_the_pointwise_page_exports_what_it_shows_and_plots_each_judges_item_rho(login, viewer):
    import csv as csv_module

    from evalhub.judgelab.pointwise import pointwise_report

    records = rows()
    judge = [{**r, "rater": "judge-x", "rater_kind": "model"} for r in records if r["rater"] == "human-ann"]
    imported(records + judge)
    client = login(viewer)
    page = client.get("/judges/pointwise/").content.decode()
    assert "Item-level Spearman ρ per judge" in page and "<svg" in page
    report = pointwise_report("summaries")
    exported = client.get("/judges/pointwise.json", {"benchmark": "summaries"}).json()
    tests = {
        (name, judge): entry.pop("alt_test")  # the export adds each judge's alternative annotator test at epsilon
        for name, criterion in exported["criteria"].items()
        for judge, entry in criterion["judges"].items()
    }
    assert exported == json.loads(json.dumps(report))
    assert all(test["epsilon"] == 0.2 for test in tests.values())
    body = client.get("/judges/pointwise.csv", {"benchmark": "summaries"}).content.decode()
    (row,) = list(csv_module.DictReader(io.StringIO(body)))
    found = report["criteria"]["coherence"]["judges"]["judge-x"]
    assert (row["criterion"], row["judge"]) == ("coherence", "judge-x")
    assert float(row["item_spearman"]) == found["item_spearman"]["value"]
    assert int(row["system_spearman_n"]) == found["system_spearman"]["n"]


def test_a_dhp_runs_scores_of_the_original_texts_are_a_pointwise_judge_beside_peoples():
    from evalhub.catalog.models import Response
    from evalhub.jobs.models import Job
    from evalhub.judgelab.pointwise import dhp_rater, pointwise_report, scored_benchmarks
    from evalhub.scoring.models import DiscernmentRun, JudgeScore

    records = rows()
    imported(records)
    run = DiscernmentRun.objects.create(
        job=Job.objects.create(kind="discernment", title="DHP"),
        benchmark=Prompt.objects.first().benchmark,
        family="dhp",
        task="dhp-summarization",
        perturbations=[],
        metrics=["coherence"],
        judges=["heuristic"],
    )
    for response in Response.objects.all():
        for repeat, score in enumerate((2.0, 4.0) if response.model.slug == "model-a" else (1.0, 2.0)):
            JudgeScore.objects.create(
                run=run, judge="heuristic", response=response, metric="coherence", repeat=repeat, score=score
            )
        child = Response.objects.create(
            prompt=response.prompt, model=response.model, text=response.text + "!", parent=response, perturbation="typo"
        )
        JudgeScore.objects.create(run=run, judge="heuristic", response=child, metric="coherence", score=5.0)
    assert scored_benchmarks() == ["summaries"]
    judges = pointwise_report("summaries")["criteria"]["coherence"]["judges"]
    dhp = judges[dhp_rater("heuristic", run.pk)]
    assert dhp["score_distribution"] == {"3.0": 2, "1.5": 2}, "repeats averaged, perturbed copies left out"


def test_a_score_file_imported_again_is_merged_in_place_and_on_postgresql_by_the_server():
    """Scores added in the file's order, changed ones updated in place, the rest unchanged. On PostgreSQL
    no stored score comes back to the client: reading ten million back cost a re-import more CPU than
    the first import, and twice its wall time."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    imported(rows())
    before = dict(Judgment.objects.values_list("pk", "score"))
    edited = rows()
    edited[0]["score"], edited[1]["rationale"] = 5, "reads well"
    edited += [{**edited[2], "rater": "human-cy", "score": 2}, {**edited[4], "rater": "human-cy", "score": 1}]
    with CaptureQueriesContext(connection) as queries:
        summary = imported(edited)
    counts = summary.counts
    assert (counts["scores_created"], counts["scores_changed"], counts["scores_unchanged"]) == (2, 2, 6)
    after = Judgment.objects.order_by("pk")
    assert set(before) < set(after.values_list("pk", flat=True)), "updated in place: the rows keep their keys"
    new = after.filter(judge_model__slug="human-cy")
    assert list(new.values_list("score", flat=True)) == [2.0, 1.0], "new scores in the file's order"
    assert sorted(after.exclude(rationale="").values_list("rationale", flat=True)) == ["reads well"]
    ann = after.get(
        judge_model__slug=edited[0]["rater"], response__text=edited[0]["response"], response__prompt__external_id="p1"
    )
    assert ann.score == 5.0 and ann.pk in before
    if connection.vendor == "postgresql":  # no stored score was read back to the client
        read = [q["sql"] for q in queries if '"catalog_judgment"."score"' in q["sql"]]  # a SELECT, or a cursor's
        assert not [sql for sql in read if not sql.startswith(("UPDATE", "INSERT"))]


def test_a_score_file_leaves_a_stored_score_of_another_prompt_variant_as_it_is():
    """A score's natural key is (criterion, rater, response, prompt variant); the file's are the original
    prompt's. A stored score of the same rater under another variant was taken for the file's and
    overwritten (and, merged by the server, counted once per variant)."""
    imported(rows())
    stored = Judgment.objects.get(
        judge_model__slug="human-ann", response__text="A answers p1", criterion__slug="coherence"
    )
    variant = Judgment.objects.create(
        criterion=stored.criterion,
        judge_model=stored.judge_model,
        response=stored.response,
        prompt_variant="shortened",
        score=1.0,
        rationale="under the shortened criterion",
    )
    edited = rows()
    edited[0]["score"] = 5
    summary = imported(edited)
    assert (summary.counts["scores_changed"], summary.counts["scores_created"]) == (1, 0)
    assert summary.counts["scores_unchanged"] == 7
    variant.refresh_from_db()
    assert (variant.score, variant.rationale) == (1.0, "under the shortened criterion")
    stored.refresh_from_db()
    assert stored.score == 5.0
