"""Penalised logistic regression with fractional targets (a tie is ½, a judge's probability is itself),
by Newton's method with step halving: the one solver behind style-controlled ratings and AlpacaEval's
length-controlled win rate. The design may be dense or sparse."""

from __future__ import annotations

import numpy as np
from scipy import linalg, sparse


def information(design: np.ndarray | sparse.spmatrix, rows: np.ndarray) -> np.ndarray:
    """Xᵀ diag(rows) X as a dense matrix."""
    if isinstance(design, np.ndarray):
        return np.asarray(design.T @ (design * rows[:, None]))
    return np.asarray((design.T @ design.multiply(rows[:, None])).toarray())


def newton_step(hessian: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """H⁻¹g by Cholesky: H is symmetric and, with a penalty or a pin on every direction the data do not
    see, positive definite. The dense least-squares solve (an SVD) it replaces made the length-controlled
    fit on AlpacaEval's shape (one difficulty column per prompt: ~810 columns) cost 3.3 times the CPU
    (benchmarks/lc_fit.py), paid by a web page. A singular H (nothing pins an unseen direction) falls
    back to the least-norm step."""
    try:
        step = linalg.cho_solve(linalg.cho_factor(hessian, check_finite=False), gradient, check_finite=False)
    except linalg.LinAlgError:
        step = np.linalg.lstsq(hessian, gradient, rcond=None)[0]
    return np.asarray(step)


def fit(
    design: np.ndarray | sparse.spmatrix,
    y: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    penalty: np.ndarray | None = None,
    pin: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> np.ndarray:
    """θ minimising Σ w [−y log σ(xθ) − (1 − y) log σ(−xθ)] + ½ Σ penalty θ² (y in [0, 1]).

    `pin` is added to the Hessian of each step only: a direction the likelihood does not see (all
    strengths shifted by one constant, a column of zeros) gets a step of 0 instead of a singular solve.
    The objective is convex, so halving a step until it no longer increases always converges."""
    width = design.shape[1]
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    lam = np.zeros(width) if penalty is None else penalty
    extra = np.zeros((width, width)) if pin is None else pin

    def objective(theta: np.ndarray) -> float:
        z = design @ theta
        return float(
            (w * (np.logaddexp(0, -z) * y + np.logaddexp(0, z) * (1 - y))).sum() + 0.5 * (lam * theta**2).sum()
        )

    theta = np.zeros(width)
    current = objective(theta)
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(-(design @ theta)))
        gradient = design.T @ (w * (p - y)) + lam * theta
        if np.abs(gradient).max() < tol * max(1.0, float(w.sum())):
            break
        hessian = information(design, w * p * (1 - p)) + np.diag(lam)
        step = newton_step(hessian + extra, gradient)
        scale = 1.0
        for _ in range(60):
            candidate = theta - scale * step
            value = objective(candidate)
            if value <= current + 1e-12 * abs(current):
                break
            scale /= 2
        theta, current = candidate, value
    return theta
