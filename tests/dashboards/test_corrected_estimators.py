"""The win-rate page's corrected columns by each estimator: which one, why, the ceiling, the control."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.statistics.ppi import ppi_mean
from evalhub.core.statistics.ppi_extended import multi_judge_ppi_mean
from tests.dashboards.test_baseline_win_rates import BASELINE, JUDGE, annotations, imported  # noqa: F401
from tests.dashboards.test_corrected_win_rates import LABELLED, export, judged_and_labelled  # noqa: F401

pytestmark = pytest.mark.django_db
SECOND = "second_judge"


@pytest.fixture
def two_judges(judged_and_labelled):  # noqa: F811
    files, people = judged_and_labelled
    second = [{**r, "annotator": SECOND} for r in annotations("claude-2.1", 40, 7)]
    do_import_judgments(
        filename="second.json", data=json.dumps(second).encode(), benchmark_slug="ae", allow_new_models=True
    )
    return files, people, second


def test_a_second_judge_of_every_same_pair_is_combined_and_the_row_says_so(two_judges, tmp_path):
    files, people, second = two_judges
    y = np.array([r["preference"] - 1 for r in people])
    both = np.column_stack([[r["preference"] - 1 for r in files["claude-2.1"]], [r["preference"] - 1 for r in second]])
    by_hand = multi_judge_ppi_mean(y, both[:LABELLED], both[LABELLED:]).scaled(100)
    row = export(tmp_path, "--corrected-by", "people")["claude-2.1"]
    assert row["estimator"] == "multi-judge" and "2 judges judged every one of these pairs" in row["estimator_reason"]
    assert float(row["corrected_win_rate"]) == pytest.approx(by_hand.value, abs=1e-9)
    assert float(row["corrected_ci_high"]) == pytest.approx(by_hand.high, abs=1e-9)
    asked = export(tmp_path, "--corrected-by", "people", "--estimator", "ppi++")["claude-2.1"]
    alone = ppi_mean(y, both[:LABELLED, 0], both[LABELLED:, 0]).scaled(100)
    assert asked["estimator"] == "ppi++"
    assert float(asked["corrected_win_rate"]) == pytest.approx(alone.value, abs=1e-9)


def test_anytime_valid_intervals_keep_the_estimate_and_widen_for_looking(judged_and_labelled, tmp_path):  # noqa: F811
    fixed = export(tmp_path, "--corrected-by", "people", "--estimator", "ppi++")["claude-2.1"]
    anytime = export(tmp_path, "--corrected-by", "people", "--anytime")["claude-2.1"]
    assert anytime["anytime"] == "true" and "anytime-valid" in anytime["estimator_reason"]
    assert float(anytime["corrected_win_rate"]) == pytest.approx(float(fixed["corrected_win_rate"]), abs=1e-9)

    def width(row: dict, kind: str) -> float:
        return float(row[f"{kind}_ci_high"]) - float(row[f"{kind}_ci_low"])

    assert width(anytime, "corrected") > width(fixed, "corrected")
    assert width(anytime, "human_only") > width(fixed, "human_only")


def test_the_ceiling_is_n_over_one_minus_r2_with_ppi_plus_plus_clipped_weight(judged_and_labelled, tmp_path):  # noqa: F811
    """n / (1 − ρ²) where the least-squares slope of people's labels on the judge's lies in [0, 1]; here it
    is past 1, and PPI++ weighs the judge by 1 at most, so the ceiling is that fit's (lower than ρ's)."""
    files, people = judged_and_labelled
    y = np.array([r["preference"] - 1 for r in people])
    judge = np.array([r["preference"] - 1 for r in files["claude-2.1"][:LABELLED]])
    rho = np.corrcoef(y, judge)[0, 1]
    slope = np.cov(y, judge, ddof=0)[0, 1] / np.var(judge)
    assert slope > 1
    r2 = 1 - np.sum((y - y.mean() - (judge - judge.mean())) ** 2) / np.sum((y - y.mean()) ** 2)
    row = export(tmp_path, "--corrected-by", "people")["claude-2.1"]
    assert float(row["ceiling_n"]) == pytest.approx(LABELLED / (1 - r2))
    assert float(row["ceiling_n"]) < LABELLED / (1 - rho**2)
    assert float(row["effective_n"]) <= float(row["ceiling_n"]) * 1.05


def test_the_page_names_each_rows_estimator_and_its_control_refuses_an_unknown_one(two_judges, login, viewer):
    client = login(viewer)
    query = {"baseline": BASELINE, "judge": JUDGE}
    page = client.get("/leaderboards/baseline/", query).content.decode()
    assert "several judges (multi-judge PPI)" in page and 'name="estimator"' in page
    assert "≤ " in page, "the ceiling beside worth"
    page = client.get(
        "/leaderboards/baseline/", {**query, "estimator": "ppi++", "interval": "anytime"}
    ).content.decode()
    assert "PPI++" in page and "at every look" in page and "several judges (multi-judge PPI):" not in page
    page = client.get("/leaderboards/baseline/", {**query, "estimator": "<b>guess</b>"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "unknown estimator: chosen by evalhub" in text and "<b>guess</b>" not in text


def test_prompt_categories_are_the_strata_of_stratified_ppi(judged_and_labelled, tmp_path):  # noqa: F811
    from evalhub.catalog.models import Prompt
    from evalhub.core.statistics.ppi_extended import stratified_ppi_mean

    files, people = judged_and_labelled
    prompts = {p.text: p for p in Prompt.objects.filter(benchmark__slug="ae")}
    category = {f"Instruction {i}": "coding" if i % 2 else "writing" for i in range(40)}
    for text, prompt in prompts.items():
        prompt.category = category[text]
        prompt.save(update_fields=["category"])
    judge = [r["preference"] - 1 for r in files["claude-2.1"]]
    strata = [category[r["instruction"]] for r in files["claude-2.1"]]
    by_hand = stratified_ppi_mean(
        [r["preference"] - 1 for r in people], judge[:LABELLED], strata[:LABELLED], judge[LABELLED:], strata[LABELLED:]
    ).scaled(100)
    row = export(tmp_path, "--corrected-by", "people", "--estimator", "stratified")["claude-2.1"]
    assert row["estimator"] == "stratified" and "2 strata" in row["estimator_reason"]
    assert float(row["corrected_win_rate"]) == pytest.approx(by_hand.value, abs=1e-9)
    assert float(row["corrected_ci_low"]) == pytest.approx(by_hand.low, abs=1e-9)


def test_anytime_rows_say_when_the_asked_estimator_has_no_such_form(judged_and_labelled, tmp_path):  # noqa: F811
    row = export(tmp_path, "--corrected-by", "people", "--estimator", "stratified", "--anytime")["claude-2.1"]
    assert row["estimator"] == "ppi++"
    assert "stratified PPI++ has no anytime-valid form here: PPI++ instead" in row["estimator_reason"]


def test_labels_needed_for_anytime_intervals_are_those_of_the_sequence(judged_and_labelled, login, viewer):  # noqa: F811
    query = {"baseline": BASELINE, "judge": JUDGE, "target": "45"}
    client = login(viewer)

    def needed(page: str) -> int:
        row = next(tr for tr in page.split("<tbody>")[1].split("</tbody>")[0].split("<tr>") if ">claude-2.1<" in tr)
        return int(row.split('data-sort="')[-1].split('"')[0])  # the last column: labels for ± target

    fixed = needed(client.get("/leaderboards/baseline/", query).content.decode())
    anytime = needed(client.get("/leaderboards/baseline/", {**query, "interval": "anytime"}).content.decode())
    assert anytime > fixed
