"""Prediction-powered logistic regression without intercept: the estimator behind corrected Bradley–Terry
boards, in every form `estimators` offers for means.

PPI++ (Angelopoulos, Duchi & Zrnic, arXiv:2311.01453) as ppi-python's `ppi_logistic_ci` computes it,
extended three ways:

- **cluster-robust** standard errors (battles on one prompt are not independent; see `ppi_logistic`);
- **stratified** (Fisch et al., NeurIPS 2024, for M-estimators): each stratum s (a prompt category) has
  its own weight λ_s on the judge, and the rectified loss is Σ_s W_s·L_s(θ; λ_s), W_s the stratum's
  share of every battle, L_s PPI++'s rectified loss within it; λ_s minimises the trace of the
  covariance, which separates by stratum;
- **several judges**: a weight per judge, λ = ((1 + n/N)·A)⁻¹·b with A_jl = tr(H⁻¹Cov(∇ℓ̂_j, ∇ℓ̂_l)H⁻¹)
  and b_j = tr(H⁻¹Cov(∇ℓ, ∇ℓ̂_j)H⁻¹), the trace-minimising weights (one judge: PPI++'s λ). The logistic
  loss is linear in its label, so several judges' corrections are one judge's with label Σ_j λ_j ŷ_j / Λ
  and weight Λ = Σ_j λ_j; the loss stays convex for Λ in [0, 1], so weights whose sum leaves it are
  scaled back into it (any weights keep the interval valid; these only lose a little efficiency).

Rows may stand for several identical battles (`counts`): the same fit in far fewer rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from evalhub.core.statistics.ppi import Rows


@dataclass(frozen=True)
class LogisticEstimate:
    coefficients: np.ndarray
    standard_errors: np.ndarray
    lam: float  # the judge's weight; NaN where there are several (one per stratum or per judge)
    n_labelled: int
    n_unlabelled: int
    covariance: np.ndarray
    weights: np.ndarray | None = None  # (strata × judges): every weight on the judges


def _expit(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1 + np.tanh(0.5 * z))  # no overflow for large |z|
    return out


@dataclass(frozen=True)
class _Battles:
    """Labelled rows (x, y, the judges' ŷ one column each, count, stratum code) and the rest."""

    x: np.ndarray
    y: np.ndarray
    yhat: np.ndarray
    w: np.ndarray
    stratum: np.ndarray
    x_u: np.ndarray
    yhat_u: np.ndarray
    w_u: np.ndarray
    stratum_u: np.ndarray
    strata: int

    @cached_property
    def _thin(self) -> tuple[sparse.csr_matrix | None, sparse.csr_matrix | None]:
        return _sparse_if_thin(self.x), _sparse_if_thin(self.x_u)

    def linear(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x·θ and x_u·θ."""
        thin, thin_u = self._thin
        return (self.x if thin is None else thin) @ theta, (self.x_u if thin_u is None else thin_u) @ theta

    def gradient(self, scalars: np.ndarray, scalars_u: np.ndarray) -> np.ndarray:
        """xᵀ·scalars + x_uᵀ·scalars_u."""
        thin, thin_u = self._thin
        out: np.ndarray = (self.x if thin is None else thin).T @ scalars + (
            self.x_u if thin_u is None else thin_u
        ).T @ scalars_u
        return out

    def gram(self, weights: np.ndarray, weights_u: np.ndarray | None) -> np.ndarray:
        """xᵀ·diag(weights)·x + x_uᵀ·diag(weights_u)·x_u (None: labelled rows only): the Hessian of a
        weighted logistic loss."""
        thin, thin_u = self._thin
        out = _gram(self.x, thin, weights)
        return out if weights_u is None else out + _gram(self.x_u, thin_u, weights_u)

    def sizes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per stratum: labelled battles n_s, the others N_s, and its share W_s of every battle."""
        n = np.bincount(self.stratum, weights=self.w, minlength=self.strata)
        big_n = np.bincount(self.stratum_u, weights=self.w_u, minlength=self.strata)
        return n, big_n, (n + big_n) / (n.sum() + big_n.sum())

    def residuals(self, theta: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, ...]:
        """μ on both sides, and each row's scalar of the rectified gradient (the gradient is it times the
        row): people's minus the judges' weighted on labelled rows, (1 − Λ)μ − y + Σλ_jŷ_j; the judges'
        weighted on the others, Λμ − Σλ_jŷ'_j."""
        mu, mu_u = (_expit(z) for z in self.linear(theta))
        total = lam.sum(axis=1)
        people = (1 - total[self.stratum]) * mu - self.y + (self.yhat * lam[self.stratum]).sum(axis=1)
        judges = total[self.stratum_u] * mu_u - (self.yhat_u * lam[self.stratum_u]).sum(axis=1)
        return mu, mu_u, people, judges


def _sparse_if_thin(x: np.ndarray) -> sparse.csr_matrix | None:
    """A sparse copy of a design with few non-zeros a row (a Bradley–Terry row has two), where it has
    enough columns for that to matter: the dense xᵀWx over 200 models' columns was nine tenths of a
    judge lab report with 50 judges (0.23 s a fit at 24,000 battles)."""
    if x.ndim != 2 or x.shape[1] < 20 or x.size == 0 or np.count_nonzero(x) > 0.1 * x.size:
        return None
    return sparse.csr_matrix(x)


def _gram(x: np.ndarray, thin: sparse.csr_matrix | None, weights: np.ndarray) -> np.ndarray:
    if thin is None:
        out: np.ndarray = (x.T * weights) @ x
        return out
    return np.asarray((thin.T @ sparse.diags(weights) @ thin).toarray())


def _rectified_fit(battles: _Battles, lam: np.ndarray) -> np.ndarray:
    """Newton on the rectified loss Σ_s W_s[1/n_s·Σ(ℓ(θ; y) − Σ_j λ_sj ℓ(θ; ŷ_j)) + 1/N_s·Σ_u Σ_j λ_sj
    ℓ(θ; ŷ'_j)], whose Hessian (weights (1 − Λ_s) on labelled rows, Λ_s on the others) is positive for
    Λ_s in [0, 1]. Row i counts w_i times."""
    b = battles
    n, big_n, share = b.sizes()
    total = lam.sum(axis=1)
    scale = b.w * (share / np.maximum(n, 1))[b.stratum]
    scale_u = b.w_u * (share / np.maximum(big_n, 1))[b.stratum_u]
    theta = np.zeros(b.x.shape[1])
    for _ in range(100):
        mu, mu_u, people, judges = b.residuals(theta, lam)
        gradient = b.gradient(scale * people, scale_u * judges)
        bend = scale * (1 - total[b.stratum]) * mu * (1 - mu)
        bend_u = scale_u * total[b.stratum_u] * mu_u * (1 - mu_u)
        step = np.linalg.solve(b.gram(bend, bend_u), gradient)
        theta -= step
        if np.abs(step).max() < 1e-12:
            return theta
    # No optimum (a model that always wins drifts off): as singular as a disconnected design.
    raise np.linalg.LinAlgError("the rectified logistic fit did not converge")


def _hessian(battles: _Battles, theta: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """The loss's mean Hessian over every row; with no weight on any judge, people's own (stratum-weighted)."""
    b = battles
    mu, mu_u = (_expit(z) for z in b.linear(theta))
    if not lam.any():
        n, _, share = b.sizes()
        scale = b.w * (share / np.maximum(n, 1))[b.stratum]
        return b.gram(scale * mu * (1 - mu), None)
    pooled = b.gram(b.w * mu * (1 - mu), b.w_u * mu_u * (1 - mu_u))
    return pooled / (b.w.sum() + b.w_u.sum())  # type: ignore[no-any-return]


def _tuned_weights(battles: _Battles, theta: np.ndarray, single: bool) -> np.ndarray:
    """Per stratum the weights minimising tr(H⁻¹ΣH⁻¹): λ_s = A_s⁻¹b_s / (1 + n_s/N_s) (module docstring),
    the traces read from the rows projected by H⁻¹ (no d × d covariance per judge). One judge: clipped
    to [0, 1] as ppi-python does; several: scaled so that their sum lies in [0, 1]."""
    b = battles
    inverse = np.linalg.inv(_hessian(b, theta, np.ones((b.strata, 1))))
    mu, mu_u = (_expit(z) for z in b.linear(theta))
    projected, projected_u = b.x @ inverse, b.x_u @ inverse
    reach, reach_u = (projected**2).sum(axis=1), (projected_u**2).sum(axis=1)
    judges = b.yhat.shape[1]
    out = np.zeros((b.strata, judges))
    for s in range(b.strata):
        mine, mine_u = b.stratum == s, b.stratum_u == s
        w, w_u = b.w[mine], b.w_u[mine_u]
        n, big_n = w.sum(), w_u.sum()
        people = mu[mine] - b.y[mine]  # ∇ℓ = (μ − y)x
        judge = mu[mine, None] - b.yhat[mine]  # ∇ℓ̂_j = (μ − ŷ_j)x, labelled rows
        every = np.vstack([judge, mu_u[mine_u, None] - b.yhat_u[mine_u]])
        every_w, every_reach = np.concatenate([w, w_u]), np.concatenate([reach[mine], reach_u[mine_u]])
        every_q = np.vstack([projected[mine], projected_u[mine_u]])
        m = n + big_n
        # b_j = (1/n)[Σ w s r_j |q|² − n (ḡH⁻¹)·(ĝ̄_jH⁻¹)]; A_jl = (1/(m − 1))[Σ w r_j r_l |q|² − m c_j·c_l]
        people_mean = (w * people) @ projected[mine] / n
        judge_means = (judge * w[:, None]).T @ projected[mine] / n
        cross = ((w * people * reach[mine]) @ judge - n * judge_means @ people_mean) / n
        centres = (every * every_w[:, None]).T @ every_q / m
        spread = ((every * (every_w * every_reach)[:, None]).T @ every - m * centres @ centres.T) / (m - 1)
        weights = np.linalg.lstsq((1 + n / big_n) * np.atleast_2d(spread), cross, rcond=None)[0]
        if single:
            weights = np.clip(weights, 0.0, 1.0)
        elif weights.sum() > 1:
            weights = weights / weights.sum()
        elif weights.sum() < 0:
            weights = np.zeros(judges)
        out[s] = weights
    return out


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
    prompt) are not independent: Σ_c Ψ_c Ψ_cᵀ · G/(G − 1) · (m − 1)/(m − d), Ψ_c the sum of cluster c's
    rows' centred terms (each row's term times its count in c); G clusters with a battle, m battles, d
    coefficients: the small-sample factor statsmodels and Stata apply by default. A cluster's labelled
    and unlabelled battles enter one sum, so their dependence is counted too."""
    sums = np.asarray(member @ terms) + np.asarray(member_u @ terms_u)
    groups = int(((member.getnnz(axis=1) + member_u.getnnz(axis=1)) > 0).sum())
    if groups < 2:
        raise ValueError("a cluster-robust interval needs at least two clusters")
    d = terms.shape[1]
    out: np.ndarray = sums.T @ sums * groups / (groups - 1) * (rows - 1) / max(rows - d, 1)
    return out


def _centred_terms(
    rows: np.ndarray, scalars: np.ndarray, w: np.ndarray, stratum: np.ndarray, scale: np.ndarray
) -> np.ndarray:
    """Each row's term scalar·x, centred on its stratum's (count-weighted) mean and times its scale."""
    terms = rows * scalars[:, None]
    member = sparse.csr_matrix((w, (stratum, np.arange(len(w)))), shape=(len(scale), len(w)))
    counts = np.maximum(np.asarray(member.sum(axis=1)).ravel(), 1)
    means = np.asarray(member @ terms) / counts[:, None]
    out: np.ndarray = (terms - means[stratum]) * scale[stratum][:, None]
    return out


def _covariance(
    battles: _Battles,
    theta: np.ndarray,
    lam: np.ndarray,
    member: sparse.csr_matrix | None,
    member_u: sparse.csr_matrix | None,
) -> np.ndarray:
    """H⁻¹·M·H⁻¹: M = Σ_s W_s²[Cov_s(∇ℓ − Σλ∇ℓ̂)/n_s + Cov_s(Σλ∇ℓ̂')/N_s] with independent rows, else
    the clustered middle of `_clustered_spread` over the same centred terms."""
    b = battles
    inverse = np.linalg.inv(_hessian(b, theta, lam))
    n, big_n, share = b.sizes()
    _, _, people, judges = b.residuals(theta, lam)
    if member is not None:
        terms = _centred_terms(b.x, people, b.w, b.stratum, share / np.maximum(n, 1))
        if not lam.any():  # the judges' battles carry nothing: a cluster of them alone is not a cluster of the fit
            terms_u, member_u, rows = np.zeros((0, b.x.shape[1])), member[:, :0], n.sum()
        else:
            terms_u = _centred_terms(b.x_u, judges, b.w_u, b.stratum_u, share / np.maximum(big_n, 1))
            rows = n.sum() + big_n.sum()
        out: np.ndarray = inverse @ _clustered_spread(terms, terms_u, member, member_u, rows) @ inverse
        return out
    d = b.x.shape[1]
    middle = np.zeros((d, d))
    for s in range(b.strata):
        mine, mine_u = b.stratum == s, b.stratum_u == s
        middle += share[s] ** 2 * _counted_cov(b.x[mine] * people[mine, None], b.w[mine]) / n[s]
        if lam[s].any():
            middle += share[s] ** 2 * _counted_cov(b.x_u[mine_u] * judges[mine_u, None], b.w_u[mine_u]) / big_n[s]
    covariance: np.ndarray = inverse @ middle @ inverse
    return covariance


def _counted_cov(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The sample covariance (ddof 1) of rows each repeated `counts` times."""
    d = rows.shape[1]
    out: np.ndarray = np.cov(rows.T, fweights=counts.astype(np.int64)).reshape(d, d)
    return out


def _codes(
    labelled: np.ndarray | None, unlabelled: np.ndarray | None, n: int, big_n: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Each row's stratum as a code 0..K−1 (one stratum where none are given), and K."""
    if labelled is None:
        return np.zeros(n, dtype=int), np.zeros(big_n, dtype=int), 1
    ids = np.concatenate([np.asarray(labelled, dtype=object), np.asarray(unlabelled, dtype=object)]).astype(str)
    _, codes = np.unique(ids, return_inverse=True)
    codes = codes.ravel()
    return codes[:n], codes[n:], int(codes.max()) + 1


def ppi_logistic(
    x: np.ndarray,
    y: np.ndarray,
    yhat: np.ndarray,
    x_unlabelled: np.ndarray,
    yhat_unlabelled: np.ndarray,
    lam: float | np.ndarray | None = None,
    clusters: np.ndarray | None = None,
    clusters_unlabelled: np.ndarray | None = None,
    *,
    counts: Rows | None = None,
    counts_unlabelled: Rows | None = None,
    member: sparse.csr_matrix | None = None,
    member_unlabelled: sparse.csr_matrix | None = None,
    strata: np.ndarray | None = None,
    strata_unlabelled: np.ndarray | None = None,
) -> LogisticEstimate:
    """Prediction-powered logistic regression without intercept (PPI++), as ppi-python's ppi_logistic_ci
    computes it: people's labels `y` on rows `x`, the judge's `yhat` on the same rows and
    `yhat_unlabelled` on `x_unlabelled` (one column per judge for several). `lam=None` tunes the
    weights as that function does (at the fit with every weight summing to 1, then once more at the fit
    with the tuned ones). Standard errors from the sandwich H⁻¹(Cov(∇ℓ − λ∇ℓ̂)/n + Cov(λ∇ℓ')/N)H⁻¹.

    `clusters` and `clusters_unlabelled` (e.g. each battle's prompt) make the standard errors
    cluster-robust: battles on one prompt share its difficulty and style, so they are not independent,
    and the independent sandwich is too narrow (the middle term is then `_clustered_spread`'s; the fit
    and λ are unchanged: λ tunes efficiency, and any λ keeps the interval valid). `strata` and
    `strata_unlabelled` (each row's category) give each stratum its own weights (module docstring).

    `counts`: each row stands for that many identical battles (the same fit, in far fewer rows, where a
    judge gives plain verdicts); `member` (clusters × rows, see `membership`) then says how many of
    each row's battles are in each cluster, in place of `clusters`."""
    x, x_u = np.asarray(x, dtype=float), np.asarray(x_unlabelled, dtype=float)
    y = np.asarray(y, dtype=float)
    predicted, predicted_u = np.asarray(yhat, dtype=float), np.asarray(yhat_unlabelled, dtype=float)
    single = predicted.ndim == 1
    predicted, predicted_u = predicted.reshape(len(y), -1), predicted_u.reshape(len(predicted_u), -1)
    w = np.ones(len(y)) if counts is None else np.asarray(counts, dtype=float)
    w_u = np.ones(len(predicted_u)) if counts_unlabelled is None else np.asarray(counts_unlabelled, dtype=float)
    stratum, stratum_u, kinds = _codes(strata, strata_unlabelled, len(y), len(predicted_u))
    battles = _Battles(x, y, predicted, w, stratum, x_u, predicted_u, w_u, stratum_u, kinds)
    if clusters is not None:
        ids = np.concatenate([np.asarray(clusters), np.asarray(clusters_unlabelled, dtype=np.asarray(clusters).dtype)])
        if len(ids) != len(y) + len(predicted_u):
            raise ValueError("one cluster per row: labelled and unlabelled")
        _, codes = np.unique(ids, return_inverse=True)
        codes, groups = codes.ravel(), int(codes.max()) + 1
        member = membership(codes[: len(y)], w, groups)
        member_unlabelled = membership(codes[len(y) :], w_u, groups)
    judges = predicted.shape[1]
    if lam is None:
        even = np.full((kinds, judges), 1.0 / judges)
        try:
            start = _rectified_fit(battles, even)
        except np.linalg.LinAlgError:
            # With every weight summing to 1 only the unlabelled rows curve the loss: a column (a model) in
            # none of them has no optimum. People's own fit is as good a point to tune at (any consistent one is).
            start = _rectified_fit(battles, np.zeros((kinds, judges)))
        first = _tuned_weights(battles, start, single)
        weights = _tuned_weights(battles, _rectified_fit(battles, first), single)
    else:
        weights = np.broadcast_to(np.asarray(lam, dtype=float), (kinds, judges)).copy()
    theta = _rectified_fit(battles, weights)
    covariance = _covariance(battles, theta, weights, member, member_unlabelled)
    one = float(weights[0, 0]) if weights.size == 1 else float("nan")
    return LogisticEstimate(theta, np.sqrt(np.diag(covariance)), one, int(w.sum()), int(w_u.sum()), covariance, weights)
