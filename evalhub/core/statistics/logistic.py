"""Penalised logistic regression with fractional targets (a tie is ½, a judge's probability is itself),
by Newton's method with step halving: the one solver behind style-controlled ratings and AlpacaEval's
length-controlled win rate. The design may be dense or sparse."""

from __future__ import annotations

import numpy as np
from scipy import sparse


def information(design: np.ndarray | sparse.spmatrix, rows: np.ndarray) -> np.ndarray:
    """Xᵀ diag(rows) X as a dense matrix."""
    if isinstance(design, np.ndarray):
        return np.asarray(design.T @ (design * rows[:, None]))
    return np.asarray((design.T @ design.multiply(rows[:, None])).toarray())


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
        step = np.linalg.lstsq(hessian + extra, gradient, rcond=None)[0]
        scale = 1.0
        for _ in range(60):
            candidate = theta - scale * step
            value = objective(candidate)
            if value <= current + 1e-12 * abs(current):
                break
            scale /= 2
        theta, current = candidate, value
    return theta
