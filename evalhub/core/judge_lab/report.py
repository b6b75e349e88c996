"""The judge report: for every judge, how far its verdicts can be trusted (see `judge_lab` for the
definitions). Pure: the caller gathers labels, pairs and the debates' settled verdicts."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from evalhub.core.judge_lab.measures import (
    ABSENT,
    BOOTSTRAP,
    CONFUSION_COLUMNS,
    CONFUSION_ROWS,
    FIRST,
    MIN_SHARED,
    NO_VERDICT,
    SECOND,
    SEED,
    TIE,
    Calibration,
    Interval,
    JudgeVerdicts,
    Label,
    LabelArrays,
    OrderAgreement,
    Pair,
    agreement_and_kappa,
    calibration,
    confusion_tables,
    dense_verdicts,
    difference_of_rates,
    kappa,
    krippendorff_alpha_from_counts,
    length_slope_counts,
    length_slope_interval,
    order_agreement,
    paired_difference,
    position_flips,
    wilson,
)
from evalhub.core.statistics.ppi import CorrectedBoard, corrected_bradley_terry

PERSON, MODEL, AGENT, PANEL = "person", "model", "agent", "panel"
KINDS = {PERSON: "Person", MODEL: "LLM judge", AGENT: "Debate agent", PANEL: "Debate panel"}
PEOPLE_REFERENCE, DEBATE_REFERENCE = "people", "debate"
CONSENSUS, ADJUDICATED = "consensus", "adjudicated"


@dataclass(frozen=True)
class JudgeInfo:
    id: str
    name: str
    kind: str  # PERSON, MODEL, AGENT or PANEL
    model: str | None = None  # the candidate model this judge is (self-preference)
    base: str | None = None  # the same judge without privileged information
    privileged: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settled:
    """A debate's reference verdict on a pair: its agents' consensus or its people's adjudication."""

    verdict: int
    how: str  # CONSENSUS or ADJUDICATED


@dataclass(frozen=True)
class CategoryLift:
    """Accuracy without and with privileged information on the pairs of one prompt category
    (the privileged-information paper's Table 1, per RewardBench subset)."""

    category: str
    pairs: int
    without: float
    with_: float
    difference: Interval  # paired bootstrap over prompts; no interval below MIN_FOR_INTERVAL prompts

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "pairs": self.pairs,
            "without": self.without,
            "with": self.with_,
            "difference": self.difference.value,
            "difference_ci": self.difference.as_list(),
        }


@dataclass(frozen=True)
class BiasErrors:
    """The privileged-information paper's Table 2: of a grader's errors, how many its pick shares with
    what the bias alone would pick (the longer response, the one with more markdown, its own model's)."""

    bias: str
    errors: int
    attributable: int
    # False where the bias takes no side on any of the pairs (equal lengths throughout; a judge whose
    # own model is not matched to a candidate): the rate is then not measured, rather than 0.
    measured: bool = True

    @property
    def rate(self) -> float | None:
        return self.attributable / self.errors if self.errors and self.measured else None


@dataclass
class PrivilegedLift:
    sources: tuple[str, ...]
    judge: str  # the judge with the information
    pairs: int
    without: float
    with_: float
    difference: Interval
    by_category: tuple[CategoryLift, ...] = ()
    # (without, with) per bias, on the same pairs
    bias_errors: tuple[tuple[BiasErrors, BiasErrors], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        overall = CategoryLift("", self.pairs, self.without, self.with_, self.difference).as_dict()
        del overall["category"]
        return {
            "sources": list(self.sources),
            "judge": self.judge,
            **overall,
            "by_category": [part.as_dict() for part in self.by_category],
            "bias_errors": [
                {
                    "bias": without.bias,
                    "errors_without": without.errors,
                    "rate_without": without.rate,
                    "errors_with": with_.errors,
                    "rate_with": with_.rate,
                    "measured": without.measured and with_.measured,
                }
                for without, with_ in self.bias_errors
            ],
        }


@dataclass(frozen=True)
class SelfPreference:
    """How often a judge picks its own model's responses, against people (or the other judges)."""

    model: str
    pairs: int
    own_win_rate: float
    other_judges_win_rate: float | None
    other_judges_verdicts: int
    people_win_rate: float | None
    people_verdicts: int
    excess: float | None
    excess_ci: list[float | None]
    compared_with: str | None  # "people", "other judges", or None


@dataclass(frozen=True)
class VersusPeople:
    """ "As good as a person?": the judge's mean κ with each person against the people's with each other."""

    judge_mean_kappa: float
    people: int
    people_mean_kappa: float
    people_sd: float | None
    z: float | None  # the difference in people's standard deviations


@dataclass(frozen=True)
class PersonAgreement:
    person: str
    pairs: int
    agreement: float | None  # with the other people's majority


@dataclass
class JudgeReport:
    judge: JudgeInfo
    judged: int  # pairs with a verdict (or an unreadable answer)
    n: int  # of those, pairs with a reference
    reference_sources: dict[str, int]
    agreement: Interval
    kappa: Interval
    confusion: list[list[int]]
    position: Interval  # share of pairs whose verdict flips with the order
    position_pairs: int
    longer_share: float | None
    longer_pairs: int
    people_longer_share: float | None
    length_interval: Interval  # the judge's length slope with its 95 % Wald interval
    people_length_coef: float | None
    self_preference: SelfPreference | None
    calibration: Calibration | None
    privileged: list[PrivilegedLift] = field(default_factory=list)
    versus_people: VersusPeople | None = None
    by_order: OrderAgreement | None = None  # on the pairs it saw in both orders
    # Its Bradley–Terry board corrected by people's labels on the same battles (PPI++), or why there is none.
    corrected: CorrectedBoard | str | None = None

    @property
    def length_coef(self) -> float | None:
        return self.length_interval.value

    @property
    def kind_label(self) -> str:
        return KINDS[self.judge.kind]

    def as_json(self) -> dict[str, Any]:
        """The export's object: the names the issue and the manual promise, plain values only."""
        return {
            "id": self.judge.id,
            "name": self.judge.name,
            "kind": self.judge.kind,
            "model": self.judge.model,
            "privileged": list(self.judge.privileged),
            "judged": self.judged,
            "n": self.n,
            "reference_sources": self.reference_sources,
            "agreement": self.agreement.value,
            "agreement_ci": self.agreement.as_list(),
            "kappa": self.kappa.value,
            "kappa_ci": self.kappa.as_list(),
            "confusion": {
                "rows_reference": list(CONFUSION_ROWS),
                "columns_judge": list(CONFUSION_COLUMNS),
                "counts": self.confusion,
            },
            "position_flip_rate": self.position.value,
            "position_flip_ci": self.position.as_list(),
            "position_pairs": self.position_pairs,
            "longer_share": self.longer_share,
            "longer_pairs": self.longer_pairs,
            "people_longer_share": self.people_longer_share,
            "length_coef": self.length_coef,
            "length_coef_ci": self.length_interval.as_list(),
            "agreement_by_order": None
            if self.by_order is None
            else {
                "pairs": self.by_order.pairs,
                **{
                    name: {"value": interval.value, "ci": interval.as_list()}
                    for name, interval in (
                        ("first_shown", self.by_order.first_shown),
                        ("second_shown", self.by_order.second_shown),
                        ("averaged", self.by_order.averaged),
                    )
                },
            },
            "people_length_coef": self.people_length_coef,
            "self_preference": asdict(self.self_preference) if self.self_preference else None,
            "ece": self.calibration.ece if self.calibration else None,
            "brier": self.calibration.brier if self.calibration else None,
            "calibration_n": self.calibration.n if self.calibration else 0,
            "reliability": self.calibration.bins if self.calibration else [],
            "privileged_lift": [lift.as_dict() for lift in self.privileged],
            "versus_people": asdict(self.versus_people) if self.versus_people else None,
            "corrected_ratings": (
                {"note": self.corrected}
                if isinstance(self.corrected, str)
                else None
                if self.corrected is None
                else {
                    "n_human": self.corrected.n_human,
                    "n_judge": self.corrected.n_judge,
                    "judge_weight": self.corrected.judge_weight,
                    "ratings": [asdict(rating) for rating in self.corrected.ratings],
                }
            ),
        }


@dataclass
class PeopleReport:
    people: int
    units: int  # pairs with at least two people's verdicts
    alpha: Interval
    with_others: list[PersonAgreement]  # each person's agreement with the others' majority

    def as_json(self) -> dict[str, Any]:
        return {
            "people": self.people,
            "units": self.units,
            "krippendorff_alpha": self.alpha.value,
            "alpha_ci": self.alpha.as_list(),
            "with_others": [asdict(row) for row in self.with_others],
        }


@dataclass
class Report:
    judges: list[JudgeReport]
    people: PeopleReport

    def as_json(self) -> dict[str, Any]:
        return {"judges": [judge.as_json() for judge in self.judges], "people": self.people.as_json()}

    def find(self, judge_id: str) -> JudgeReport | None:
        return next((judge for judge in self.judges if judge.judge.id == judge_id), None)


COLUMN = {FIRST: 0, SECOND: 1, TIE: 2}  # verdict → its column in a count table
VERDICT_OF_COLUMN = np.array([FIRST, SECOND, TIE])


class _Index:
    """Every pair as a row of numpy arrays, so that each judge's figures are array operations:
    the report reads every verdict of every judge, and the board must stay fast cold."""

    def __init__(self, pairs: Mapping[Hashable, Pair], settled: Mapping[Hashable, Settled]) -> None:
        self.items = list(pairs)
        self.row = {item: i for i, item in enumerate(self.items)}
        self.pairs = pairs
        cluster_ids = {pair.cluster: i for i, pair in enumerate(pairs.values())}
        self.cluster = np.array([cluster_ids[pairs[item].cluster] for item in self.items], dtype=int)
        self.difference = np.array([pairs[i].length_1 - pairs[i].length_2 for i in self.items], dtype=float)
        self.model_1 = np.array([pairs[i].model_1 for i in self.items], dtype=object)
        self.model_2 = np.array([pairs[i].model_2 for i in self.items], dtype=object)
        self.category = np.array([pairs[i].category for i in self.items], dtype=object)
        self.formatting = np.array([pairs[i].formatting_1 - pairs[i].formatting_2 for i in self.items], dtype=float)
        self.consensus = np.full(len(self.items), ABSENT)
        self.adjudicated = np.full(len(self.items), ABSENT)
        for item, verdict in settled.items():
            if item in self.row:
                target = self.consensus if verdict.how == CONSENSUS else self.adjudicated
                target[self.row[item]] = verdict.verdict

    def counts(self, picks: np.ndarray) -> np.ndarray:
        """(pairs × 3) counts of FIRST, SECOND and TIE from one rater's dense picks."""
        out = np.zeros((len(self.items), 3))
        for verdict, column in COLUMN.items():
            out[:, column] = picks == verdict
        return out


def _arrays(labels: Sequence[Label] | LabelArrays, index: _Index) -> LabelArrays:
    return labels if isinstance(labels, LabelArrays) else LabelArrays.of(labels, index.row)


def _majority_of_counts(counts: np.ndarray) -> np.ndarray:
    """Per pair the most frequent verdict, ABSENT when there is none or the top is tied."""
    top = counts.argmax(axis=1)
    ordered = np.sort(counts, axis=1)
    clear = (ordered[:, -1] > 0) & (ordered[:, -1] > ordered[:, -2])
    return np.where(clear, VERDICT_OF_COLUMN[top], ABSENT)


def build_report(
    judges: Sequence[JudgeInfo],
    labels: Mapping[str, Sequence[Label] | LabelArrays],
    pairs: Mapping[Hashable, Pair],
    settled: Mapping[Hashable, Settled],
    *,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> Report:
    """Every judge's report, ranked by kappa (highest first; judges whose kappa rests on too few prompts for
    an interval after those with one; judges without one last)."""
    index = _Index(pairs, settled)
    verdicts = {
        judge.id: dense_verdicts(_arrays(labels.get(judge.id, ()), index), len(index.items)) for judge in judges
    }
    dense = {judge.id: verdicts[judge.id].primary for judge in judges}
    people = [judge.id for judge in judges if judge.kind == PERSON]
    person_counts = {person: index.counts(dense[person]) for person in people}
    people_counts = sum(person_counts.values(), np.zeros((len(index.items), 3)))
    general = _reference(index, _majority_of_counts(people_counts), judge_kind=MODEL)
    without_consensus = _reference(index, _majority_of_counts(people_counts), judge_kind=PANEL)
    model_counts = _counts_by_model(index, judges, dense)
    context = _Context(
        index=index,
        verdicts=verdicts,
        dense=dense,
        people=people,
        person_counts=person_counts,
        people_counts=people_counts,
        people_kappas=_people_kappas(people, dense),
        model_counts=model_counts,
        judges=judges,
        resamples=resamples,
        seed=seed,
    )
    reports = []
    for judge in judges:
        if not (dense[judge.id] != ABSENT).any():
            continue
        if judge.kind == PERSON:
            others = _majority_of_counts(people_counts - person_counts[judge.id])
            reference = _reference(index, others, judge_kind=PERSON)
        else:
            reference = without_consensus if judge.kind in (PANEL, AGENT) else general
        reports.append(_judge_report(judge, reference, context))
    # Judges whose kappa rests on too few prompts for an interval come after those with one.
    reports.sort(key=lambda r: (r.kappa.value is None, r.kappa.low is None, -(r.kappa.value or 0), -r.n, r.judge.name))
    return Report(judges=reports, people=_people_report(context))


def _reference(index: _Index, people: np.ndarray, *, judge_kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the reference verdict (ABSENT where none) and where it came from (0 none, 1 the
    debate, 2 people), by precedence: the people's adjudication of a debate (the verdict the debate
    pages show, admin overrides included), else the people's majority (imported labels,
    adjudicators), else the debate's consensus. A person's reference is the others' majority, or the
    consensus: never an adjudication their own verdict made. A debate panel and its agents are never
    measured against a consensus: they made it (every pair an agent judged is one of its debates)."""
    verdict = np.full(len(index.items), ABSENT)
    source = np.zeros(len(index.items), dtype=int)
    layers = [(index.consensus, 1)] if judge_kind not in (PANEL, AGENT) else []
    layers.append((people, 2))
    if judge_kind != PERSON:
        layers.append((index.adjudicated, 2))
    for values, origin in layers:
        present = values != ABSENT
        verdict[present], source[present] = values[present], origin
    return verdict, source


REFERENCE_NAMES = {1: DEBATE_REFERENCE, 2: PEOPLE_REFERENCE}


def _counts_by_model(
    index: _Index, judges: Sequence[JudgeInfo], dense: Mapping[str, np.ndarray]
) -> dict[str | None, np.ndarray]:
    """Per candidate model that is also a judge, the count table of the verdicts of the LLM judges
    that are that model; and under None, of all LLM judges (self-preference compares the two)."""
    out: dict[str | None, np.ndarray] = {None: np.zeros((len(index.items), 3))}
    for judge in judges:
        if judge.kind in (MODEL, AGENT):
            counts = index.counts(dense[judge.id])
            out[None] += counts
            if judge.model:
                out[judge.model] = out.get(judge.model, 0) + counts
    return out


@dataclass(frozen=True)
class _Context:
    """What every judge's report reads, computed once."""

    index: _Index
    verdicts: Mapping[str, JudgeVerdicts]
    dense: Mapping[str, np.ndarray]
    people: Sequence[str]
    person_counts: Mapping[str, np.ndarray]
    people_counts: np.ndarray
    people_kappas: list[float]
    model_counts: Mapping[str | None, np.ndarray]
    judges: Sequence[JudgeInfo]
    resamples: int
    seed: int


def _judge_report(judge: JudgeInfo, reference: tuple[np.ndarray, np.ndarray], context: _Context) -> JudgeReport:
    index, mine = context.index, context.verdicts[judge.id]
    picks = context.dense[judge.id]
    judged = picks != ABSENT
    expected, source = reference
    scored = judged & (expected != ABSENT)
    agreement, kappa = agreement_and_kappa(
        picks[scored], expected[scored], index.cluster[scored], context.resamples, context.seed
    )
    flips, both = position_flips(mine)
    others = context.people_counts - context.person_counts.get(judge.id, 0)
    longer, longer_total = _longer(index.difference, judged, (picks == FIRST) * 1.0, (picks == SECOND) * 1.0)
    people_longer, people_total = _longer(index.difference, judged, others[:, 0], others[:, 1])
    decisive = judged & ((picks == FIRST) | (picks == SECOND))
    both_ways = scored & (mine.other_order != ABSENT)
    by_order = order_agreement(
        picks[both_ways],
        mine.other_order[both_ways],
        expected[both_ways],
        index.cluster[both_ways],
        context.resamples,
        context.seed,
    )
    return JudgeReport(
        judge=judge,
        judged=int(judged.sum()),
        n=int(scored.sum()),
        reference_sources={
            REFERENCE_NAMES[k]: int(v) for k, v in zip(*np.unique(source[scored], return_counts=True), strict=True)
        },
        agreement=agreement,
        kappa=kappa,
        confusion=confusion_tables(picks[scored], expected[scored])[0].tolist(),
        position=wilson(flips, both),
        position_pairs=both,
        longer_share=longer / longer_total if longer_total else None,
        longer_pairs=longer_total,
        people_longer_share=people_longer / people_total if people_total else None,
        length_interval=length_slope_interval(
            index.difference[decisive], (picks[decisive] == FIRST) * 1.0, (picks[decisive] == SECOND) * 1.0
        ),
        by_order=by_order,
        people_length_coef=(
            length_slope_counts(index.difference[judged], others[judged, 0], others[judged, 1])
            if judge.kind != PERSON
            else None
        ),
        self_preference=_self_preference(judge, picks, context),
        calibration=_calibration(mine, expected),
        privileged=_privileged(judge, picks, expected, context),
        versus_people=_versus_people(judge, picks, context) if judge.kind != PERSON else None,
        corrected=_corrected_board(mine, context) if judge.kind != PERSON else None,
    )


def _share_of_first(verdicts: np.ndarray) -> np.ndarray:
    """1 for FIRST, 0 for SECOND, ½ for TIE, NaN for no verdict."""
    share: np.ndarray = np.select([verdicts == FIRST, verdicts == SECOND, verdicts == TIE], [1.0, 0.0, 0.5], np.nan)
    return share


def _corrected_board(mine: JudgeVerdicts, context: _Context) -> CorrectedBoard | str | None:
    """The judge's battles (its probability where it gave one, else 1, 0 or ½ for the first model) as
    a Bradley–Terry board corrected by people's labels on the same battles: the share of people's
    verdicts for the first model, else the queue's adjudication."""
    index = context.index
    picks = mine.primary
    share = np.where(np.isnan(mine.probability), _share_of_first(picks), mine.probability)
    counts = context.people_counts
    total = counts.sum(axis=1)
    people = np.full(len(index.items), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        people = np.where(total > 0, (counts[:, 0] + 0.5 * counts[:, 2]) / total, people)
    people = np.where(np.isnan(people), _share_of_first(index.adjudicated), people)
    battles = ~np.isnan(share) & (index.model_1 != "") & (index.model_2 != "") & (index.model_1 != index.model_2)
    if not (battles & ~np.isnan(people)).any():
        return None  # people labelled none of its battles: nothing to correct with, nothing to say

    return corrected_bradley_terry(index.model_1[battles], index.model_2[battles], share[battles], people[battles])


def _longer(difference: np.ndarray, judged: np.ndarray, first: np.ndarray, second: np.ndarray) -> tuple[float, int]:
    """(decisive verdicts for the longer response, decisive verdicts) on judged pairs of unequal length."""
    unequal = judged & (difference != 0)
    longer = np.where(difference > 0, first, second)[unequal].sum()
    return float(longer), int((first + second)[unequal].sum())


def _win_rate(counts: np.ndarray, own_first: np.ndarray) -> tuple[float, int]:
    """From count tables on the pairs with the model: wins for the model (ties half), verdicts."""
    wins = np.where(own_first, counts[:, 0], counts[:, 1]) + 0.5 * counts[:, 2]
    return float(wins.sum()), int(counts.sum())


def _self_preference(judge: JudgeInfo, picks: np.ndarray, context: _Context) -> SelfPreference | None:
    model, index = judge.model, context.index
    if not model or judge.kind == PERSON:
        return None
    with_model = (picks != ABSENT) & ((index.model_1 == model) != (index.model_2 == model))
    if not with_model.any():
        return None
    rows = np.flatnonzero(with_model)
    own_first = index.model_1[rows] == model
    own_wins, own_total = _win_rate(index.counts(picks)[rows], own_first)
    if not own_total:
        return None
    others = (context.model_counts[None] - context.model_counts.get(model, 0))[rows]
    other_wins, other_total = _win_rate(others, own_first)
    people_wins, people_total = _win_rate(context.people_counts[rows], own_first)
    # Against people where they labelled these pairs, else against the other judges.
    against = (people_wins, people_total) if people_total else (other_wins, other_total)
    excess = difference_of_rates(own_wins, own_total, *against)
    return SelfPreference(
        model=model,
        pairs=own_total,
        own_win_rate=own_wins / own_total,
        other_judges_win_rate=other_wins / other_total if other_total else None,
        other_judges_verdicts=other_total,
        people_win_rate=people_wins / people_total if people_total else None,
        people_verdicts=people_total,
        excess=excess.value,
        excess_ci=excess.as_list(),
        compared_with="people" if people_total else "other judges" if other_total else None,
    )


def _calibration(mine: JudgeVerdicts, expected: np.ndarray) -> Calibration | None:
    scored = ~np.isnan(mine.probability) & ((expected == FIRST) | (expected == SECOND))
    if not scored.any():
        return None
    return calibration(list(mine.probability[scored]), list((expected[scored] == FIRST).astype(int)))


def _privileged(judge: JudgeInfo, picks: np.ndarray, expected: np.ndarray, context: _Context) -> list[PrivilegedLift]:
    """For a judge without privileged information: each of its siblings that had some, on the pairs
    both judged that have a reference — overall, per prompt category, and the bias error rates."""
    if judge.privileged:
        return []
    lifts = []
    index = context.index
    for sibling in context.judges:
        if sibling.base != judge.id or not sibling.privileged:
            continue
        theirs = context.dense[sibling.id]
        both = (picks != ABSENT) & (theirs != ABSENT) & (expected != ABSENT)
        if not both.any():
            continue
        hits = (picks == expected, theirs == expected)
        without, with_, difference = _lift(hits, both, context)
        categories = sorted({str(c) for c in index.category[both] if c})
        by_category = tuple(
            CategoryLift(category, int(subset.sum()), *_lift(hits, subset, context))
            for category in categories
            if (subset := both & (index.category == category)).any()
        )
        biases = _bias_picks(judge, index)
        bias_errors = tuple(
            (_bias_errors(name, picks, expected, bias, both), _bias_errors(name, theirs, expected, bias, both))
            for name, bias in biases.items()
        )
        lifts.append(
            PrivilegedLift(
                sources=sibling.privileged,
                judge=sibling.id,
                pairs=int(both.sum()),
                without=without,
                with_=with_,
                difference=difference,
                by_category=by_category,
                bias_errors=bias_errors,
            )
        )
    return lifts


def _lift(hits: tuple[np.ndarray, np.ndarray], subset: np.ndarray, context: _Context) -> tuple[float, float, Interval]:
    """Accuracy without and with, and their paired difference, on a subset of the pairs."""
    without, with_ = hits[0][subset], hits[1][subset]
    difference = paired_difference(
        list(without), list(with_), list(context.index.cluster[subset]), context.resamples, context.seed
    )
    return float(without.mean()), float(with_.mean()), difference


def _side(difference: np.ndarray) -> np.ndarray:
    """FIRST where the first response has more, SECOND where the second has, ABSENT where equal."""
    return np.where(difference > 0, FIRST, np.where(difference < 0, SECOND, ABSENT))


def _bias_picks(judge: JudgeInfo, index: _Index) -> dict[str, np.ndarray]:
    """Per pair, what a grader relying on the bias alone would pick (ABSENT where the bias has no side):
    verbosity, the longer response; formatting, the one with more markdown elements; self-enhancement,
    the response of the grader's own model (Zheng et al. 2023's biases, as the privileged-information
    paper's Table 2 measures them)."""
    own = np.full(len(index.items), ABSENT)
    if judge.model:
        first, second = index.model_1 == judge.model, index.model_2 == judge.model
        own[first & ~second], own[second & ~first] = FIRST, SECOND
    return {
        "verbosity": _side(index.difference),
        "formatting": _side(index.formatting),
        "self-enhancement": own,
    }


def _bias_errors(name: str, picks: np.ndarray, expected: np.ndarray, bias: np.ndarray, pairs: np.ndarray) -> BiasErrors:
    errors = pairs & (picks != expected)
    sided = bias != ABSENT
    return BiasErrors(
        name, int(errors.sum()), int((errors & sided & (picks == bias)).sum()), bool((pairs & sided).any())
    )


def _pair_kappa(a: np.ndarray, b: np.ndarray, minimum: int = MIN_SHARED) -> float | None:
    """Kappa of rater a's verdicts against rater b's on the pairs b answered (at least `minimum`)."""
    shared = (a != ABSENT) & (b != ABSENT) & (b != NO_VERDICT)
    return kappa(a[shared], b[shared]) if shared.sum() >= minimum else None


def _versus_people(judge: JudgeInfo, picks: np.ndarray, context: _Context) -> VersusPeople | None:
    """The judge's mean kappa with each person against the people's mean kappa with each other, and
    the difference in units of the people's standard deviation (None with fewer than two values)."""
    with_people = [v for person in context.people if (v := _pair_kappa(picks, context.dense[person])) is not None]
    people_kappas = context.people_kappas
    if not with_people or not people_kappas:
        return None
    judge_mean, people_mean = float(np.mean(with_people)), float(np.mean(people_kappas))
    spread = float(np.std(people_kappas, ddof=1)) if len(people_kappas) > 1 else 0.0
    return VersusPeople(
        judge_mean_kappa=judge_mean,
        people=len(with_people),
        people_mean_kappa=people_mean,
        people_sd=spread if len(people_kappas) > 1 else None,
        z=(judge_mean - people_mean) / spread if spread > 0 else None,
    )


def _people_kappas(people: Sequence[str], dense: Mapping[str, np.ndarray]) -> list[float]:
    """Kappa of every two people on the pairs both answered (at least MIN_SHARED)."""
    values = []
    for i, a in enumerate(people):
        for b in people[i + 1 :]:
            value = _pair_kappa(np.where(dense[a] == NO_VERDICT, ABSENT, dense[a]), dense[b])
            if value is not None:
                values.append(value)
    return values


def _by_model_order(index: _Index, counts: np.ndarray) -> np.ndarray:
    """(pairs × 3) counts with FIRST meaning the model whose slug sorts first won, as the graded table
    reads a pair. A pair's own first response is whichever a file happened to list first (the lower
    id), and nominal alpha's expected disagreement pools the categories over pairs: flipping some
    pairs' order changed alpha (0.4999 against 0.4167 on one case)."""
    flip = index.model_1 > index.model_2
    out = counts.copy()
    out[flip, COLUMN[FIRST]], out[flip, COLUMN[SECOND]] = counts[flip, COLUMN[SECOND]], counts[flip, COLUMN[FIRST]]
    return out


def _people_report(context: _Context) -> PeopleReport:
    with_others = []
    for person in sorted(context.people):
        others = _majority_of_counts(context.people_counts - context.person_counts[person])
        mine = context.dense[person]
        rated = (mine != ABSENT) & (mine != NO_VERDICT) & (others != ABSENT)
        with_others.append(
            PersonAgreement(
                person=person,
                pairs=int(rated.sum()),
                agreement=float((mine[rated] == others[rated]).mean()) if rated.any() else None,
            )
        )
    counts = _by_model_order(context.index, context.people_counts)
    return PeopleReport(
        people=len(context.people),
        units=int((counts.sum(axis=1) >= 2).sum()),
        alpha=krippendorff_alpha_from_counts(counts, context.resamples, context.seed),
        with_others=with_others,
    )


def summary_row(report: JudgeReport) -> dict[str, Any]:
    """The headline figures of one judge, as the list page and its CSV show them."""
    return {
        "judge": report.judge.name,
        "kind": report.judge.kind,
        "n": report.n,
        "agreement": report.agreement.value,
        "kappa": report.kappa.value,
        "kappa_low": report.kappa.low,
        "kappa_high": report.kappa.high,
        "position_flip_rate": report.position.value,
        "longer_share": report.longer_share,
        "people_longer_share": report.people_longer_share,
        "self_preference_excess": report.self_preference.excess if report.self_preference else None,
        "ece": report.calibration.ece if report.calibration else None,
        "brier": report.calibration.brier if report.calibration else None,
    }
