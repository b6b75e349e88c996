"""Win rates against a baseline from imported judgments: AlpacaEval's columns from the page, the exports
and `export_winrates`, equal to evalhub.core.statistics.win_rates on the same preferences."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.statistics.win_rates import Comparison, win_rates

pytestmark = pytest.mark.django_db

BASELINE, JUDGE = "gpt4_1106_preview", "weighted_alpaca_eval_gpt4_turbo"


def annotations(model: str, prompts: int, seed: int) -> list[dict]:
    """AlpacaEval records as its annotations.json has them: the baseline always output_1."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(prompts):
        preference = float(rng.choice([1.0, 2.0, 1.5, rng.uniform(1, 2)], p=[0.2, 0.2, 0.05, 0.55]))
        out.append(
            {
                "instruction": f"Instruction {i}",
                "output_1": "b" * (50 + 7 * i),  # the baseline's answer to a prompt is the same in every file
                "output_2": "m" * int(rng.integers(50, 900)),
                "generator_1": BASELINE,
                "generator_2": model,
                "annotator": JUDGE,
                "preference": preference,
            }
        )
    return out


@pytest.fixture
def imported():
    files = {"claude-2.1": annotations("claude-2.1", 40, 1), "phi-2": annotations("phi-2", 40, 2)}
    for name, records in files.items():
        do_import_judgments(
            filename=f"{name}.json", data=json.dumps(records).encode(), benchmark_slug="ae", allow_new_models=True
        )
    return files


def expected(files: dict[str, list[dict]], difficulty: dict[str, float] | None = None) -> dict[str, object]:
    """The core's rows for the same preferences, keyed by evalhub's slugs."""
    comparisons = [
        Comparison(
            r["generator_2"].replace(".", "-"),
            r["instruction"],
            r["preference"] - 1,
            len(r["output_2"]),
            len(r["output_1"]),
            None if difficulty is None else difficulty[r["instruction"]],
        )
        for records in files.values()
        for r in records
    ]
    return {row.model: row for row in win_rates(comparisons)}


def test_export_winrates_writes_alpaca_evals_columns_named_as_the_file_named_the_models(imported, tmp_path):
    out = tmp_path / "leaderboard.csv"
    call_command("export_winrates", "--benchmark", "ae", "--judge", JUDGE, "--baseline", BASELINE, "--out", str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert list(rows[0])[:11] == [
        "name",
        "win_rate",
        "standard_error",
        "n_wins",
        "n_wins_base",
        "n_draws",
        "n_total",
        "discrete_win_rate",
        "avg_length",
        "length_controlled_winrate",
        "lc_standard_error",
    ]
    want = expected(imported)
    assert {row["name"] for row in rows} == {"claude-2.1", "phi-2"}  # the slug is claude-2-1
    for row in rows:
        model = "claude-2-1" if row["name"] == "claude-2.1" else row["name"]
        for column in ("win_rate", "standard_error", "discrete_win_rate", "length_controlled_winrate"):
            assert float(row[column]) == pytest.approx(getattr(want[model], column), abs=1e-9), column
        assert int(row["n_total"]) == 40


def export(tmp_path, judge: str = JUDGE, baseline: str = BASELINE) -> dict[str, dict[str, str]]:
    """export_winrates' CSV rows by the model's name."""
    out = tmp_path / "winrates.csv"
    call_command("export_winrates", "--benchmark", "ae", "--judge", judge, "--baseline", baseline, "--out", str(out))
    return {row["name"]: row for row in csv.DictReader(io.StringIO(out.read_text()))}


def test_the_win_rate_is_the_mean_of_the_judges_probability_not_the_share_of_verdicts(imported, tmp_path):
    records = imported["claude-2.1"]  # mostly fractional preferences
    by_hand = 100 * sum(r["preference"] - 1 for r in records) / len(records)
    row = export(tmp_path)["claude-2.1"]
    assert float(row["win_rate"]) == pytest.approx(by_hand, abs=1e-9)
    assert float(row["win_rate"]) != pytest.approx(float(row["discrete_win_rate"]))


def test_export_winrates_says_what_is_missing(imported, tmp_path):
    with pytest.raises(CommandError, match="no such model"):
        export(tmp_path, judge="nobody")
    with pytest.raises(CommandError, match="judged no pair"):
        export(tmp_path, baseline=JUDGE)


def test_the_page_shows_every_model_against_the_baseline_with_its_n(client, imported, viewer, outsider, login):
    assert login(outsider).get("/leaderboards/baseline/").status_code == 403
    page = login(viewer).get("/leaderboards/baseline/").content.decode()
    want = expected(imported)
    assert f"{want['phi-2'].win_rate:.2f}" in page
    assert f"± {want['phi-2'].standard_error:.2f}" in page
    assert "claude-2.1" in page
    exported = login(viewer).get(f"/leaderboards/baseline.csv?benchmark=ae&judge={JUDGE}&baseline={BASELINE}")
    assert exported.status_code == 200
    assert exported.content.decode().startswith("name,win_rate,standard_error")


def test_the_page_without_judgments_says_how_to_import_them(client, viewer, login):
    page = login(viewer).get("/leaderboards/baseline/").content.decode()
    assert "No judge has judged a pair yet" in page
    assert login(viewer).get("/leaderboards/baseline.csv").status_code == 400


def test_the_pages_select_names_benchmark_judge_and_criterion_in_one_value(client, imported, viewer, login):
    page = login(viewer).get(f"/leaderboards/baseline/?run=ae|{JUDGE}|overall&baseline=phi-2").content.decode()
    assert "onchange" not in page  # the content security policy allows no inline handler
    assert '<option value="phi-2" selected>' in page
    assert "judged no pair" not in page  # gpt4_1106_preview against phi-2: one row


def test_a_prompts_instruction_difficulty_gives_alpaca_evals_own_form_of_length_control(imported):
    from evalhub.catalog.models import Prompt
    from evalhub.dashboards.baseline_win_rates import Selection
    from evalhub.dashboards.win_rate_boards import board

    difficulty = {}
    for prompt in Prompt.objects.all():
        difficulty[prompt.text] = (len(prompt.text) % 7) / 3 - 1
        prompt.metadata = {"instruction_difficulty": difficulty[prompt.text]}
        prompt.save()
    rows = {row["model"]: row for row in board(Selection("ae", JUDGE, BASELINE))}
    want = expected(imported, difficulty)
    for model, row in rows.items():
        assert row["lc_note"] == ""  # AlpacaEval's form: nothing stood in
        assert row["length_controlled_winrate"] == pytest.approx(want[model].length_controlled_winrate, abs=1e-9)


def test_a_reimported_benchmark_with_new_difficulties_is_seen_by_the_cached_board(
    imported, django_capture_on_commit_callbacks
):
    from evalhub.catalog.actions.benchmarks import do_import_benchmark
    from evalhub.catalog.models import Prompt
    from evalhub.dashboards.baseline_win_rates import Selection
    from evalhub.dashboards.win_rate_boards import board

    before = board(Selection("ae", JUDGE, BASELINE))
    assert before[0]["lc_note"] != ""
    rows = [
        {"prompt_id": p.external_id, "prompt": p.text, "metadata": {"instruction_difficulty": i % 3 - 1}}
        for i, p in enumerate(Prompt.objects.filter(benchmark__slug="ae"))
    ]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    with django_capture_on_commit_callbacks(execute=True):  # the counts' version rises after commit
        do_import_benchmark(filename="difficulty.jsonl", data=data, benchmark_slug="ae")
    assert board(Selection("ae", JUDGE, BASELINE))[0]["lc_note"] == ""


def test_responses_reimported_with_other_texts_are_seen_by_the_cached_board(
    imported, django_capture_on_commit_callbacks
):
    """The length-controlled win rates read each response's length: an edited response keeps its row
    (no new id), so the boards' fingerprint did not move and the cached board kept the old lengths."""
    from evalhub.catalog.actions.benchmarks import do_import_benchmark
    from evalhub.catalog.models import Prompt
    from evalhub.dashboards.baseline_win_rates import Selection
    from evalhub.dashboards.win_rate_boards import board

    before = {row["model"]: row for row in board(Selection("ae", JUDGE, BASELINE))}
    rows = [
        {"prompt_id": p.external_id, "prompt": p.text, "model": "phi-2", "response": "m" * (2000 + i)}
        for i, p in enumerate(Prompt.objects.filter(benchmark__slug="ae"))
    ]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    with django_capture_on_commit_callbacks(execute=True):
        summary = do_import_benchmark(filename="longer.jsonl", data=data, benchmark_slug="ae")
    assert summary.counts["responses_updated"] == 40
    after = {row["model"]: row for row in board(Selection("ae", JUDGE, BASELINE))}
    assert after["phi-2"]["avg_length"] == pytest.approx(2000 + 39 / 2, abs=1)  # AlpacaEval gives a whole number
    assert after["phi-2"]["avg_length"] != before["phi-2"]["avg_length"]
    assert after["claude-2-1"]["avg_length"] == before["claude-2-1"]["avg_length"]


def test_choices_are_read_in_the_same_number_of_queries_for_any_number_of_benchmarks(
    imported, django_assert_num_queries
):
    from evalhub.dashboards.baseline_win_rates import choices

    with django_assert_num_queries(4):  # a model in either position, for imported files and for judge runs
        one = choices()
    do_import_judgments(
        filename="more.json",
        data=json.dumps(annotations("phi-2", 12, 3)).encode(),
        benchmark_slug="ae-other",
        allow_new_models=True,
    )
    with django_assert_num_queries(4):
        two = choices()
    assert [c["benchmark"] for c in one] == ["ae"]
    assert [(c["benchmark"], c["pairs"], c["baseline"]) for c in two] == [
        ("ae", 80, BASELINE),
        ("ae-other", 12, BASELINE),
    ]
    assert two[1]["models"] == [BASELINE, "phi-2"], "each group lists its own models"


def test_a_benchmark_nobody_judged_is_a_clear_404_not_an_empty_sentence(client, imported, viewer, login):
    response = login(viewer).get(f"/leaderboards/baseline/?benchmark=nope&judge={JUDGE}")
    assert response.status_code == 404
    assert "No judge has judged pairs on that benchmark" in response.content.decode()
    assert login(viewer).get("/leaderboards/baseline.csv?benchmark=nope").status_code == 400


def test_the_page_opens_on_the_model_judge_with_the_most_pairs_not_a_person(client, viewer, login):
    """It opened on the alphabetically first (benchmark, judge): a person's labels ("human-ana") before
    the LLM judge whose win rates the page is for."""
    from evalhub.catalog.actions.judgments import do_import_judgments

    labels = (
        "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
        + "".join(f"q{n},Q{n}?,base,cand,b{n},c{n},human-ana,a\r\n" for n in range(3))
        + "".join(f"q{n},,base,cand,b{n},c{n},gpt-judge,b\r\n" for n in range(3))
        + "".join(f"q{n},,base,cand,b{n},c{n},aaa-judge,b\r\n" for n in range(2))
    )
    do_import_judgments(filename="l.csv", data=labels.encode(), benchmark_slug="alpha", allow_new_models=True)
    page = login(viewer).get("/leaderboards/baseline/")
    assert page.context["selection"].judge == "gpt-judge"
    html = page.content.decode()
    models, people = html.split('<optgroup label="People')  # people are offered apart, after the model judges
    assert "aaa-judge" in models and "gpt-judge" in models and "human-ana" not in models
    assert "human-ana" in people.split("</optgroup>")[0]


def nearly_constant_lengths_file(seed: int) -> bytes:
    """3 models x 12 prompts, a model judge and a person on every pair of models (72 rows), each model's
    answers the same length on every prompt but one: length control is not identifiable."""
    rng = np.random.default_rng(seed)
    lines = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,judge_kind,winner"]
    lengths = {"m1": 80, "m2": 100, "m3": 120}
    for i in range(12):
        text = {m: m[-1] * (length + (i == 0 and m != "m1")) for m, length in lengths.items()}
        for a, b in (("m1", "m2"), ("m1", "m3"), ("m2", "m3")):
            for judge, kind in (("judge-x", "model"), ("pat", "human")):
                winner = rng.choice(["a", "a", "b", "tie"])
                lines.append(f"q{i},Question {i}?,{a},{b},{text[a]},{text[b]},{judge},{kind},{winner}")
    return "\n".join(lines).encode()


def test_lengths_that_do_not_vary_get_the_raw_win_rates_and_the_reason_not_a_500(client, viewer, login):
    do_import_judgments(
        filename="labels.csv", data=nearly_constant_lengths_file(4), benchmark_slug="b", allow_new_models=True
    )
    viewing = login(viewer)
    for baseline in ("m1", "m2", "m3"):
        page = viewing.get(f"/leaderboards/baseline/?run=b|judge-x|overall&baseline={baseline}")
        assert page.status_code == 200, baseline
        assert "length control not identifiable" in page.content.decode()
        exported = viewing.get(f"/leaderboards/baseline.csv?benchmark=b&judge=judge-x&baseline={baseline}")
        assert exported.status_code == 200 and "not identifiable" in exported.content.decode()
    for model in ("m1", "m2", "m3", "judge-x"):
        assert viewing.get(f"/models/{model}/").status_code == 200, model


def test_evalhubs_own_judge_runs_are_a_judge_of_the_win_rate_page_with_their_source_named(
    client, arena, viewer, login, tmp_path
):
    """A single-judge run on debates of alpha against beta: each answer, in either order, is a preference
    for alpha (its token probability where the run asked for one), averaged per prompt, as for a file."""
    from evalhub.debates.models import JudgeVerdict

    first, second, tie = 1, 2, 0
    debates = [arena.debate("alpha", "beta", first, swapped=n % 2 == 1) for n in range(12)]
    shown = {d: [[first, second, tie][n % 3]] for n, d in enumerate(debates)}
    other = {d: [second if n % 4 else first] for n, d in enumerate(debates)}
    run = arena.judge("openai:judge-x", shown, reversed_verdicts=other)
    # One answer with the judge's own probabilities, read where the run asked for them.
    run.probabilities = True
    run.save(update_fields=["probabilities"])
    JudgeVerdict.objects.filter(judge_run=run, debate=debates[0], reversed_order=False).update(
        probabilities={"first": 0.7, "second": 0.2, "tie": 0.1}
    )

    def for_alpha(debate, reversed_order: bool, verdict: int) -> float:
        order = ["alpha", "beta"] if debate.swapped == reversed_order else ["beta", "alpha"]
        if debate is debates[0] and not reversed_order:
            return 0.75 if order[0] == "alpha" else 0.25  # first 0.7 + tie 0.1 / 2 for the one shown first
        return {first: float(order[0] == "alpha"), second: float(order[1] == "alpha"), tie: 0.5}[verdict]

    expected = np.mean([(for_alpha(d, False, shown[d][0]) + for_alpha(d, True, other[d][0])) / 2 for d in debates])
    viewing = login(viewer)
    page = viewing.get("/leaderboards/baseline/?run=bench|run:openai:judge-x|helpfulness&baseline=beta")
    assert page.status_code == 200
    text = page.content.decode()
    assert f"{100 * expected:.2f}" in text
    assert "run:openai:judge-x · helpfulness (12 pairs, judge runs)" in text
    out = tmp_path / "w.csv"
    call_command(
        "export_winrates", "--benchmark", "bench", "--judge", "run:openai:judge-x", "--baseline", "beta",
        "--criterion", "helpfulness", "--out", str(out),
    )  # fmt: skip
    row = next(csv.DictReader(io.StringIO(out.read_text())))
    assert float(row["win_rate"]) == pytest.approx(100 * expected)


def test_a_judge_runs_yescieval_rubric_verdicts_are_a_judge_of_their_own_on_the_win_rate_page(arena):
    """The same spec judging under a rubric is not pooled with its plain verdicts: it has its own name."""
    from evalhub.dashboards.judge_run_preferences import run_judge_counts, runs_against_baseline
    from evalhub.debates.models import JudgeRun

    debates = [arena.debate("alpha", "beta", 1) for _ in range(4)]
    arena.judge("openai:judge-x", {d: [1] for d in debates})  # always the first shown: alpha
    rubric = arena.judge("openai:judge-x", {d: [2] for d in debates})  # always beta
    JudgeRun.objects.filter(pk=rubric.pk).update(scale="rubric", rubric="method_coverage")
    named = "run:openai:judge-x · yescieval:method_coverage"
    assert {key[1] for key, *_ in run_judge_counts()} == {"run:openai:judge-x", named}
    plain = runs_against_baseline("run:openai:judge-x", "bench", "helpfulness", "beta")
    under_rubric = runs_against_baseline(named, "bench", "helpfulness", "beta")
    assert set(plain) == {"run:openai:judge-x"} and set(under_rubric) == {named}
    assert {p for rows in plain["run:openai:judge-x"].values() for p, *_ in rows} == {1.0}
    assert {p for rows in under_rubric[named].values() for p, *_ in rows} == {0.0}
