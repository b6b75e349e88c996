"""A judge's win rate against a baseline corrected by people's labels on some of its pairs, beside
people's own (prediction-powered inference and the estimators of `evalhub.core.statistics.estimators`),
and several judges' preferences for a model aligned once for it (`JudgesOfModel`)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from evalhub.core.statistics.win_rates import MIN_PROMPTS


@dataclass(frozen=True)
class JudgesOfModel:
    """Several judges' preferences for one model, aligned by prompt once: rows are prompts, columns judges,
    NaN where a judge did not judge a prompt. Each judge's board takes the other judges as a slice of it;
    building them prompt by prompt for every board read judges² × prompts dictionaries per model (most of
    a worker's refresh at ten million judgments)."""

    judges: tuple[str, ...]
    row_of: Mapping[str, int]
    values: np.ndarray  # (prompts + 1) × judges; the last row is all NaN: a prompt no judge judged

    @classmethod
    def of(cls, preferences: Mapping[str, Mapping[str, float]]) -> JudgesOfModel:
        """From judge → prompt → preference, the judges in the order given."""
        judges = tuple(preferences)
        row_of: dict[str, int] = {}
        for found in preferences.values():
            for prompt in found:
                row_of.setdefault(prompt, len(row_of))
        values = np.full((len(row_of) + 1, len(judges)), np.nan)
        for column, found in enumerate(preferences.values()):
            if found:
                values[[row_of[prompt] for prompt in found], column] = list(found.values())
        return cls(judges, row_of, values)

    def without(self, judge: str) -> JudgesOfModel:
        if judge not in self.judges:
            return self
        column = self.judges.index(judge)
        kept = self.judges[:column] + self.judges[column + 1 :]
        return JudgesOfModel(kept, self.row_of, np.delete(self.values, column, axis=1))

    def at(self, prompts: Sequence[str]) -> np.ndarray:
        """prompts × judges: each prompt's preferences (NaN where a judge did not judge it)."""
        missing = len(self.values) - 1
        return self.values[[self.row_of.get(prompt, missing) for prompt in prompts]]

    def __len__(self) -> int:
        return len(self.judges)


@dataclass(frozen=True)
class CorrectedWinRate:
    """A judge's win rate corrected by people's labels on some of the same pairs (PPI++, evalhub.core.statistics.ppi),
    beside people's own; percent, as `win_rate`. Intervals are 95 %, and None below MIN_PROMPTS labels."""

    model: str
    n_human: int  # pairs people labelled that the judge judged too
    corrected_win_rate: float | None = None
    corrected_ci_low: float | None = None
    corrected_ci_high: float | None = None
    human_only_win_rate: float | None = None
    human_only_ci_low: float | None = None
    human_only_ci_high: float | None = None
    effective_n: float | None = None  # people's labels the corrected interval is worth
    judge_weight: float | None = None  # PPI++'s λ: 0 the judge is ignored, 1 plain PPI
    note: str = ""
    # The corrected SE² = label_variance / n_human + judge_term (percent²): what more labels would buy.
    label_variance: float | None = None
    judge_term: float | None = None
    estimator: str = ""  # which corrected estimator (evalhub.core.statistics.estimators), and why
    estimator_reason: str = ""
    anytime: bool = False  # intervals valid at every look (confidence sequences), not at one fixed n
    ceiling_n: float | None = None  # the most people's labels the corrected estimate could be worth with this judge
    ceiling_note: str = ""


def corrected_win_rate(
    model: str,
    judge: dict[str, float],
    people: dict[str, float],
    rounds: Sequence[Mapping[str, float]] = (),
    drawn: Collection[str] = (),
    *,
    categories: Mapping[str, str] | None = None,
    others: Sequence[Mapping[str, float]] | JudgesOfModel = (),
    estimator: str = "auto",
    anytime: bool = False,
) -> CorrectedWinRate:
    """`judge` and `people`: prompt → preference for the model in [0, 1] (people's averaged over raters).
    Prompts people labelled are the labelled items; the judge's other prompts are the unlabelled ones.

    `rounds`: where pairs were drawn for people where the judge was least sure, each round's chance of
    drawing each prompt; `drawn`: the prompts those rounds drew. Labels on other prompts count as a
    uniform draw made beforehand; each labelled prompt is then weighted by its chance of being labelled
    at all (active inference, `evalhub.core.statistics.ppi.active_mean`). A drawn prompt people have not labelled
    yet is left out as if it had not been drawn, and the note says how many.

    Otherwise the estimator is `estimator` (or chosen by `estimators.choose` under "auto"), with
    `categories` (prompt → category) as strata and `others` (other judges' prompt → preference, or
    already aligned as JudgesOfModel) as further judges. `anytime`: people-only and PPI++ intervals as
    confidence sequences, valid however often one looks as labels arrive
    (`evalhub.core.statistics.sequential`)."""
    from evalhub.core.statistics import estimators
    from evalhub.core.statistics.ppi import active_mean, classical_mean, inclusion_probability, ppi_mean
    from evalhub.core.statistics.sequential import PLANNED_N, corrected_sequence, mean_sequence, predictable_weights

    labelled = sorted(prompt for prompt in people if prompt in judge)
    unlabelled = [judge[prompt] for prompt in judge if prompt not in people]
    n = len(labelled)
    if n < 2 or not unlabelled:
        why = "no pair people labelled" if n == 0 else f"{n} pair(s) people labelled"
        return CorrectedWinRate(model, n, note=f"{why}{'' if unlabelled else ' and none they did not'}: no correction")
    y = [people[prompt] for prompt in labelled]
    human = classical_mean(y).scaled(100)
    interval = n >= MIN_PROMPTS
    notes = [] if interval else [f"{n} labels: too few for an interval"]
    judged = np.array([judge[prompt] for prompt in labelled])
    # What the ceiling is of: the judge's label with PPI++'s clipped weight, within strata where the
    # estimator uses them, or several judges' labels with unclipped weights.
    predictors: np.ndarray | None = None
    ceiling_strata: Sequence[str] | None = None
    used, reason = "active", "labels drawn where the judge was least sure, each weighted by its chance"
    if rounds:
        prompts = list(judge)
        chosen = np.array([prompt in people for prompt in prompts])
        beforehand = sum(1 for prompt in labelled if prompt not in drawn)
        chances = [[float(round_.get(prompt, 0.0)) for prompt in prompts] for round_ in rounds]
        # A prompt no round could draw and nobody labelled is never weighted: any chance above 0 serves.
        inclusion = np.maximum(inclusion_probability(beforehand / len(prompts), chances), 1e-12)
        corrected = active_mean(
            [judge[p] for p in prompts], chosen, [people[p] for p in prompts if p in people], inclusion
        ).scaled(100)
        waiting = sum(1 for prompt in drawn if prompt in judge and prompt not in people)
        notes.append(f"{n - beforehand} drawn where the judge was least sure, weighted by their chance")
        if waiting:
            # The weights assume every drawn pair is labelled: leaving the waiting ones out biases the
            # estimate towards the pairs people happened to label first, so it waits for them.
            notes.append(f"{waiting} drawn still await people's labels: the corrected figure waits for them")
            return CorrectedWinRate(model, n, note="; ".join(notes))
        # SE² ≈ Var/n at this design, for "labels needed"
        label_variance, judge_term = corrected.standard_error**2 * n, 0.0
    elif anytime:
        yhat = [judge[prompt] for prompt in labelled]
        classical = estimator == estimators.CLASSICAL
        fixed = ppi_mean(y, yhat, unlabelled, lam=0.0 if classical else None)
        # The sequence weighs each label by the labels before it, never by later ones (its terms must not
        # look ahead); the point estimate and its λ stay the fixed-n ones: only the interval is for looking.
        weights = np.zeros(len(y)) if classical else predictable_weights(y, yhat, unlabelled)
        sequence = corrected_sequence(y, yhat, unlabelled, weights, planned_n=PLANNED_N)
        people_sequence = mean_sequence(y, planned_n=PLANNED_N)
        corrected = replace(fixed.scaled(100), low=100 * sequence.low, high=100 * sequence.high)
        human = replace(human, low=100 * people_sequence.low, high=100 * people_sequence.high)
        label_variance, judge_term = corrected.label_variance, corrected.judge_term
        used = estimators.CLASSICAL if fixed.lam == 0 else estimators.PPI
        reason = (
            f"anytime-valid: confidence sequences (Waudby-Smith et al. 2024) planned at {PLANNED_N} labels, "
            "valid however often you look"
        )
        if not estimators.Correction(estimator, anytime=True).has_anytime_form:
            reason += f"; {estimators.label_of(estimator)} has no anytime-valid form here: PPI++ instead"
    else:
        prompts_u = [prompt for prompt in judge if prompt not in people]
        strata = strata_u = other = other_u = None
        if categories:
            strata = [categories.get(prompt, "") for prompt in labelled]
            strata_u = [categories.get(prompt, "") for prompt in prompts_u]
        if not isinstance(others, JudgesOfModel):
            others = JudgesOfModel.of({str(index): found for index, found in enumerate(others)})
        if len(others):  # NaN where a judge did not judge a pair: `choose` then combines no judges
            other, other_u = others.at(labelled), others.at(prompts_u)
        picked = estimators.choose(
            y,
            [judge[prompt] for prompt in labelled],
            unlabelled,
            strata=strata,
            strata_unlabelled=strata_u,
            others=other,
            others_unlabelled=other_u,
            asked=estimator,
        )
        corrected = picked.estimate.scaled(100)
        used, reason = picked.estimator, picked.reason
        predictors, ceiling_strata = picked.predictors, picked.strata
        label_variance, judge_term = corrected.label_variance, corrected.judge_term

    if predictors is not None:
        ceiling = n * estimators.label_ceiling(y, predictors)
    else:
        ceiling = n * estimators.clipped_ceiling(y, judged, ceiling_strata)

    def clip(percent: float) -> float:  # a win rate lies in [0, 100]: a bound past it claims what no data could
        return min(100.0, max(0.0, percent))

    return CorrectedWinRate(
        model,
        n,
        corrected_win_rate=clip(corrected.value),
        corrected_ci_low=clip(corrected.low) if interval else None,
        corrected_ci_high=clip(corrected.high) if interval else None,
        human_only_win_rate=human.value,
        human_only_ci_low=clip(human.low) if interval else None,
        human_only_ci_high=clip(human.high) if interval else None,
        effective_n=corrected.effective_n,
        judge_weight=corrected.lam if math.isfinite(corrected.lam) else None,  # none single for strata or several
        note="; ".join(notes),
        label_variance=label_variance,
        judge_term=judge_term,
        estimator=used,
        estimator_reason=reason,
        anytime=anytime and not rounds,
        ceiling_n=ceiling if math.isfinite(ceiling) else None,
        ceiling_note=ceiling_note(corrected.effective_n, ceiling, n),
    )


NEAR_CEILING = 0.9  # "worth" at this share of the ceiling or more: the judge gives about all it can


def ceiling_note(worth: float, ceiling: float, n: int) -> str:
    """A plain sentence where the judge's ceiling matters to what to do next."""
    if math.isfinite(ceiling) and worth >= NEAR_CEILING * ceiling and ceiling > n:
        return "near this judge's ceiling: only a judge closer to people, or more of their labels, narrows it"
    if ceiling <= 2 * n:
        return "this judge can at most halve the labels needed (R² ≤ ½)"
    return ""
