"""Win rates against a baseline, as AlpacaEval defines them.

Definitions follow tatsu-lab/alpaca_eval, `src/alpaca_eval/metrics/helpers.py` (`describe_head2head`)
and `metrics/glm_winrate.py`; the columns keep AlpacaEval's names and units (percent):

- `win_rate`: the mean over prompts of the judge's preference for the model, a number in [0, 1]
  (AlpacaEval's `preference − 1`: a weighted judge's probability that the model's output is better,
  1 or 0 for a plain verdict, ½ for a tie);
- `standard_error`: that mean's standard error (sample standard deviation / √n);
- `n_wins`, `n_wins_base`, `n_draws`, `n_total`: preferences above, below and exactly at ½, and all;
- `discrete_win_rate`: each preference rounded to a win, a loss or (exactly ½) a draw, draws half;
- `avg_length`: the model's mean output length in characters, truncated as AlpacaEval's CSV has it
  (AlpacaEval averages over every output of the model, judged or not; evalhub over the judged ones);
- `length_controlled_winrate` and `lc_standard_error`: see `length_controlled`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg, sparse, special

from evalhub.core.statistics import logistic

MIN_PROMPTS = 10  # below this a win rate shows its n and no standard error, and no length control is fitted
PROMPT_RIDGE = 1.0  # prior precision of a prompt's difficulty (logit units) when it is estimated
# tanh(Δlength / SD) varying less than this within every model (lengths equal, or one outlier saturating
# the rest at ±1): the length slope is not told apart from the models' intercepts.
LENGTH_VARIES = 1e-9
LENGTH_CONSTANT = "length does not vary within models: length control not identifiable"
# The fit's information matrix, columns at unit scale, with a reciprocal condition number (LAPACK's 1-norm
# estimate) below this: a direction the data do not fix (collinear columns, or preferences separated).
CONDITION_LIMIT = 1e-10

SEPARATED = (
    "the preferences are separated by length: the fit has no finite solution, so length control is not identifiable"
)
SEPARATION_TOLERANCE = 1e-9  # the separating programme's optimum, per row, that counts as above 0


class NotIdentifiable(ValueError):
    """The data do not fix the fitted coefficients; the message says why, for the page."""


@dataclass(frozen=True)
class Comparison:
    """One prompt's judged pair of the model against the baseline."""

    model: str
    prompt: str
    preference: float  # the judge's preference for the model in [0, 1]; ½ a tie
    model_length: int  # characters, as AlpacaEval's str.len()
    baseline_length: int
    difficulty: float | None = None  # AlpacaEval's instruction_difficulty of the prompt, when known


@dataclass(frozen=True)
class WinRate:
    """One model's row, in AlpacaEval's leaderboard columns (percent where AlpacaEval uses percent)."""

    model: str
    win_rate: float
    standard_error: float | None  # None below MIN_PROMPTS
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int
    discrete_win_rate: float
    avg_length: int
    length_controlled_winrate: float | None = None
    lc_standard_error: float | None = None  # the LC estimate's own standard error (see `length_controlled`)
    lc_note: str = ""  # why there is no length-controlled figure, or how difficulty was stood in for
    lc_prediction_sem: float | None = None  # AlpacaEval's `lc_standard_error` (see LengthControl)


def head_to_head(model: str, preferences: Sequence[float], lengths: Sequence[int]) -> WinRate:
    """AlpacaEval's `describe_head2head` (absolute scoring rule) and its discrete win rate."""
    p = np.asarray(preferences, dtype=float)
    n = len(p)
    if n == 0:
        raise ValueError(f"{model}: no judged prompts.")
    wins, losses = int((p > 0.5).sum()), int((p < 0.5).sum())
    draws = n - wins - losses
    return WinRate(
        model=model,
        win_rate=float(p.mean()) * 100,
        standard_error=float(p.std(ddof=1) / math.sqrt(n)) * 100 if n >= MIN_PROMPTS else None,
        n_wins=wins,
        n_wins_base=losses,
        n_draws=draws,
        n_total=n,
        discrete_win_rate=(wins + 0.5 * draws) / n * 100,
        # AlpacaEval's CSV truncates the mean length to an integer (2033.74 → 2033).
        avg_length=int(float(np.mean(lengths))),
    )


@dataclass(frozen=True)
class LengthControl:
    """The fitted length-controlled GLM of every model judged against one baseline by one judge."""

    winrate: dict[str, float]  # percent
    standard_error: dict[str, float]  # percent: the estimate's own (delta method, clustered sandwich)
    # percent: AlpacaEval's `lc_standard_error`, the SEM of the per-prompt predictions at Δlength = 0
    # (`pd.Series(predicted).sem()`): how the predictions spread over prompts, not the fit's uncertainty
    prediction_sem: dict[str, float]
    length_slope: float  # φ: logit change per unit of tanh(standardised length difference)
    difficulty: str  # "given" (AlpacaEval's instruction_difficulty), "estimated" or "none"
    skipped: dict[str, str]  # model → why it has no controlled figure


def length_controlled(comparisons: Sequence[Comparison], min_prompts: int = MIN_PROMPTS) -> LengthControl:
    """AlpacaEval's length-controlled win rate (Dubois et al. 2024, `glm_winrate.py`): a logistic GLM of
    the judge's preference fitted on the continuous preferences (a quasi-likelihood: the preference is
    the target, not a rounded label),

        logit P(model preferred on prompt i) = θ_model + φ·tanh(Δlength_i / SD_model) + difficulty term,

    predicted at Δlength = 0 and averaged over the model's prompts. Δlength = model − baseline characters,
    standardised by its standard deviation over that model's prompts, as AlpacaEval does.

    Where this differs from AlpacaEval, and why:
    - one length slope φ is shared by every model compared with the same baseline by the same judge.
      AlpacaEval fits φ per model but regularises each fit towards its own baseline's length
      sensitivity, measured on annotations of the baseline's verbose and concise variants that live
      outside its repository (`df_gamed.csv`, weight λ = 0.2); the shared slope plays that role with
      data the user has;
    - the difficulty term is ψ_model · d_i when every prompt has `instruction_difficulty` (AlpacaEval's
      own form); otherwise each prompt's difficulty γ_i is estimated from all models' preferences on it
      with a N(0, 1/PROMPT_RIDGE) prior (needs at least two models; with one, there is no term);
    - plain maximum likelihood (the prior on γ aside), not scikit-learn's L1 path with 5-fold CV.

    Standard errors come from the delta method on the sandwich covariance clustered by prompt: the
    uncertainty of the estimate itself. AlpacaEval's `lc_standard_error` is another quantity, the SEM
    of the per-prompt predictions at Δlength = 0, which spread only through the difficulty term and
    leave out the fitted coefficients' own error; it is kept beside ours as `prediction_sem`. On
    AlpacaEval's files, FuseChat: published 0.667, ours 1.32, evalhub's prediction SEM 0.40 (its
    estimated difficulties are shrunk towards 0, so its predictions spread less than AlpacaEval's)."""
    counts = Counter(c.model for c in comparisons)
    skipped = {
        m: f"{n} prompts; length control needs at least {min_prompts}." for m, n in counts.items() if n < min_prompts
    }
    skipped |= _separated(c for c in comparisons if c.model not in skipped)
    kept_models = sorted(m for m in counts if m not in skipped)
    rows = [c for c in comparisons if c.model not in skipped]
    if not rows:
        return LengthControl({}, {}, {}, 0.0, "none", skipped)
    given = all(c.difficulty is not None and math.isfinite(c.difficulty) for c in rows)
    prompts = sorted({c.prompt for c in rows})
    m_index = {m: i for i, m in enumerate(kept_models)}
    p_index = {p: i for i, p in enumerate(prompts)}
    n, k = len(rows), len(kept_models)
    model_of = np.array([m_index[c.model] for c in rows])
    prompt_of = np.array([p_index[c.prompt] for c in rows])
    delta = np.array([c.model_length - c.baseline_length for c in rows], dtype=float)
    scaled = np.zeros(n)
    for i in range(k):
        mine = model_of == i
        spread = delta[mine].std(ddof=1) if mine.sum() > 1 else 0.0
        scaled[mine] = np.tanh(delta[mine] / spread) if spread > 0 else 0.0
    y = np.array([c.preference for c in rows], dtype=float)
    if not any(np.ptp(scaled[model_of == i]) > LENGTH_VARIES for i in range(k)):
        # φ would be a second intercept for each model: any value fits, and the controlled figure is
        # whatever the solver stopped at.
        return LengthControl({}, {}, {}, 0.0, "none", skipped | dict.fromkeys(kept_models, LENGTH_CONSTANT))

    if given:
        difficulty, extra, mode = np.array([c.difficulty for c in rows], dtype=float), k, "given"
        extra_columns = (np.arange(n), k + 1 + model_of, difficulty)
    elif k >= 2:
        extra, mode = len(prompts), "estimated"
        extra_columns = (np.arange(n), k + 1 + prompt_of, np.ones(n))
    else:
        extra, mode = 0, "none"
        extra_columns = (np.array([], dtype=int), np.array([], dtype=int), np.array([]))
    width = k + 1 + extra
    r = np.arange(n)

    def design_with(length: np.ndarray) -> sparse.csr_matrix:
        return sparse.csr_matrix(
            (
                np.concatenate([np.ones(n), length, extra_columns[2]]),
                (np.concatenate([r, r, extra_columns[0]]), np.concatenate([model_of, np.full(n, k), extra_columns[1]])),
            ),
            shape=(n, width),
        )

    design = design_with(scaled)
    # At Δlength = 0 only the length column is zeroed: the same matrix made with zeros there (a copy made
    # through LIL, a Python list per row, was a sixth of a worker's win-rate refresh at ten million labels).
    at_zero = design_with(np.zeros(n))
    penalty = np.zeros(width)
    if mode == "estimated":
        penalty[k + 1 :] = PROMPT_RIDGE
    if _separable(design[:, np.flatnonzero(penalty == 0)], y):
        return LengthControl({}, {}, {}, 0.0, mode, skipped | dict.fromkeys(kept_models, SEPARATED))
    theta = _fit_logistic(design, y, penalty)

    try:
        covariance = _clustered_sandwich(design, y, theta, penalty, prompt_of)
    except NotIdentifiable as why:
        return LengthControl({}, {}, {}, 0.0, mode, skipped | dict.fromkeys(kept_models, str(why)))
    predicted = special.expit(at_zero @ theta)
    slope = predicted * (1 - predicted)
    winrate, errors, spread = {}, {}, {}
    for m, i in m_index.items():
        mine = model_of == i
        winrate[m] = float(predicted[mine].mean()) * 100
        spread[m] = float(predicted[mine].std(ddof=1) / math.sqrt(mine.sum())) * 100
        gradient = np.asarray(at_zero[mine].multiply(slope[mine][:, None]).sum(axis=0)).ravel() / mine.sum()
        errors[m] = math.sqrt(max(float(gradient @ covariance @ gradient), 0.0)) * 100
    return LengthControl(winrate, errors, spread, float(theta[k]), mode, skipped)


def _separated(comparisons: Iterable[Comparison]) -> dict[str, str]:
    """Models the judge preferred on every prompt, or the baseline on every prompt: their coefficient has
    no finite estimate, and a controlled figure would be whatever the solver stopped at."""
    extremes: dict[str, set[float]] = {}
    for c in comparisons:
        extremes.setdefault(c.model, set()).add(c.preference if c.preference in (0.0, 1.0) else -1.0)
    return {
        model: f"the judge preferred {'the model' if seen == {1.0} else 'the baseline'} on every prompt: "
        "length control not identifiable"
        for model, seen in extremes.items()
        if seen in ({0.0}, {1.0})
    }


def _separable(design: sparse.csr_matrix, y: np.ndarray) -> bool:
    """Whether some direction β of the unpenalised coefficients never lowers the fit and raises it
    somewhere: xβ ≥ 0 where the preference is 1, ≤ 0 where it is 0, = 0 where it lies between (a
    fractional target is fitted worse by any move), > 0 in sum. Along β the likelihood rises for ever,
    so the fit has no finite solution (a penalised coefficient cannot run away: its prior stops it).
    A linear programme with β in [-1, 1] (Albert and Anderson 1984's separation, for fractional y)."""
    from scipy.optimize import linprog

    design = design[:, np.flatnonzero(np.asarray(abs(design).sum(axis=0)).ravel() > 0)]
    if design.shape[1] == 0:
        return False
    ones, zeros = y >= 1, y <= 0
    between = ~(ones | zeros)
    sign = np.where(ones, 1.0, np.where(zeros, -1.0, 0.0))
    signed = design.multiply(sign[:, None]).tocsr()
    result = linprog(
        -np.asarray(signed.sum(axis=0)).ravel(),
        A_ub=-signed[ones | zeros] if (ones | zeros).any() else None,
        b_ub=np.zeros(int((ones | zeros).sum())) if (ones | zeros).any() else None,
        A_eq=design[between] if between.any() else None,
        b_eq=np.zeros(int(between.sum())) if between.any() else None,
        bounds=(-1, 1),
        method="highs",
    )
    return bool(result.status == 0 and -result.fun > SEPARATION_TOLERANCE * max(1, len(y)))


def _fit_logistic(design: sparse.csr_matrix, y: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """The penalised quasi-likelihood fit; a column of zeros (every length difference 0) stays at 0."""
    return logistic.fit(design, y, penalty=penalty, pin=np.diag(_empty_columns(design)), tol=1e-9)


def _empty_columns(design: sparse.csr_matrix) -> np.ndarray:
    return np.where(np.asarray(abs(design).sum(axis=0)).ravel() == 0, 1.0, 0.0)


def _clustered_sandwich(
    design: sparse.csr_matrix, y: np.ndarray, theta: np.ndarray, penalty: np.ndarray, cluster: np.ndarray
) -> np.ndarray:
    """H⁻¹ B H⁻¹ with B the outer products of the score summed per cluster (a prompt's rows for every
    model share its difficulty, so they are not independent)."""
    p = special.expit(design @ theta)
    hessian = logistic.information(design, p * (1 - p)) + np.diag(penalty + _empty_columns(design))
    # Each column scaled to unit information first, so that a condition number measures collinearity and
    # separation, not the columns' units. One Cholesky factor gives both the condition (LAPACK's estimate
    # from it) and the inverse: an eigendecomposition beside np.linalg.inv did the cubic work twice.
    scale = np.sqrt(np.maximum(np.diag(hessian), np.finfo(float).tiny))
    scaled = hessian / np.outer(scale, scale)
    singular = NotIdentifiable(
        "length control not identifiable on these data (lengths and preferences leave the fit singular)"
    )
    try:
        factor = linalg.cho_factor(scaled)
    except (linalg.LinAlgError, ValueError):  # not positive definite, or not finite
        raise singular from None
    norm, uplo = float(np.abs(scaled).sum(axis=0).max()), "L" if factor[1] else "U"
    rcond, info = linalg.lapack.dpocon(factor[0], norm, uplo=uplo)
    if info != 0 or not rcond > CONDITION_LIMIT:
        raise singular
    scores = design.multiply((y - p)[:, None]).tocsr()
    groups = sparse.csr_matrix(
        (np.ones(len(cluster)), (cluster, np.arange(len(cluster)))), shape=(int(cluster.max()) + 1, len(cluster))
    )
    per_cluster = (groups @ scores).toarray()
    bread = linalg.cho_solve(factor, np.eye(len(scale))) / np.outer(scale, scale)
    return np.asarray(bread @ (per_cluster.T @ per_cluster) @ bread)


def win_rates(comparisons: Sequence[Comparison], min_prompts: int = MIN_PROMPTS) -> list[WinRate]:
    """Every model's row, best win rate first: AlpacaEval's columns, with the length-controlled win rate
    fitted over all the models together (see `length_controlled`)."""
    by_model: dict[str, list[Comparison]] = {}
    for c in comparisons:
        by_model.setdefault(c.model, []).append(c)
    control = length_controlled(comparisons, min_prompts)
    note = {
        "given": "",
        "estimated": "prompt difficulty estimated from every model's preferences (no instruction_difficulty given)",
        "none": "no prompt difficulty term (one model and no instruction_difficulty given)",
    }[control.difficulty]
    rows = []
    for model, mine in by_model.items():
        row = head_to_head(model, [c.preference for c in mine], [c.model_length for c in mine])
        if model in control.winrate:
            row = replace(
                row,
                length_controlled_winrate=control.winrate[model],
                lc_standard_error=control.standard_error[model],
                lc_note=note,
                lc_prediction_sem=control.prediction_sem[model],
            )
        else:
            row = replace(row, lc_note=control.skipped.get(model, ""))
        rows.append(row)
    return sorted(rows, key=lambda row: (-row.win_rate, row.model))
