"""Every corrected mean's estimator in one place, with the choice among them stated.

A corrected win rate is the judge's mean preference corrected by people's labels on some of the same
pairs. Which estimator gives the narrowest valid interval depends on the data:

- classical: people's labels alone (no judge, or a judge that carries no information);
- PPI++ (Angelopoulos, Duchi & Zrnic 2023; `ppi.ppi_mean`): one judge, one weight λ for all pairs;
- stratified PPI++ (Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen, "Stratified prediction-powered
  inference for effective hybrid evaluation of language models", NeurIPS 2024): a judge much better on
  some categories than on others gets a weight per category, θ̂ = Σ_k w_k θ̂_k with w_k the category's
  share of all judged pairs and θ̂_k PPI++ within it; SE² = Σ_k w_k² SE_k²;
- several judges at once (multiple-prediction PPI; the control-variate form of PPI with a vector of
  predictions, as in Miao, Miao, Wu, Zhao & Lu 2023 and the multi-judge estimators of GLIDE): θ̂ =
  mean(Y) + λᵀ(mean(Ŷ′) − mean(Ŷ)) with λ = ((1 + n/N)·Cov(Ŷ))⁻¹·Cov(Ŷ, Y), which is PPI++'s λ when
  there is one judge, before PPI++'s clip to [0, 1] (GLIDE clips nothing either; its cross-covariance
  divides by n − 1 where evalhub's, as ppi-python's, divides by n: docs/corrected.md).

`choose` applies a rule fixed in advance (never the narrower of two intervals, which would make the
chosen one too narrow): several judges when others judged every one of the same pairs; otherwise
stratified when the judge's error differs across categories (the Brown–Forsythe test of equal spread of
Y − Ŷ: a judge right on one category and guessing on another errs as often in either direction on
both, so its mean error need not differ, but its spread does; p < 0.01) and each category has enough
labels; otherwise PPI++; people alone when the judge cannot be used. Stratified PPI++ asked for where
prompts have no categories uses bins of the judge's confidence |Ŷ − ½|, fixed in advance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy.stats import levene

from evalhub.core.registry import Registry
from evalhub.core.statistics.ppi import MeanEstimate, Values, classical_mean, ppi_mean
from evalhub.core.statistics.ppi_extended import multi_judge_ppi_mean, stratified_ppi_mean

CLASSICAL, PPI, STRATIFIED, MULTI_JUDGE = "classical", "ppi++", "stratified", "multi-judge"
AUTO = "auto"
# What an estimator may read beyond people's labels and the judge's, declared by each (`Estimator.reads`):
# a board gathers other judges' labels or the prompts' categories only where the estimator it asks for
# reads them.
CATEGORIES, OTHER_JUDGES = "categories", "other judges"
# The estimators whose intervals have an anytime-valid form (confidence sequences, the win-rate boards'
# "anytime"): those evalhub.core.statistics.sequential computes, nothing an estimator merely declares.
ANYTIME_FORMS = (PPI, CLASSICAL)


def choices() -> list[tuple[str, str]]:
    """What a page's Estimator control offers: AUTO first, then every registered estimator."""
    return [(AUTO, "chosen by evalhub"), *((name, ESTIMATORS[name].label) for name in ESTIMATORS)]


def label_of(name: str) -> str:
    """An estimator's name as a reader knows it (the name itself where none is registered)."""
    return ESTIMATORS[name].label if name in ESTIMATORS else name


def estimator_asked(value: str) -> tuple[str, str]:
    """The estimator a page's query names (blank: AUTO), or AUTO and why the named one is unknown."""
    name = value or AUTO
    if name != AUTO and name not in ESTIMATORS:
        return AUTO, "unknown estimator: chosen by evalhub"
    return name, ""


@dataclass(frozen=True)
class Correction:
    """How a board is corrected by people's labels: by which estimator (AUTO: by the rule of `choose`),
    and whether its intervals stay valid however often one looks (confidence sequences: the win-rate
    boards'; the judge lab's boards have none). The win-rate boards and the judge lab's corrected boards
    take this one value. It is no part of what a judge lab report covers (the data's scope): a report is
    computed once for its scope, and its boards by another estimator are computed and kept apart, so
    choosing one never recomputes every measure."""

    estimator: str = AUTO
    anytime: bool = False

    def __post_init__(self) -> None:
        if self.estimator != AUTO and self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}: one of {', '.join(dict(choices()))}")

    @classmethod
    def asked(cls, value: str, *, anytime: bool = False) -> tuple[Correction, str]:
        """The correction a page's query names, and why the estimator it names is unknown (AUTO then)."""
        name, error = estimator_asked(value)
        return cls(name, anytime), error

    @property
    def by_rule(self) -> bool:
        return self.estimator == AUTO

    @property
    def key(self) -> str:
        return f"{self.estimator}|{int(self.anytime)}"

    def reads(self, source: str) -> bool:
        """Whether the estimator asked for (under AUTO: any evalhub may choose) reads `source`
        (CATEGORIES, OTHER_JUDGES), so a board gathers it only then."""
        if self.by_rule:
            return any(source in estimator.reads for estimator in ESTIMATORS.values() if estimator.by_rule)
        return source in ESTIMATORS[self.estimator].reads

    @property
    def has_anytime_form(self) -> bool:
        """Whether the estimator asked for has intervals valid however often one looks (AUTO: PPI++'s)."""
        return self.by_rule or self.estimator in ANYTIME_FORMS


MIN_PER_STRATUM = 10  # people's labels a category needs to be a stratum of its own
HETEROGENEITY_P = 0.01  # the judge's error must differ across categories at this level to stratify


@dataclass(frozen=True)
class Chosen:
    estimate: MeanEstimate
    estimator: str  # a registered estimator's name
    reason: str
    # What the correction predicts people's labels from, on the labelled pairs (one column per
    # predictor), where its weights are not clipped (several judges): its ceiling is `label_ceiling` of
    # these. Otherwise the judge's label alone, within `strata` where given: `clipped_ceiling`.
    predictors: np.ndarray | None = None
    strata: Sequence[str] | None = None


def strata_of(
    labelled: Sequence[str], unlabelled: Sequence[str], least: int = MIN_PER_STRATUM
) -> tuple[list[str], list[str]]:
    """Categories with fewer than `least` labels (or no unlabelled pair) pooled into one stratum "" so
    each stratum's PPI++ rests on enough labels; the rest as they are."""
    count: dict[str, int] = {}
    for category in labelled:
        count[category] = count.get(category, 0) + 1
    rest = set(unlabelled)
    kept = {category for category, n in count.items() if n >= least and category in rest}
    return [c if c in kept else "" for c in labelled], [c if c in kept else "" for c in unlabelled]


# Bins of the judge's distance from a tie, |Ŷ − ½|, fixed in advance (bins drawn from people's labels
# would make the strata depend on the outcome): close calls, leaning, sure.
CONFIDENCE_BINS = (0.15, 0.35)
CONFIDENCE_NAMES = ("close call", "leaning", "sure")


def confidence_strata(yhat: Values) -> list[str]:
    """Each pair's bin of the judge's confidence (the strata where a prompt has no category)."""
    distance = np.abs(np.asarray(yhat, dtype=float) - 0.5)
    return [CONFIDENCE_NAMES[i] for i in np.digitize(distance, CONFIDENCE_BINS)]


def error_differs_by_stratum(y: Values, yhat: Values, strata: Sequence[str]) -> float:
    """The p-value of the Brown–Forsythe test (Levene's, about the median) that the judge's error Y − Ŷ
    spreads alike in every stratum (1.0 with fewer than two strata of two labels)."""
    residual = np.asarray(y, dtype=float) - np.asarray(yhat, dtype=float)
    groups = np.asarray(strata, dtype=object)
    parts = [residual[groups == stratum] for stratum in sorted(set(groups.tolist()))]
    parts = [part for part in parts if len(part) >= 2]
    if len(parts) < 2 or all(np.ptp(part) == 0 for part in parts):
        return 1.0
    with np.errstate(all="ignore"):
        p = float(levene(*parts, center="median").pvalue)
    return p if np.isfinite(p) else 1.0


@dataclass(frozen=True)
class Decision:
    """Which estimator serves, why, and (stratified) each labelled and unlabelled row's stratum."""

    estimator: str  # a registered estimator's name
    reason: str
    strata: list[str] | None = None
    strata_unlabelled: list[str] | None = None


@dataclass(frozen=True)
class Labels:
    """What an estimator reads: people's labels `y` and the judge's `yhat` on the same pairs, the judge's
    `yhat_unlabelled` on the rest; each pair's category where known (CATEGORIES); and how many judges
    judged every one of the pairs, this one included, with their labels side by side where given
    (OTHER_JUDGES: n × k and N × k, this judge's first)."""

    y: np.ndarray
    yhat: np.ndarray
    yhat_unlabelled: np.ndarray
    strata: Sequence[str] | None = None
    strata_unlabelled: Sequence[str] | None = None
    judges: int = 1
    together: tuple[np.ndarray, np.ndarray] | None = None


class Estimator:
    """A corrected mean's estimator. `consider` says whether it serves some labels (a Decision) or why
    not; `mean` computes it. An estimator declares what it reads beyond people's and the judge's labels
    (`reads`) and whether evalhub may choose it by its rule (`by_rule`: tried in registration order
    before PPI++, which serves where none does). Register an instance in ESTIMATORS
    (docs/extending/estimators.md)."""

    name: ClassVar[str]
    label: ClassVar[str]
    reads: ClassVar[frozenset[str]] = frozenset()
    by_rule: ClassVar[bool] = False

    def consider(self, labels: Labels, *, asked: bool) -> Decision | str:
        """A Decision where this estimator serves `labels`, else why not ("" to say nothing). `asked`:
        named by the reader, not tried by evalhub's rule."""
        return Decision(self.name, "as asked" if asked else "")

    def mean(self, labels: Labels, decision: Decision, alpha: float) -> Chosen:
        raise NotImplementedError


class SeveralJudges(Estimator):
    name, label = MULTI_JUDGE, "several judges (multi-judge PPI)"
    reads, by_rule = frozenset({OTHER_JUDGES}), True

    def consider(self, labels: Labels, *, asked: bool) -> Decision | str:
        if labels.judges > 1:
            return Decision(
                self.name, f"{labels.judges} judges judged every one of these pairs: their corrections combined"
            )
        return "several judges: no other judge judged every one of these pairs" if asked else ""

    def mean(self, labels: Labels, decision: Decision, alpha: float) -> Chosen:
        if labels.together is None:
            raise ValueError("several judges' correction needs every judge's labels side by side")
        labelled, unlabelled = labels.together
        estimate = multi_judge_ppi_mean(labels.y, labelled, unlabelled, alpha)
        return Chosen(estimate, self.name, decision.reason, labelled)


class Stratified(Estimator):
    name, label = STRATIFIED, "stratified PPI++"
    reads, by_rule = frozenset({CATEGORIES}), True

    def consider(self, labels: Labels, *, asked: bool) -> Decision | str:
        # Categories first; asked for, and where they give fewer than two strata, bins of the judge's own
        # confidence. Not under AUTO: a calibrated judge's error spreads more on close calls by its
        # nature (p(1 − p)), which the test would flag though one weight serves every bin.
        sources = []
        if labels.strata is not None and labels.strata_unlabelled is not None:
            sources.append(("category", labels.strata, labels.strata_unlabelled))
        if asked:
            sources.append(
                (
                    "the judge's confidence",
                    confidence_strata(labels.yhat),
                    confidence_strata(labels.yhat_unlabelled),
                )
            )
        for kind, labelled_strata, unlabelled_strata in sources:
            pooled, pooled_u = strata_of(list(labelled_strata), list(unlabelled_strata))
            kept = len(set(pooled))
            if kept < 2 or any(pooled.count(s) < 2 for s in set(pooled)) or not set(pooled) <= set(pooled_u):
                continue
            p = error_differs_by_stratum(labels.y, labels.yhat, pooled)
            if p < HETEROGENEITY_P:
                why = f"stratified by {kind} ({kept} strata): the judge's error differs across them, p = {p:.2g}"
                return Decision(self.name, why, pooled, pooled_u)
            if asked:
                why = f"stratified by {kind} ({kept} strata), as asked; the judge's error differs little, p = {p:.2g}"
                return Decision(self.name, why, pooled, pooled_u)
            return ""  # the strata that could be used showed no difference: no other split is tried
        return f"stratified: fewer than 2 strata with {MIN_PER_STRATUM} labels each" if asked else ""

    def mean(self, labels: Labels, decision: Decision, alpha: float) -> Chosen:
        if decision.strata is None or decision.strata_unlabelled is None:
            raise ValueError("stratified PPI++ needs each pair's stratum")
        estimate = stratified_ppi_mean(
            labels.y, labels.yhat, decision.strata, labels.yhat_unlabelled, decision.strata_unlabelled, alpha
        )
        return Chosen(estimate, self.name, decision.reason, strata=decision.strata)


class PredictionPowered(Estimator):
    """PPI++: serves wherever there are labels; evalhub's rule falls back to it."""

    name, label = PPI, "PPI++"

    def consider(self, labels: Labels, *, asked: bool) -> Decision | str:
        return Decision(self.name, "" if asked else "one judge, one weight for every pair")

    def mean(self, labels: Labels, decision: Decision, alpha: float) -> Chosen:
        estimate = ppi_mean(labels.y, labels.yhat, labels.yhat_unlabelled, alpha)
        return Chosen(estimate, self.name, decision.reason)


class PeopleAlone(Estimator):
    name, label = CLASSICAL, "people alone"

    def consider(self, labels: Labels, *, asked: bool) -> Decision | str:
        return Decision(self.name, "people's labels alone, as asked")

    def mean(self, labels: Labels, decision: Decision, alpha: float) -> Chosen:
        return Chosen(classical_mean(labels.y, alpha), self.name, decision.reason)


def _is_estimator(name: str, estimator: object) -> str:
    if not isinstance(estimator, Estimator) or getattr(estimator, "name", None) != name:
        return "not an Estimator of this name"
    return "" if type(estimator).mean is not Estimator.mean else "no mean: declared but not implemented"


# In the order evalhub's rule tries them (those with `by_rule`); PPI++ serves where none of them does.
ESTIMATORS: Registry[Estimator] = Registry(
    "estimator",
    docs="extending/estimators.md",
    check=_is_estimator,
    unknown=ValueError,
    entries={e.name: e for e in (SeveralJudges(), Stratified(), PredictionPowered(), PeopleAlone())},
)
FALLBACK = PPI


def decide(
    y: Values,
    yhat: Values,
    yhat_unlabelled: Values,
    *,
    strata: Sequence[str] | None = None,
    strata_unlabelled: Sequence[str] | None = None,
    judges: int = 1,
    asked: str = AUTO,
) -> Decision:
    """The estimator `asked` for, or under AUTO by the rule in this module's docstring, falling back,
    saying why, where the asked one cannot be used. `judges`: how many judges judged every one of the
    pairs (this one and others; 1 where no other did). Means and Bradley–Terry boards decide alike."""
    labels = Labels(
        np.asarray(y, dtype=float),
        np.asarray(yhat, dtype=float),
        np.asarray(yhat_unlabelled, dtype=float),
        strata=strata,
        strata_unlabelled=strata_unlabelled,
        judges=judges,
    )
    return _decide(labels, asked)


def _decide(labels: Labels, asked: str) -> Decision:
    notes: list[str] = []
    for estimator in ESTIMATORS.values():
        if estimator.name == asked or (asked == AUTO and estimator.by_rule):
            outcome = estimator.consider(labels, asked=estimator.name == asked)
            if isinstance(outcome, Decision):
                return replace(outcome, reason="; ".join(part for part in (*notes, outcome.reason) if part))
            if outcome:
                notes.append(outcome)
    fallback = ESTIMATORS[FALLBACK].consider(labels, asked=False)
    assert isinstance(fallback, Decision)  # PPI++ serves any labels
    why = fallback.reason if asked == AUTO else "PPI++ instead"
    return replace(fallback, reason="; ".join([*notes, why]))


def choose(
    y: Values,
    yhat: Values,
    yhat_unlabelled: Values,
    *,
    strata: Sequence[str] | None = None,
    strata_unlabelled: Sequence[str] | None = None,
    others: np.ndarray | None = None,
    others_unlabelled: np.ndarray | None = None,
    asked: str = AUTO,
    alpha: float = 0.05,
) -> Chosen:
    """The corrected mean by the estimator `decide` picks; `others` (n × k) and `others_unlabelled`
    (N × k): other judges' labels of the same pairs (NaN where one did not judge a pair)."""
    labelled, predicted, unlabelled = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    together = None
    # Several judges' weights need their labels' covariance on the unlabelled pairs: two of them at least
    # (a model with one pair nobody labelled raised here, and failed the win-rate boards' refresh).
    if others is not None and others_unlabelled is not None and np.size(others) > 0 and len(unlabelled) >= 2:
        both = np.column_stack([predicted, others]), np.column_stack([unlabelled, others_unlabelled])
        if not (np.isnan(both[0]).any() or np.isnan(both[1]).any()):
            together = both
    labels = Labels(
        labelled,
        predicted,
        unlabelled,
        strata=strata,
        strata_unlabelled=strata_unlabelled,
        judges=1 if together is None else together[0].shape[1],
        together=together,
    )
    decision = _decide(labels, asked)
    return ESTIMATORS[decision.estimator].mean(labels, decision, alpha)


def clipped_ceiling(y: Values, yhat: Values, strata: Sequence[str] | None = None) -> float:
    """`label_ceiling` for a correction that weighs the judge by one λ in [0, 1] within each stratum (one
    stratum unless given): PPI++ and stratified PPI++ clip their weights so, and a least-squares fit that
    may weigh the judge negatively (or past 1) promised more than they can give: "near its ceiling" then
    never showed. With unlimited judged pairs λ = clip(Cov(Y, Ŷ) / Var(Ŷ), 0, 1) within a stratum, and its
    level the stratum's own; R² is of that fit."""
    labels, predicted = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    if len(labels) < 2 or np.ptp(labels) == 0:
        return 1.0
    groups = (
        np.zeros(len(labels), dtype=int)
        if strata is None
        else np.unique(np.asarray(strata, dtype=object), return_inverse=True)[1].ravel()
    )
    residual = 0.0
    for group in np.unique(groups):
        mine = groups == group
        centred_y, centred_p = labels[mine] - labels[mine].mean(), predicted[mine] - predicted[mine].mean()
        spread = float(np.mean(centred_p**2))
        weight = float(np.clip(np.mean(centred_y * centred_p) / spread, 0.0, 1.0)) if spread > 0 else 0.0
        residual += float(np.sum((centred_y - weight * centred_p) ** 2))
    r2 = 1 - residual / float(np.sum((labels - labels.mean()) ** 2))
    return float("inf") if r2 >= 1 - 1e-12 else 1.0 / (1.0 - max(r2, 0.0))


def label_ceiling(y: Values, predictors: Values) -> float:
    """The most people's labels a label with these predictors beside it can be worth, per label:
    1 / (1 − R²), R² that of the least-squares fit of people's labels on the predictors (with a
    constant) where both are known; with one judge, R² = ρ², the squared correlation of its labels with
    people's. It is the variance-optimal linear correction's factor with unlimited judged pairs (Dorner,
    Nastl & Hardt, "Limits to scalable evaluation at the frontier: LLM as judge won't beat twice the
    data", ICLR 2025: a judge no more accurate than the models it judges has ρ² ≤ ½, so it at most halves
    the labels needed). Several judges' correction uses more predictors, with unclipped weights, so its
    ceiling is this one of all of them; PPI++ and stratified PPI++ clip theirs (`clipped_ceiling`)."""
    labels = np.asarray(y, dtype=float)
    columns = np.asarray(predictors, dtype=float)
    columns = columns[:, None] if columns.ndim == 1 else columns
    if len(labels) < 2 or np.ptp(labels) == 0:
        return 1.0
    design = np.column_stack([np.ones(len(labels)), columns])
    fitted = design @ np.linalg.lstsq(design, labels, rcond=None)[0]
    residual = float(np.sum((labels - fitted) ** 2))
    total = float(np.sum((labels - labels.mean()) ** 2))
    r2 = 1 - residual / total
    return float("inf") if r2 >= 1 - 1e-12 else 1.0 / (1.0 - max(r2, 0.0))
