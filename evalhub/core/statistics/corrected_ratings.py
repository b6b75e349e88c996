"""Prediction-powered Bradley–Terry ratings: a judge's battles corrected by people's labels on some.

`corrected_bradley_terry` turns `logistic_ppi`'s fits into the judge lab's corrected board, by the
estimator `estimators.decide` picks (PPI++, stratified by category, several judges, or people alone),
with every interval cluster-robust by prompt where the battles' prompts are given, and identical battles
fitted once with their count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from evalhub.core.statistics.estimators import (
    AUTO,
    CLASSICAL,
    MULTI_JUDGE,
    PPI,
    STRATIFIED,
    Decision,
    decide,
    label_of,
)
from evalhub.core.statistics.logistic_ppi import LogisticEstimate, ppi_logistic
from evalhub.core.statistics.ppi import z_for

ELO = 400 / np.log(10)  # logit units to Elo points, as Chatbot Arena reports ratings
MIN_LABELS = 10  # below this many people's labels no corrected board is fitted

# The estimators this module fits a board by (PPI++'s logistic form, within strata or with several judges).
BRADLEY_TERRY_FORMS = (PPI, STRATIFIED, MULTI_JUDGE, CLASSICAL)


@dataclass(frozen=True)
class CorrectedRating:
    """A model's Bradley–Terry rating (Elo scale, centred on 1000 over the models) from the judge alone,
    from people alone, and the judge's corrected by people's labels, with 95 % intervals."""

    model: str
    judge: float | None  # None where the judge's battles rate no model finitely (see `rank_every_model`)
    judge_low: float | None
    judge_high: float | None
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
    judge_weight: float  # PPI++'s λ; NaN where there are several (one per stratum or per judge)
    note: str = ""
    prompts: int = 0  # the prompts the battles are on, where the intervals are cluster-robust by prompt
    estimator: str = PPI  # which produced the corrected column (estimators.ESTIMATORS), and why
    estimator_reason: str = ""
    judges: int = 1  # judges whose corrections it combines (several judges: this one and others)
    strata: int = 0  # strata with a weight of their own (stratified)

    @property
    def estimator_label(self) -> str:
        return label_of(self.estimator)


def _centred(estimate: LogisticEstimate, models: int, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratings centred on their mean (the last model, left out of the design, at θ = 0) with intervals
    from the full covariance."""
    centring = np.eye(models)[:, :-1] - np.full((models, models - 1), 1.0 / models)
    centred = centring @ estimate.coefficients
    se = np.sqrt(np.einsum("ij,jk,ik->i", centring, estimate.covariance, centring))
    z = z_for(alpha)
    return 1000 + ELO * centred, 1000 + ELO * (centred - z * se), 1000 + ELO * (centred + z * se)


def rank_every_model(first: np.ndarray, second: np.ndarray, share: np.ndarray, models: int) -> bool:
    """Whether these battles give every model a finite Bradley–Terry rating. The maximum-likelihood
    ratings exist exactly when the graph with an edge from i to j wherever i scored against j (a win or
    a tie, any share above 0) is strongly connected (Zermelo 1929; Ford 1957): otherwise some group never
    loses to the rest, its ratings run off to infinity, and a fit stops wherever its optimiser does (the
    same battles in another order gave a judge's interval as ±1.4e10 or ±8.1e9 Elo)."""
    from scipy.sparse.csgraph import connected_components

    forward, backward = share > 0, share < 1
    rows = np.concatenate([first[forward], second[backward]])
    columns = np.concatenate([second[forward], first[backward]])
    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(models, models))
    components: int = connected_components(graph, directed=True, connection="strong")[0]
    return components == 1


FEW_SHARES = 8  # a judge with at most this many distinct shares (verdicts, a few levels) has battles alike


def _kinds(codes: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Identical battles found from integer codes (each with its number of values): the first row of
    each kind, each row's kind and each kind's count; None where the codes do not fit one int64 key."""
    if np.prod([float(size) for _, size in codes]) >= 2.0**62:
        return None
    key = np.zeros(len(codes[0][0]), dtype=np.int64)
    for code, size in codes:  # one integer per kind (a row-wise unique of the table sorted it lexically: slow)
        key = key * size + code
    _, first_of_kind, kind_of, count = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first_of_kind, kind_of.ravel(), count


def corrected_bradley_terry(
    model_1: Sequence[str],
    model_2: Sequence[str],
    judge_share: Sequence[float],
    people_share: Sequence[float],
    alpha: float = 0.05,
    clusters: Sequence[object] | np.ndarray | None = None,
    *,
    categories: Sequence[str] | np.ndarray | None = None,
    others: np.ndarray | None = None,
    asked: str = AUTO,
) -> CorrectedBoard | str:
    """Bradley–Terry ratings from a judge's battles corrected by people's labels on some of them
    (prediction-powered logistic regression). `judge_share` is the judge's share for model_1 (1 a
    win, ½ a tie, or its probability); `people_share` people's, NaN where nobody labelled the battle.
    `clusters` (each battle's prompt) make every interval cluster-robust: several battles on one prompt
    are not independent (see `ppi_logistic`). `categories` (each battle's prompt category) allow the
    stratified estimator, `others` (battles × judges, NaN where one did not judge) several judges' at
    once; `asked` names the estimator wanted (`estimators.decide` says which serves, and why).
    Returns the board, or why there is none."""
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
    if not rank_every_model(column_1[labelled], column_2[labelled], people[labelled], len(models)):
        # Said before any fit: fitted, such labels gave a board or a singular matrix by the battles' order.
        return (
            "people's labels do not rank every model (some never lose, or never win, against the rest): "
            "no Bradley–Terry ratings exist to correct"
        )
    complete = np.zeros((len(judge), 0)) if others is None else np.asarray(others, dtype=float).reshape(len(judge), -1)
    complete = complete[:, ~np.isnan(complete).any(axis=0)]  # only judges that judged every battle combine
    # Categories only where there are two or more: one category is no stratum, and reading it as strings
    # cost a judge lab refresh 0.3 s at a million judgments, for nothing.
    groups = None
    if categories is not None and len(pd.unique(np.asarray(categories, dtype=object))) > 1:
        groups = np.asarray(categories, dtype=object).astype(str)
    decision = decide(
        people[labelled],
        judge[labelled],
        judge[~labelled],
        strata=None if groups is None else list(groups[labelled]),
        strata_unlabelled=None if groups is None else list(groups[~labelled]),
        judges=1 + complete.shape[1],
        asked=asked,
    )
    if decision.estimator not in BRADLEY_TERRY_FORMS:
        # A registered estimator of means only: the board says so rather than fit PPI++ under its name.
        why = f"{label_of(decision.estimator)} has no Bradley–Terry form: PPI++ instead"
        decision = Decision(PPI, f"{decision.reason}; {why}" if decision.reason else why)
    stratum = np.zeros(len(judge), dtype=np.int64)
    if decision.estimator == STRATIFIED and decision.strata is not None and decision.strata_unlabelled is not None:
        names_of = np.empty(len(judge), dtype=object)
        names_of[labelled], names_of[~labelled] = decision.strata, decision.strata_unlabelled
        stratum = pd.factorize(names_of.astype(str), sort=True)[0]
    judges = np.column_stack([judge, complete]) if decision.estimator == MULTI_JUDGE else judge[:, None]
    # Identical battles (the same two models, the judges' shares, people's and the stratum) are fitted
    # once, with their count: a judge of plain verdicts has at most models² × 12 kinds of battle however
    # many it judged. Judges of probabilities have nearly as many kinds as battles: finding them would
    # cost more than it saves.
    said = np.where(labelled, people, -1.0)
    codes: list[tuple[np.ndarray, int]] = [(column_1, len(models)), (column_2, len(models))]
    for values in [*judges.T, said]:  # hashed, not sorted: a sort of each column was most of this set-up
        code, levels = pd.factorize(values)
        codes.append((code, len(levels)))
    codes.append((stratum, int(stratum.max()) + 1))
    kinds = _kinds(codes) if all(size <= FEW_SHARES for _, size in codes[2 : 2 + judges.shape[1]]) else None
    first_of_kind, kind_of, count = kinds or (np.arange(len(judge)), np.arange(len(judge)), np.ones(len(judge), int))
    first_code, second_code = column_1[first_of_kind], column_2[first_of_kind]
    design = np.zeros((len(first_of_kind), len(models)))
    design[np.arange(len(first_of_kind)), first_code] += 1
    design[np.arange(len(first_of_kind)), second_code] -= 1
    design = design[:, :-1]  # the last model at θ = 0: the ratings are identified
    shares, said, stratum, judges = (
        judge[first_of_kind],
        said[first_of_kind],
        stratum[first_of_kind],
        judges[first_of_kind],
    )
    known = said >= 0
    member = None
    if clusters is not None:  # how many battles of each kind each prompt holds
        prompt_code = pd.factorize(np.asarray(clusters))[0]
        member = sparse.csr_matrix(
            (np.ones(len(kind_of)), (prompt_code, kind_of)),
            shape=(int(prompt_code.max()) + 1, len(first_of_kind)),
        )
    x, x_u, y = design[known], design[~known], said[known]
    w, w_u = count[known], count[~known]
    m, m_u = (None, None) if member is None else (member[:, np.flatnonzero(known)], member[:, np.flatnonzero(~known)])
    rows = {"counts": w, "counts_unlabelled": w_u, "member": m, "member_unlabelled": m_u}
    several = decision.estimator == MULTI_JUDGE
    strata = (
        {"strata": stratum[known], "strata_unlabelled": stratum[~known]} if decision.estimator == STRATIFIED else {}
    )
    # Where the judge's verdicts rank no model finitely, its own column is left empty, not fitted to
    # wherever an optimiser stops; the people's and the corrected columns need the people's labels.
    judge_rated = rank_every_model(column_1, column_2, judge, len(models))
    try:
        alone = ppi_logistic(x, y, shares[known], x_u, shares[~known], 0.0, **rows)
        corrected = alone
        if decision.estimator != CLASSICAL:
            yhat, yhat_u = (judges[known], judges[~known]) if several else (shares[known], shares[~known])
            corrected = ppi_logistic(x, y, yhat, x_u, yhat_u, None, **rows, **strata)
        judge_only = (
            None
            if not judge_rated
            else ppi_logistic(
                design,
                shares,
                shares,
                x_u,
                shares[~known],
                0.0,
                counts=count,
                counts_unlabelled=w_u,
                member=member,
                member_unlabelled=m_u,
            )
        )
    except np.linalg.LinAlgError:
        return "the battles do not connect every model (or one always wins): no ratings can be fitted"
    judge_board = _centred(judge_only, len(models), alpha) if judge_only is not None else None
    corrected_board = _centred(corrected, len(models), alpha)
    people_board = _centred(alone, len(models), alpha)
    ratings = [
        CorrectedRating(
            model,
            *((None, None, None) if judge_board is None else (float(part[i]) for part in judge_board)),
            *(float(part[i]) for part in corrected_board),
            *(float(part[i]) for part in people_board),
        )
        for i, model in enumerate(models)
    ]
    ratings.sort(key=lambda r: -r.corrected)
    return CorrectedBoard(
        ratings,
        n,
        len(judge),
        corrected.lam,
        prompts=0 if member is None else int(member.shape[0]),
        estimator=decision.estimator,
        estimator_reason=decision.reason,
        judges=judges.shape[1],
        strata=int(stratum.max()) + 1 if strata else 0,
    )
