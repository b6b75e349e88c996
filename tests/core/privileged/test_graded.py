"""Graded preferences (privileged-information paper, Figure 1, Table 4, Figure 8): the parser, the
prompt, and the figures against scipy and `statistics` on the same numbers."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy.stats import spearmanr

from evalhub.core.privileged.graded import (
    SeedSpread,
    each_person,
    graded_prompt,
    mean_grades,
    parse_grade,
    people_average,
    verdict_of_grade,
)
from evalhub.core.prompts import sections as ps
from evalhub.core.statistics.rank_correlation import MIN_ITEMS, spearman


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("Both fine. My final verdict is: [[A >> B]]", 2),
        ("[[A > B]]", 1),
        ("My final verdict is tie: [[A = B]].", 0),
        ("[[B > A]]", -1),
        ("**[[B>>A]]**", -2),
        ("First I thought [[A >> B]], but on reflection [[B > A]]", -1),  # the last one counts
        ("[[A > A]]", None),
        ("Response A is better.", None),
        ("[[A >>> B]]", None),
    ],
)
def test_figure_8s_five_verdicts_are_read_as_grades_from_as_side(answer, grade):
    assert parse_grade(answer) == grade


def test_a_grades_sign_is_its_verdict():
    assert [verdict_of_grade(g) for g in (2, 0.4, 0, -0.1, -3, None)] == [1, 1, 0, 2, 2, None]


def test_the_prompt_has_the_reference_paragraph_only_with_a_reference_and_marks_what_is_privileged():
    plain = graded_prompt("Q?", "first", "second")[0]["content"]
    assert "[[A >> B]]" in plain and "treat it as an example" not in plain
    sections = ps.parse_sections(plain)
    assert (sections["Response A"], sections["Response B"], sections[ps.QUESTION]) == ("first", "second", "Q?")
    shown = graded_prompt(
        "Q?", "first", "second", privileged={ps.REFERENCE_ANSWER: "42", "Rating guidelines": ""}, privileged_note="note"
    )[0]["content"]
    assert "treat it as an example of what an excellent response" in shown
    assert ps.parse_sections(shown)[f"{ps.REFERENCE_ANSWER} (note)"] == "42"
    assert "Rating guidelines" not in shown, "an empty source is not shown"


def test_people_are_averaged_per_pair_and_each_person_is_read_against_the_others():
    rng = np.random.default_rng(3)
    quality = rng.normal(size=30)
    people = {
        f"p{i}": {pair: float(np.clip(round(q + rng.normal(scale=0.8)), -3, 3)) for pair, q in enumerate(quality)}
        for i in range(4)
    }
    del people["p3"][0], people["p3"][1]  # a person who skipped two pairs
    average = people_average(people)
    assert average[0] == statistics.fmean(people[f"p{i}"][0] for i in range(3))
    for person, found in each_person(people, resamples=200).items():
        others = {
            pair: statistics.fmean(g[pair] for name, g in people.items() if name != person and pair in g)
            for pair in people[person]
        }
        keys = sorted(others)
        expected = spearmanr([people[person][k] for k in keys], [others[k] for k in keys])
        assert found.n == len(keys)
        assert found.rho == pytest.approx(expected.statistic, abs=1e-12)
        assert found.p_value == pytest.approx(expected.pvalue, rel=1e-9)
        assert found.low is not None and found.low <= found.rho <= found.high


def test_a_judges_mean_over_samples_and_orders_is_what_is_correlated():
    rows = [("x", 2.0), ("x", -1.0), ("y", 0.0), ("y", 1.0), ("y", 2.0)]
    assert mean_grades(rows) == {"x": 0.5, "y": 1.0}


def test_a_planted_judge_is_recovered_within_its_interval_and_the_interval_narrows_with_pairs():
    """A judge's grade = the pair's true preference + noise; people's average = the same + other noise.
    The population ρ of the two (computed on 200,000 draws) lies in the interval on 200 pairs."""
    rng = np.random.default_rng(11)

    def draw(n):
        truth = rng.normal(size=n)
        return truth + rng.normal(scale=0.7, size=n), truth + rng.normal(scale=0.5, size=n)

    judge, people = draw(200_000)
    population = spearmanr(judge, people).statistic
    widths = []
    for n in (12, 200):
        judge, people = draw(n)
        found = spearman(dict(enumerate(judge)), dict(enumerate(people)), resamples=500)
        widths.append(found.high - found.low)
        if n == 200:
            assert found.low <= population <= found.high
    assert widths[1] < widths[0] / 2


def test_below_the_minimum_no_interval_and_a_constant_judge_has_no_rho():
    few = spearman({i: float(i) for i in range(MIN_ITEMS - 1)}, {i: float(-i) for i in range(MIN_ITEMS - 1)})
    assert few.rho == pytest.approx(-1.0) and few.low is None and few.high is None
    constant = spearman({i: 0.0 for i in range(20)}, {i: float(i) for i in range(20)})
    assert constant.rho is None and constant.low is None


def test_table_4s_spread_is_the_mean_and_sample_sd_of_the_seeds_rho():
    spread = SeedSpread.of([0.28, 0.29, None, 0.27])
    assert spread.mean == statistics.fmean([0.28, 0.29, 0.27])
    assert spread.sd == statistics.stdev([0.28, 0.29, 0.27])
    assert SeedSpread.of([0.5]).sd is None
