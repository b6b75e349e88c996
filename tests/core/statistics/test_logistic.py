"""The Newton step of the penalised logistic fit: a Cholesky solve where the Hessian is positive definite,
the least-norm step where it is singular."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.core.statistics import logistic
from evalhub.core.statistics.win_rates import Comparison, length_controlled


def test_the_step_equals_numpys_least_squares_solution_whether_the_hessian_is_regular_or_singular():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(200, 30))
    regular = x.T @ x + np.eye(30)
    gradient = rng.normal(size=30)
    expected = np.linalg.lstsq(regular, gradient, rcond=None)[0]
    assert np.allclose(logistic.newton_step(regular, gradient), expected, rtol=1e-10, atol=1e-12)

    singular = regular.copy()
    singular[:, -1] = singular[-1, :] = 0.0  # a direction nothing sees, and nothing pins
    expected = np.linalg.lstsq(singular, gradient, rcond=None)[0]
    assert np.allclose(logistic.newton_step(singular, gradient), expected, rtol=1e-10, atol=1e-12)


def test_the_length_controlled_fit_on_alpaca_evals_shape_needs_no_dense_least_squares(monkeypatch):
    """One estimated difficulty per prompt makes the Hessian hundreds of columns wide; its SVD on every
    Newton step was most of the baseline page's CPU. The penalty makes it positive definite."""
    rng = np.random.default_rng(3)
    rows = [
        Comparison(f"m{m}", f"p{p}", float(rng.uniform()), int(rng.integers(50, 500)), int(rng.integers(50, 500)))
        for m in range(3)
        for p in range(120)
    ]
    expected = length_controlled(rows)

    def no_svd(*args, **kwargs):
        raise AssertionError("a dense least-squares solve")

    monkeypatch.setattr(np.linalg, "lstsq", no_svd)
    control = length_controlled(rows)
    assert control.difficulty == "estimated"
    for model, rate in expected.winrate.items():
        assert control.winrate[model] == pytest.approx(rate, abs=1e-9)
        assert control.standard_error[model] == pytest.approx(expected.standard_error[model], abs=1e-9)
