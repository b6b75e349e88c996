"""Prediction-powered Bradley–Terry ratings: a judge's battles corrected by people's labels on some.

PPI++ for logistic regression without intercept (Angelopoulos, Duchi & Zrnic, arXiv:2311.01453), as
ppi-python's `ppi_logistic_ci` computes it, with two additions: standard errors cluster-robust by prompt
(battles on one prompt are not independent), and identical battles fitted once with their count.
`corrected_bradley_terry` turns the fits into the judge lab's corrected board.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from evalhub.core.statistics.ppi import Rows, _z


@dataclass(frozen=True)
class LogisticEstimate:
    coefficients: np.ndarray
    standard_errors: np.ndarray
    lam: float
    n_labelled: int
    n_unlabelled: int
    covariance: np.ndarray


def _expit(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1 + np.tanh(0.5 * z))  # no overflow for large |z|
    return out


def _rectified_fit(x: Rows, y: Rows, yhat: Rows, x_u: Rows, yhat_u: Rows, lam: float, w: Rows, w_u: Rows) -> np.ndarray:
    """Newton on PPI's rectified logistic loss: λ/N·Σ_u ℓ(θ; ŷ') − λ/n·Σ ℓ(θ; ŷ) + 1/n·Σ ℓ(θ; y), whose
    Hessian λ/N·Σ_u μ(1−μ)xxᵀ + (1−λ)/n·Σ μ(1−μ)xxᵀ is positive for λ ∈ [0, 1]. Row i counts w_i times
    (identical battles fitted once, with their count)."""
    n, big_n = w.sum(), w_u.sum()
    theta = np.zeros(x.shape[1])
    for _ in range(100):
        mu, mu_u = _expit(x @ theta), _expit(x_u @ theta)
        gradient = (
            lam / big_n * x_u.T @ (w_u * (mu_u - yhat_u)) - lam / n * x.T @ (w * (mu - yhat)) + x.T @ (w * (mu - y)) / n
        )
        curvature = (
            lam / big_n * (x_u.T * (w_u * mu_u * (1 - mu_u))) @ x_u + (1 - lam) / n * (x.T * (w * mu * (1 - mu))) @ x
        )
        step = np.linalg.solve(curvature, gradient)
        theta -= step
        if np.abs(step).max() < 1e-12:
            return theta
    # No optimum (a model that always wins drifts off): as singular as a disconnected design.
    raise np.linalg.LinAlgError("the rectified logistic fit did not converge")


def _logistic_parts(
    theta: np.ndarray, x: Rows, y: Rows, yhat: Rows, x_u: Rows, yhat_u: Rows, w: Rows, w_u: Rows
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The Hessian over every row (each counted w times) and each row's gradients: of people's loss, and
    of the judge's on the labelled and on the unlabelled rows."""
    mu, mu_u = _expit(x @ theta), _expit(x_u @ theta)
    hessian = ((x_u.T * (w_u * mu_u * (1 - mu_u))) @ x_u + (x.T * (w * mu * (1 - mu))) @ x) / (w.sum() + w_u.sum())
    return hessian, x * (mu - y)[:, None], x * (mu - yhat)[:, None], x_u * (mu_u - yhat_u)[:, None]


def _counted_cov(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The sample covariance (ddof 1) of rows each repeated `counts` times."""
    d = rows.shape[1]
    out: np.ndarray = np.cov(rows.T, fweights=counts.astype(np.int64)).reshape(d, d)
    return out


def _tuned_weight(
    theta: np.ndarray, x: Rows, y: Rows, yhat: Rows, x_u: Rows, yhat_u: Rows, w: Rows, w_u: Rows
) -> float:
    """PPI++'s λ for a GLM at θ: tr(H⁻¹CH⁻¹) / (2(1 + n/N)·tr(H⁻¹VH⁻¹)), C the symmetrised covariance of
    people's and the judge's gradients, V the spread of the judge's; clipped to [0, 1]."""
    n, big_n = w.sum(), w_u.sum()
    hessian, grads, grads_hat, grads_u = _logistic_parts(theta, x, y, yhat, x_u, yhat_u, w, w_u)
    inverse = np.linalg.inv(hessian)
    centred, centred_hat = grads - (w @ grads) / n, grads_hat - (w @ grads_hat) / n
    cross = (centred.T @ (w[:, None] * centred_hat) + centred_hat.T @ (w[:, None] * centred)) / n
    spread = _counted_cov(np.concatenate([grads_hat, grads_u]), np.concatenate([w, w_u]))
    tuned = np.trace(inverse @ cross @ inverse) / (2 * (1 + n / big_n) * np.trace(inverse @ spread @ inverse))
    return float(np.clip(tuned, 0.0, 1.0))


def membership(clusters: np.ndarray, counts: np.ndarray | None = None, groups: int | None = None) -> sparse.csr_matrix:
    """A (clusters × rows) matrix of how many of each row's battles are in each cluster, from one cluster
    id per row (clusters given as codes 0..G−1 when `groups` is given, as any ids otherwise)."""
    if groups is None:
        ids, codes = np.unique(np.asarray(clusters), return_inverse=True)
        groups, clusters = len(ids), codes.ravel()
    weights = np.ones(len(clusters)) if counts is None else np.asarray(counts, dtype=float)
    return sparse.csr_matrix((weights, (np.asarray(clusters), np.arange(len(clusters)))), shape=(groups, len(clusters)))


def _clustered_spread(
    terms: np.ndarray, terms_u: np.ndarray, member: sparse.csr_matrix, member_u: sparse.csr_matrix, rows: float
) -> np.ndarray:
    """The covariance of the rectified estimating equation when rows of one cluster (battles on one
    prompt) are not independent: Σ_c Ψ_c Ψ_cᵀ · G/(G − 1) · (m − 1)/(m − d), Ψ_c the sum over cluster
    c's battles of (∇ℓ − λ∇ℓ̂ − its mean)/n on labelled ones and λ(∇ℓ' − its mean)/N on the others (each
    row's term times its count in c); G clusters with a battle, m battles, d coefficients: the
    small-sample factor statsmodels and Stata apply by default. A cluster's labelled and unlabelled
    battles enter one sum, so their dependence is counted too."""
    sums = np.asarray(member @ terms) + np.asarray(member_u @ terms_u)
    groups = int(((member.getnnz(axis=1) + member_u.getnnz(axis=1)) > 0).sum())
    if groups < 2:
        raise ValueError("a cluster-robust interval needs at least two clusters")
    d = terms.shape[1]
    out: np.ndarray = sums.T @ sums * groups / (groups - 1) * (rows - 1) / max(rows - d, 1)
    return out


def ppi_logistic(
    x: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    x_unlabelled: np.ndarray,
    yhat_unlabelled: np.ndarray,
    lam: float | None = None,
    clusters: np.ndarray | None = None,
    clusters_unlabelled: np.ndarray | None = None,
    *,
    counts: np.ndarray | None = None,
    counts_unlabelled: np.ndarray | None = None,
    member: sparse.csr_matrix | None = None,
    member_unlabelled: sparse.csr_matrix | None = None,
) -> LogisticEstimate:
    """Prediction-powered logistic regression without intercept (PPI++), as ppi-python's ppi_logistic_ci
    computes it: people's labels `y` on rows `x`, the judge's `yhat` on the same rows and
    `yhat_unlabelled` on `x_unlabelled`. `lam=None` tunes the judge's weight as that function does
    (at the plain PPI fit, then once more at the fit with that weight). Standard errors from the
    sandwich H⁻¹(n/N·Cov(λ∇ℓ') + Cov(∇ℓ − λ∇ℓ̂))H⁻¹ / n.

    `clusters` and `clusters_unlabelled` (e.g. each battle's prompt) make the standard errors
    cluster-robust: battles on one prompt share its difficulty and style, so they are not independent,
    and the independent sandwich is too narrow (the middle term is then `_clustered_spread`'s; the fit
    and λ are unchanged: λ tunes efficiency, and any λ keeps the interval valid).

    `counts`: each row stands for that many identical battles (the same fit, in far fewer rows, where a
    judge gives plain verdicts); `member` (clusters × rows, see `membership`) then says how many of
    each row's battles are in each cluster, in place of `clusters`."""
    x, x_u = np.asarray(x, dtype=float), np.asarray(x_unlabelled, dtype=float)
    y, yhat, yhat_u = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    w = np.ones(len(y)) if counts is None else np.asarray(counts, dtype=float)
    w_u = np.ones(len(yhat_u)) if counts_unlabelled is None else np.asarray(counts_unlabelled, dtype=float)
    n, big_n, d = w.sum(), w_u.sum(), x.shape[1]
    if clusters is not None:
        ids = np.concatenate([np.asarray(clusters), np.asarray(clusters_unlabelled, dtype=np.asarray(clusters).dtype)])
        if len(ids) != len(y) + len(yhat_u):
            raise ValueError("one cluster per row: labelled and unlabelled")
        _, codes = np.unique(ids, return_inverse=True)
        codes, groups = codes.ravel(), int(codes.max()) + 1
        member = membership(codes[: len(y)], w, groups)
        member_unlabelled = membership(codes[len(y) :], w_u, groups)
    if lam is None:
        parts = (x, y, yhat, x_u, yhat_u)
        try:
            start = _rectified_fit(*parts, 1.0, w, w_u)
        except np.linalg.LinAlgError:
            # At λ = 1 only the unlabelled rows curve the loss: a column (a model) that is in none of them
            # has no optimum. People's own fit is as good a point to tune λ at (any consistent one is).
            start = _rectified_fit(*parts, 0.0, w, w_u)
        first = _tuned_weight(start, *parts, w, w_u)
        theta = _rectified_fit(*parts, first, w, w_u)
        tuned = _tuned_weight(theta, *parts, w, w_u)
        return ppi_logistic(
            *parts, tuned, counts=w, counts_unlabelled=w_u, member=member, member_unlabelled=member_unlabelled
        )
    weight = float(lam)
    theta = _rectified_fit(x, y, yhat, x_u, yhat_u, weight, w, w_u)
    hessian, grads, grads_hat, grads_u = _logistic_parts(theta, x, y, yhat, x_u, yhat_u, w, w_u)
    if weight == 0:  # people's labels alone: their own Hessian
        mu = _expit(x @ theta)
        hessian = (x.T * (w * mu * (1 - mu))) @ x / n
    inverse = np.linalg.inv(hessian)
    if member is not None:
        people = grads - weight * grads_hat
        terms = (people - (w @ people) / n) / n
        if weight == 0:  # the judge's battles carry nothing: a cluster of them alone is not a cluster of the fit
            terms_u, member_u, rows = np.zeros((0, d)), member[:, :0], n
        else:
            judge = weight * grads_u
            terms_u, member_u, rows = (judge - (w_u @ judge) / big_n) / big_n, member_unlabelled, n + big_n
        covariance = inverse @ _clustered_spread(terms, terms_u, member, member_u, rows) @ inverse
        return LogisticEstimate(theta, np.sqrt(np.diag(covariance)), weight, int(n), int(big_n), covariance)
    spread_u = _counted_cov(weight * grads_u, w_u)
    spread = _counted_cov(grads - weight * grads_hat, w)
    sigma = inverse @ (n / big_n * spread_u + spread) @ inverse
    return LogisticEstimate(theta, np.sqrt(np.diag(sigma) / n), weight, int(n), int(big_n), sigma / n)


ELO = 400 / np.log(10)  # logit units to Elo points, as Chatbot Arena reports ratings
MIN_LABELS = 10  # below this many people's labels no corrected board is fitted


@dataclass(frozen=True)
class CorrectedRating:
    """A model's Bradley–Terry rating (Elo scale, centred on 1000 over the models) from the judge alone,
    from people alone, and the judge's corrected by people's labels, with 95 % intervals."""

    model: str
    judge: float
    judge_low: float
    judge_high: float
    corrected: float
    corrected_low: float
    corrected_high: float
    people: float
    people_low: float
    people_high: float


@dataclass(frozen=True)
class CorrectedBoard:
    ratings: list[CorrectedRating]
    n_human: int  # battles people labelled that the judge judged too
    n_judge: int  # battles the judge judged
    judge_weight: float  # PPI++'s λ
    note: str = ""
    prompts: int = 0  # the prompts the battles are on, where the intervals are cluster-robust by prompt


def _centred(estimate: LogisticEstimate, models: int, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratings centred on their mean (the last model, left out of the design, at θ = 0) with intervals
    from the full covariance."""
    centring = np.eye(models)[:, :-1] - np.full((models, models - 1), 1.0 / models)
    centred = centring @ estimate.coefficients
    se = np.sqrt(np.einsum("ij,jk,ik->i", centring, estimate.covariance, centring))
    z = _z(alpha)
    return 1000 + ELO * centred, 1000 + ELO * (centred - z * se), 1000 + ELO * (centred + z * se)


FEW_SHARES = 8  # a judge with at most this many distinct shares (verdicts, a few levels) has battles alike


def corrected_bradley_terry(
    model_1: Sequence[str],
    model_2: Sequence[str],
    judge_share: Sequence[float],
    people_share: Sequence[float],
    alpha: float = 0.05,
    clusters: Sequence[object] | np.ndarray | None = None,
) -> CorrectedBoard | str:
    """Bradley–Terry ratings from a judge's battles corrected by people's labels on some of them
    (prediction-powered logistic regression). `judge_share` is the judge's share for model_1 (1 a
    win, ½ a tie, or its probability); `people_share` people's, NaN where nobody labelled the battle.
    `clusters` (each battle's prompt) make every interval cluster-robust: several battles on one prompt
    are not independent (see `ppi_logistic`). Returns the board, or why there is none."""
    first, second = np.asarray(model_1, dtype=object), np.asarray(model_2, dtype=object)
    judge, people = np.asarray(judge_share, dtype=float), np.asarray(people_share, dtype=float)
    labelled = ~np.isnan(people)
    n = int(labelled.sum())
    if n < MIN_LABELS:
        return f"{n} battles people labelled: too few (fewer than {MIN_LABELS}) for a corrected board"
    if labelled.all():
        return "people labelled every battle the judge judged: their own board needs no correction"
    # Models as sorted codes, found by hashing (pandas' factorize): sorting 400,000 names as strings took
    # a tenth of a second per judge at ten million judgments.
    column, names = pd.factorize(np.concatenate([first, second]).astype(str), sort=True)
    models = [str(name) for name in names]
    column_1, column_2 = column[: len(first)], column[len(first) :]
    seen = np.zeros(len(models), dtype=bool)
    seen[column_1[labelled]] = seen[column_2[labelled]] = True
    if len(models) < 2 or not seen.all():
        return "some model is in no battle people labelled: its correction cannot be measured"
    # Identical battles (the same two models, the judge's share and people's) are fitted once, with their
    # count: a judge of plain verdicts has at most models² × 12 kinds of battle however many it judged.
    # A judge of probabilities has nearly as many kinds as battles: finding them would cost more than it saves.
    said = np.where(labelled, people, -1.0)
    table = np.column_stack([column_1, column_2, judge, said])
    judge_levels, judge_code = np.unique(judge, return_inverse=True)
    if len(judge_levels) <= FEW_SHARES:
        # One integer per kind (a row-wise unique of the table sorted it lexically: 0.3 s per judge).
        said_levels, said_code = np.unique(said, return_inverse=True)
        key = ((column_1 * len(models) + column_2) * len(judge_levels) + judge_code.ravel()) * len(said_levels)
        _, first_of_kind, kind_of, count = np.unique(
            key + said_code.ravel(), return_index=True, return_inverse=True, return_counts=True
        )
        kinds, kind_of = table[first_of_kind], kind_of.ravel()
    else:
        kinds, kind_of, count = table, np.arange(len(table)), np.ones(len(table), dtype=np.int64)
    first_code, second_code = kinds[:, 0].astype(int), kinds[:, 1].astype(int)
    design = np.zeros((len(kinds), len(models)))
    design[np.arange(len(kinds)), first_code] += 1
    design[np.arange(len(kinds)), second_code] -= 1
    design = design[:, :-1]  # the last model at θ = 0: the ratings are identified
    shares, said = kinds[:, 2], kinds[:, 3]
    known = said >= 0
    member = None
    if clusters is not None:  # how many battles of each kind each prompt holds
        _, prompt_code = np.unique(np.asarray(clusters), return_inverse=True)
        member = sparse.csr_matrix(
            (np.ones(len(kind_of)), (prompt_code.ravel(), kind_of)), shape=(int(prompt_code.max()) + 1, len(kinds))
        )
    x, x_u, y, yhat, yhat_u = design[known], design[~known], said[known], shares[known], shares[~known]
    w, w_u = count[known], count[~known]
    m, m_u = (None, None) if member is None else (member[:, np.flatnonzero(known)], member[:, np.flatnonzero(~known)])
    rows = {"counts": w, "counts_unlabelled": w_u, "member": m, "member_unlabelled": m_u}
    try:
        corrected = ppi_logistic(x, y, yhat, x_u, yhat_u, None, **rows)
        alone = ppi_logistic(x, y, yhat, x_u, yhat_u, 0.0, **rows)
        judge_only = ppi_logistic(
            design,
            shares,
            shares,
            x_u,
            yhat_u,
            0.0,
            counts=count,
            counts_unlabelled=w_u,
            member=member,
            member_unlabelled=m_u,
        )
    except np.linalg.LinAlgError:
        return "the battles do not connect every model (or one always wins): no ratings can be fitted"
    boards = [_centred(estimate, len(models), alpha) for estimate in (judge_only, corrected, alone)]
    ratings = [
        CorrectedRating(model, *(float(part[i]) for board in boards for part in board))
        for i, model in enumerate(models)
    ]
    ratings.sort(key=lambda r: -r.corrected)
    prompts = 0 if member is None else int(member.shape[0])
    return CorrectedBoard(ratings, n, len(judge), corrected.lam, prompts=prompts)
