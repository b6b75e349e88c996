"""Several judges' preferences for a model, aligned once (JudgesOfModel): each board's other judges are a
slice of it, and every corrected figure is the one the judge-by-judge reading gave."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.core.statistics.corrected_win_rates import JudgesOfModel, corrected_win_rate
from evalhub.core.statistics.estimators import AUTO, MULTI_JUDGE


def preferences(seed: int, judges: int = 4, prompts: int = 60) -> dict[str, dict[str, float]]:
    """judge → prompt → preference; the last judge skips every fifth prompt (a judge that missed some)."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(size=prompts)
    out = {}
    for judge in range(judges):
        noisy = np.clip(truth + rng.normal(scale=0.15 + 0.05 * judge, size=prompts), 0, 1)
        skipped = judge == judges - 1
        out[f"j{judge}"] = {f"p{k}": float(noisy[k]) for k in range(prompts) if not (skipped and k % 5 == 0)}
    out["people"] = {f"p{k}": float(truth[k] > 0.5) for k in range(0, prompts, 3)}
    return out


def test_aligned_preferences_read_each_prompt_and_nan_where_a_judge_did_not_judge():
    table = JudgesOfModel.of({"a": {"p1": 0.2, "p2": 0.9}, "b": {"p2": 0.4, "p3": 1.0}})
    assert np.array_equal(
        table.at(["p2", "p1", "p9"]), np.array([[0.9, 0.4], [0.2, np.nan], [np.nan, np.nan]]), equal_nan=True
    )
    assert table.without("a").judges == ("b",) and table.without("z") is table
    assert np.array_equal(table.without("a").at(["p3", "p1"]), np.array([[1.0], [np.nan]]), equal_nan=True)


@pytest.mark.parametrize("estimator", [AUTO, MULTI_JUDGE])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_judges_corrected_win_rate_with_the_others_aligned_once_is_the_one_read_judge_by_judge(seed, estimator):
    found = preferences(seed)
    people = found.pop("people")
    judges = JudgesOfModel.of(found)
    for judge in found:
        by_judge = [prefs for other, prefs in found.items() if other != judge]
        expected = corrected_win_rate("m", found[judge], people, others=by_judge, estimator=estimator)
        assert (
            corrected_win_rate("m", found[judge], people, others=judges.without(judge), estimator=estimator) == expected
        )
