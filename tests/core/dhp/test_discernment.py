"""DHP statistics against hand-computed values and direct scipy calls."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import wilcoxon

from evalhub.core.dhp.discernment import (
    P_FLOOR,
    discernment,
    harmonic_p,
    perturbation_result,
    summary,
    wilcoxon_greater,
    wilcoxon_greater_many,
)
from evalhub.core.dhp.report import COLUMNS, ReportError, build_report, read_scores


def test_the_plain_harmonic_mean_p_is_m_over_the_sum_of_reciprocals():
    assert harmonic_p([0.2, 0.2, 0.2, 0.2]) == pytest.approx(0.2)
    assert harmonic_p([0.01, 0.1]) == pytest.approx(2 / (100 + 10))


def test_the_paper_literal_form_is_offered_for_comparison_and_is_m_times_smaller():
    assert harmonic_p([0.2, 0.2, 0.2, 0.2], paper_literal=True) == pytest.approx(0.05)


def test_expert_weights_change_p_as_the_formula_says():
    ps = [0.01, 0.1, 0.5, 0.9]
    assert harmonic_p(ps, [0.5, 0.5, 0.0, 0.0]) == pytest.approx(1 / (0.5 / 0.01 + 0.5 / 0.1))
    assert harmonic_p(ps, [0.25] * 4) == pytest.approx(harmonic_p(ps))
    with pytest.raises(ValueError, match="sum to 1"):
        harmonic_p(ps, [0.5, 0.5, 0.5, 0.0])


def test_discernment_is_the_log_base_005_with_a_finite_floor():
    assert discernment(0.05) == pytest.approx(1)
    assert discernment(0.0025) == pytest.approx(2)
    assert discernment(1.0) == 0
    assert discernment(0.0) == pytest.approx(math.log(P_FLOOR) / math.log(0.05))
    assert math.isfinite(discernment(0.0))


@pytest.mark.parametrize(("n", "seed"), [(8, 0), (30, 1), (100, 2), (100, 3)])
def test_wilcoxon_matches_a_direct_scipy_call(n, seed):
    rng = np.random.default_rng(seed)
    original = rng.integers(1, 6, n).astype(float)
    perturbed = np.clip(original - rng.integers(-1, 3, n), 1, 5)
    expected = wilcoxon(original, perturbed, zero_method="wilcox", alternative="greater", method="auto").pvalue
    assert wilcoxon_greater(original, perturbed) == pytest.approx(expected)


def test_vectorised_rows_equal_one_call_per_row():
    rng = np.random.default_rng(7)
    original = rng.integers(1, 6, (20, 50)).astype(float)
    perturbed = np.clip(original - rng.integers(-1, 2, (20, 50)), 1, 5)
    perturbed[3] = original[3]  # one row without any difference
    many = wilcoxon_greater_many(original, perturbed)
    for row in range(20):
        if row == 3:
            assert many[row] == 1.0, "all-zero differences mean no evidence: p = 1"
        else:
            expected = wilcoxon(original[row], perturbed[row], zero_method="wilcox", alternative="greater").pvalue
            assert many[row] == pytest.approx(expected)


def test_level_balanced_average_counts_each_level_equally():
    def result(level, d):
        p = 0.05**d
        return perturbation_result(level, {"m": p, "n": p}, None, n=50)

    results = {"c1": result("C", 1), "c2": result("C", 3), "w1": result("W", 4)}
    s = summary(results)
    assert s["D_avg"] == pytest.approx((2 + 4) / 2)
    assert s["D_min"] == pytest.approx(1)


def scores_csv(judges: dict, items: int = 100, seed: int = 0) -> str:
    """judge → behaviour(original) -> perturbed; 3 levels × 2 perturbations × 2 metrics."""
    rng = random.Random(seed)
    lines = ["judge,item_id,perturbation,level,metric,original_score,perturbed_score"]
    for judge, behave in judges.items():
        for perturbation, level in [("typos", "C"), ("deletions", "C"), ("entities", "W"), ("reorder", "S")]:
            for metric in ("fluency", "coherence"):
                for item in range(items):
                    original = rng.randint(3, 5)
                    lines.append(f"{judge},{item},{perturbation},{level},{metric},{original},{behave(original, rng)}")
    return "\n".join(lines) + "\n"


def test_a_perfect_judge_has_d_above_1_everywhere_and_a_random_one_near_0():
    text = scores_csv({"perfect": lambda o, rng: o - 1, "random": lambda o, rng: rng.randint(3, 5)})
    report = build_report(read_scores(text))["judges"]
    assert all(p["D"] > 1 and p["D_ew"] > 1 for p in report["perfect"]["perturbations"].values())
    assert report["perfect"]["summary"]["D_min"] > 1
    assert report["random"]["summary"]["D_avg"] < 0.6
    assert report["random"]["uniform_weights_for"] == ["deletions", "entities", "reorder", "typos"]


def test_the_report_uses_expert_weights_where_given():
    text = scores_csv({"j": lambda o, rng: o - (rng.random() < 0.3)})
    groups = read_scores(text)
    weights = {"typos": {"fluency": 1.0, "coherence": 0.0}}
    entry = build_report(groups, weights)["judges"]["j"]
    typos = entry["perturbations"]["typos"]
    assert typos["p_ew"] == pytest.approx(typos["p_by_metric"]["fluency"])
    assert "typos" not in entry["uniform_weights_for"]


def test_weights_are_restricted_to_the_scored_metrics_and_renormalised_and_the_report_says_so():
    """One rule for the job and dhp_report: an unscored metric's weight is left out, the rest is
    renormalised to 1 (a survey export that sums to 0.999 is accepted, not refused)."""
    groups = read_scores(scores_csv({"j": lambda o, rng: o - (rng.random() < 0.3)}))
    given = {"typos": {"fluency": 0.6, "coherence": 0.2, "relevance": 0.199}}  # relevance not scored; sum 0.999
    report = build_report(groups, given)
    typos = report["judges"]["j"]["perturbations"]["typos"]
    ps = typos["p_by_metric"]
    expected = 1 / (0.75 / ps["fluency"] + 0.25 / ps["coherence"])  # 0.6 and 0.2 renormalised: 3/4, 1/4
    assert typos["p_ew"] == pytest.approx(expected, rel=1e-12)
    note = report["notes"]["weights_fitted"]["typos"]
    assert "unscored metrics left out: relevance" in note
    assert "renormalised from a sum of 0.8 to 1" in note
    exact = build_report(groups, {"typos": {"fluency": 0.75, "coherence": 0.25}})
    assert exact["judges"]["j"]["perturbations"]["typos"]["p_ew"] == pytest.approx(expected, rel=1e-12)
    assert "typos" not in exact["notes"]["weights_fitted"]
    only_unscored = build_report(groups, {"typos": {"relevance": 1.0}})
    assert "typos" in only_unscored["judges"]["j"]["uniform_weights_for"]
    assert only_unscored["notes"]["weights_fitted"]["typos"].startswith("none of its weighted metrics")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("j,1,typos,C,fluency,four,3", "line 3: scores must be numbers"),
        ("j,1,typos,X,fluency,4,3", "line 3: unknown level 'X'"),
        ("j,,typos,C,fluency,4,3", "line 3: empty item_id"),
        ("j,1,typos,W,coherence,4,3", "line 3: perturbation 'typos' has level 'W' here but 'C' on line 2"),
        ("j,0,typos,C,fluency,4,3", "line 3: duplicate row"),
    ],
)
def test_bad_rows_are_named(line, problem):
    text = "judge,item_id,perturbation,level,metric,original_score,perturbed_score\nj,0,typos,C,fluency,4,3\n" + line
    with pytest.raises(ReportError, match=problem):
        read_scores(text)


def test_a_missing_column_is_named():
    with pytest.raises(ReportError, match="missing column\\(s\\) perturbed_score"):
        read_scores("judge,item_id,perturbation,level,metric,original_score\nj,1,t,C,f,4\n")


def test_a_row_after_a_multi_line_cell_is_named_by_its_physical_line():
    text = (
        "judge,item_id,perturbation,level,metric,original_score,perturbed_score\n"
        'j,"item\nwith a break",typos,C,fluency,4,3\n'
        "j,2,typos,Q,fluency,4,3\n"
    )
    with pytest.raises(ReportError, match="line 4: unknown level 'Q'"):
        read_scores(text)


def test_the_d_avg_bootstrap_equals_a_plain_loop_of_scipy_calls_on_the_same_draws():
    import math

    import numpy as np
    from scipy import stats

    from evalhub.core.dhp.report import add_pair, bootstrap_d_avg

    rng = np.random.default_rng(2)
    original = rng.integers(3, 6, size=30).astype(float)
    perturbed = original - rng.integers(0, 2, size=30)
    groups: dict = {}
    for i, pair in enumerate(zip(original, perturbed, strict=True)):
        add_pair(groups, ("judge", "typos"), "C", "fluency", f"{i:02d}", pair)  # ids in the order of the rows
    ours = bootstrap_d_avg(groups, resamples=120, seed=9)["judge"]

    draws = np.random.default_rng(9)
    ds = []
    for _ in range(120):
        index = draws.integers(0, 30, size=30)
        o, p = original[index], perturbed[index]
        pv = stats.wilcoxon(o, p, alternative="greater").pvalue if np.any(o != p) else 1.0
        ds.append(math.log(max(pv, 1e-300)) / math.log(0.05))
    low, high = np.quantile(ds, [0.025, 0.975])
    assert (ours["D_avg_low"], ours["D_avg_high"]) == pytest.approx((low, high))
    assert ours == bootstrap_d_avg(groups, resamples=120, seed=9)["judge"], "seeded"


def test_a_judge_that_never_changes_its_score_has_a_zero_interval():
    from evalhub.core.dhp.report import add_pair, bootstrap_d_avg

    groups: dict = {}
    for i in range(20):
        add_pair(groups, ("same", "typos"), "C", "fluency", str(i), (4.0, 4.0))
    result = bootstrap_d_avg(groups, resamples=50)["same"]
    assert (result["D_avg_low"], result["D_avg_high"]) == (0.0, 0.0)


@pytest.mark.parametrize("n", [3, 6, 9, 13, 14, 20, 40, 50, 60])
def test_every_row_gets_the_p_value_of_its_own_scipy_call_even_in_a_mixed_batch(n):
    """Rows with and without ties or zeros, side by side: scipy would pick one method for the
    whole array; each row must get what scipy gives for that row alone."""
    import numpy as np
    from scipy import stats

    from evalhub.core.dhp.discernment import wilcoxon_greater_many

    rng = np.random.default_rng(n)
    tied_o = rng.integers(1, 6, size=(6, n)).astype(float)
    tied_p = tied_o - rng.integers(-1, 3, size=(6, n))
    distinct_o = rng.normal(3, 1, size=(3, n))
    distinct_p = distinct_o - rng.normal(0.4, 1, size=(3, n))
    original, perturbed = np.vstack([tied_o, distinct_o]), np.vstack([tied_p, distinct_p])
    ours = wilcoxon_greater_many(original, perturbed)
    for row in range(original.shape[0]):
        o, p = original[row], perturbed[row]
        expected = stats.wilcoxon(o, p, alternative="greater").pvalue if np.any(o != p) else 1.0
        assert ours[row] == pytest.approx(expected, rel=1e-9, abs=1e-12), row


def test_the_d_avg_bootstrap_draws_texts_by_item_id_whatever_the_row_order():
    """Two metrics of the same texts: shuffling the CSV's rows, or a text missing in one metric,
    must not pair one text's fluency with another's coherence."""
    import random

    from evalhub.core.dhp.report import bootstrap_d_avg

    rng = random.Random(5)
    rows = []
    for item in range(25):
        drop = rng.random() < 0.5  # a text the judge's perturbation hurt: both metrics drop together
        for metric in ("fluency", "coherence"):
            rows.append(f"j,{item},typos,C,{metric},4,{3 if drop else 4}")
    header = ",".join(COLUMNS)
    ordered = read_scores("\n".join([header, *rows]))
    shuffled_rows = rows[:]
    rng.shuffle(shuffled_rows)
    shuffled = read_scores("\n".join([header, *shuffled_rows]))
    assert bootstrap_d_avg(ordered, resamples=80, seed=3) == bootstrap_d_avg(shuffled, resamples=80, seed=3)

    # A text scored on one metric only: the others keep their own texts' pairs.
    missing = read_scores("\n".join([header, *[r for r in rows if r != "j,0,typos,C,coherence,4,3"]]))
    assert bootstrap_d_avg(missing, resamples=80, seed=3)["j"]["resamples"] == 80
    intervals = bootstrap_d_avg(missing, resamples=80, seed=3)["j"]
    assert intervals["D_avg_low"] <= intervals["D_avg_high"]


def test_the_expert_weighted_summary_is_taken_from_the_weighted_d_values_by_hand():
    """D_avg^EW and D_min^EW come from D^EW, level-balanced like the plain ones (hand-computed), so
    reading them from the plain D values fails this test."""
    from evalhub.core.dhp.discernment import PerturbationResult, summary

    results = {
        "typos": PerturbationResult("C", {}, 0.01, 0.2, D=1.5, D_ew=0.5, n=30),
        "deletions": PerturbationResult("C", {}, 0.01, 0.01, D=2.5, D_ew=1.5, n=30),
        "reorder": PerturbationResult("S", {}, 0.001, 0.3, D=3.0, D_ew=0.4, n=30),
    }
    got = summary(results)
    assert got["D_avg"] == pytest.approx(((1.5 + 2.5) / 2 + 3.0) / 2)
    assert got["D_min"] == 1.5
    assert got["D_avg_ew"] == pytest.approx(((0.5 + 1.5) / 2 + 0.4) / 2)
    assert got["D_min_ew"] == 0.4


def test_d_min_is_taken_over_perturbations_tested_on_enough_texts_and_each_shows_its_n():
    from evalhub.core.dhp.discernment import MIN_ITEMS, describe_summary

    # A perfect judge, but "reorder" was tried on 4 texts only: its p cannot go below 2^-4 (D < 1).
    lines = ["judge,item_id,perturbation,level,metric,original_score,perturbed_score"]
    for perturbation, level, items in (("typos", "C", 30), ("entities", "W", 30), ("reorder", "S", 4)):
        for item in range(items):
            lines.append(f"j,{item},{perturbation},{level},fluency,{4 + item % 2},{3 + item % 2 - (item % 3 == 0)}")
    report = build_report(read_scores("\n".join(lines) + "\n"))["judges"]["j"]
    assert report["perturbations"]["reorder"]["n"] == 4
    assert report["perturbations"]["typos"]["n"] == 30
    assert report["perturbations"]["reorder"]["D"] < 1
    assert report["summary"]["D_min"] == pytest.approx(
        min(report["perturbations"][p]["D"] for p in ("typos", "entities"))
    )
    assert report["summary"]["D_min"] > 1
    assert report["summary"]["D_min_over"] == 2
    assert report["summary"]["min_items"] == MIN_ITEMS
    few = build_report(
        read_scores("\n".join(line for line in lines if ",reorder," in line or line.startswith("judge")) + "\n")
    )
    assert few["judges"]["j"]["summary"]["D_min"] is None
    assert "no perturbation with 10+ texts" in describe_summary(few["judges"]["j"]["summary"])


def interleaved(text: str) -> str:
    """The same rows with the judges' lines shuffled together (groups meet out of order)."""
    header, *rows = text.strip().split("\n")
    random.Random(1).shuffle(rows)
    return "\n".join([header, *rows]) + "\n"


@pytest.mark.parametrize(
    "variant",
    [
        lambda t: t,
        interleaved,
        lambda t: t.replace(",typos,", " , typos ,"),  # padded cells are stripped
        lambda t: "".join(f"{c[2]},{c[1]},{c[0]},{','.join(c[3:])}\n" for c in (line.split(",") for line in t.split())),
        lambda t: t + "\n\n",  # blank lines at the end
        lambda t: t.replace(",5,", ",5.0,"),
    ],
)
def test_the_vectorised_read_gives_exactly_what_the_line_by_line_read_gives(variant):
    """A clean file is read in one pandas pass (dhp_report spent 90 % of its time reading); the groups,
    their order and every pair must be those of the checked reader."""
    from evalhub.core.dhp.report import _read_checked, _read_clean

    text = variant(scores_csv({"a": lambda o, rng: o - (rng.random() < 0.4), "b": lambda o, rng: o}, items=30))
    fast, checked = _read_clean(text), _read_checked(text)
    assert fast is not None, "a clean file takes the fast path"
    assert fast == checked
    assert list(fast) == list(checked)
    assert all(list(fast[key]["metrics"]) == list(checked[key]["metrics"]) for key in fast)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace(",typos,C,fluency,3,", ",typos,C,fluency,three,", 1), "scores must be numbers"),
        (lambda t: t + "a,0,typos,C,fluency,4,3\n", "duplicate row"),
        (lambda t: t + "a,999,typos,W,fluency,4,3\n", "has level 'W' here but 'C'"),
        (lambda t: t + ",1000,typos,C,fluency,4,3\n", "empty judge"),
        (lambda t: t + "a,1001,typos,C,fluency,4\n", "6 cells, but the header has 7"),
    ],
)
def test_a_file_the_fast_read_refuses_is_read_line_by_line_and_its_bad_line_named(change, message):
    text = change(scores_csv({"a": lambda o, rng: o - 1}, items=30))
    with pytest.raises(ReportError, match=message):
        read_scores(text)
