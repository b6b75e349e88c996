from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalhub.core.privileged.tiers import tier_label, tier_table, win_value


def test_means_count_every_sample_and_the_overall_column_pools_the_tiers():
    rows = [
        ("a", 0, "p1", 1.0),
        ("a", 0, "p1", 0.0),
        ("a", 0, "p2", 1.0),
        ("a", 1, "p1", 1.0),
        ("a", 1, "p2", 1.0),
        ("b", 0, "p1", 0.0),
        ("b", 1, "p1", 0.5),
    ]
    table = tier_table(rows, resamples=200)
    assert table.models == ["a", "b"]
    assert table.tiers == [0, 1]
    assert table.cells[("a", 0)].mean == pytest.approx(2 / 3)
    assert (table.cells[("a", 0)].n, table.cells[("a", 0)].prompts) == (3, 2)
    assert table.cells[("a", "overall")].mean == pytest.approx(4 / 5)
    assert table.cells[("b", 1)].mean == 0.5
    assert table.cells[("b", "overall")].mean == pytest.approx(0.25)


def test_with_one_observation_per_prompt_the_interval_agrees_with_scipys_percentile_bootstrap():
    rng = np.random.default_rng(3)
    values = (rng.random(400) < 0.3).astype(float)
    table = tier_table([("m", 0, i, v) for i, v in enumerate(values)], resamples=4000, seed=1)
    cell = table.cells[("m", 0)]
    reference = stats.bootstrap((values,), np.mean, n_resamples=4000, method="percentile", random_state=2)
    assert cell.mean == pytest.approx(values.mean())
    assert cell.low == pytest.approx(reference.confidence_interval.low, abs=0.01)
    assert cell.high == pytest.approx(reference.confidence_interval.high, abs=0.01)
    # and with the normal approximation it should be close to
    se = np.sqrt(values.mean() * (1 - values.mean()) / len(values))
    assert cell.high - cell.low == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_samples_of_one_prompt_are_resampled_together():
    # 20 prompts, each answered 10 times identically: the interval is that of 20 observations, not 200.
    rows = [("m", 0, p, float(p % 2)) for p in range(20) for _ in range(10)]
    clustered = tier_table(rows, resamples=3000).cells[("m", 0)]
    naive = tier_table([("m", 0, i, v) for i, (_, _, _, v) in enumerate(rows)], resamples=3000).cells[("m", 0)]
    assert clustered.high - clustered.low > 2.5 * (naive.high - naive.low)


def test_a_gap_is_separated_only_when_its_paired_interval_excludes_zero():
    rng = np.random.default_rng(0)
    rows = []
    for prompt in range(60):
        easy = rng.random() < 0.5
        rows += [("strong", 0, prompt, float(easy)), ("weak", 0, prompt, float(easy))]  # identical at tier 0
        rows += [("strong", 1, prompt, 1.0), ("weak", 1, prompt, float(rng.random() < 0.3))]
    table = tier_table(rows, resamples=2000)
    tier0, tier1 = table.separability
    assert tier0.gaps[0].gap == 0
    assert (tier0.gaps[0].low, tier0.gaps[0].high) == (0, 0)
    assert not tier0.gaps[0].separated
    assert tier0.separated == 0
    assert tier1.separated == 1
    assert tier1.widest.gap > 0.5
    assert tier1.widest.low > 0


def test_a_tie_counts_half_and_tiers_are_labelled_like_table_3():
    assert [win_value(o) for o in ("win", "tie", "loss")] == [1.0, 0.5, 0.0]
    assert [tier_label(t) for t in (0, 1, 3)] == ["No hint", "1 hint", "3 hints"]
    assert tier_table([]).cells == {}
