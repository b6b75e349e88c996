"""The judge report: for every judge, how far its verdicts can be trusted (see `judge_lab` for the
definitions). Pure: the caller gathers labels, pairs and the debates' settled verdicts."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalhub.core.judge_lab import (
    BOOTSTRAP,
    CONFUSION_COLUMNS,
    CONFUSION_ROWS,
    FIRST,
    NO_VERDICT,
    SECOND,
    SEED,
    Calibration,
    Interval,
    JudgeVerdicts,
    Label,
    Pair,
    agreement_and_kappa,
    as_good_as_a_person,
    calibration,
    confusion,
    krippendorff_alpha,
    length_slope,
    longer_share,
    majority,
    own_win_rate,
    paired_difference,
    pairwise_kappas,
    position_flips,
    verdicts_of,
    wilson,
)

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


@dataclass
class PrivilegedLift:
    sources: tuple[str, ...]
    judge: str  # the judge with the information
    pairs: int
    without: float
    with_: float
    difference: Interval


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
    length_coef: float | None
    people_length_coef: float | None
    self_preference: dict[str, Any] | None
    calibration: Calibration | None
    privileged: list[PrivilegedLift] = field(default_factory=list)
    versus_people: dict[str, Any] | None = None

    @property
    def kind_label(self) -> str:
        return KINDS[self.judge.kind]

    def as_json(self) -> dict[str, Any]:
        """The export's object: the names the issue and the README promise, plain values only."""
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
            "people_length_coef": self.people_length_coef,
            "self_preference": self.self_preference,
            "ece": self.calibration.ece if self.calibration else None,
            "brier": self.calibration.brier if self.calibration else None,
            "calibration_n": self.calibration.n if self.calibration else 0,
            "reliability": self.calibration.bins if self.calibration else [],
            "privileged_lift": [
                {
                    "sources": list(lift.sources),
                    "judge": lift.judge,
                    "pairs": lift.pairs,
                    "without": lift.without,
                    "with": lift.with_,
                    "difference": lift.difference.value,
                    "difference_ci": lift.difference.as_list(),
                }
                for lift in self.privileged
            ],
            "versus_people": self.versus_people,
        }


@dataclass
class PeopleReport:
    people: int
    units: int  # pairs with at least two people's verdicts
    alpha: Interval
    with_others: list[dict[str, Any]]  # each person's agreement with the others' majority

    def as_json(self) -> dict[str, Any]:
        return {
            "people": self.people,
            "units": self.units,
            "krippendorff_alpha": self.alpha.value,
            "alpha_ci": self.alpha.as_list(),
            "with_others": self.with_others,
        }


@dataclass
class Report:
    judges: list[JudgeReport]
    people: PeopleReport

    def as_json(self) -> dict[str, Any]:
        return {"judges": [judge.as_json() for judge in self.judges], "people": self.people.as_json()}

    def find(self, judge_id: str) -> JudgeReport | None:
        return next((judge for judge in self.judges if judge.judge.id == judge_id), None)


def build_report(
    judges: Sequence[JudgeInfo],
    labels: Mapping[str, Sequence[Label]],
    pairs: Mapping[Hashable, Pair],
    settled: Mapping[Hashable, Settled],
    *,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> Report:
    """Every judge's report, ranked by kappa (highest first; judges without one last)."""
    verdicts = {judge.id: verdicts_of(labels.get(judge.id, ())) for judge in judges}
    people = {judge.id: verdicts[judge.id].primary for judge in judges if judge.kind == PERSON}
    people_majority = _majorities(people.values())
    people_by_item: dict[Hashable, list[tuple[str, int]]] = defaultdict(list)
    for person, rated in people.items():
        for item, pick in rated.items():
            people_by_item[item].append((person, pick))
    context = _Context(pairs, people, people_by_item, pairwise_kappas(people), verdicts, judges, resamples, seed)
    reports = []
    for judge in judges:
        mine = verdicts[judge.id]
        if not mine.primary:
            continue
        if judge.kind == PERSON:
            others = [v for person, v in people.items() if person != judge.id]
            reference = _reference(_majorities(others), settled, consensus_only=True)
        else:
            reference = _reference(people_majority, settled, consensus_only=False)
        reports.append(_judge_report(judge, mine, reference, context))
    reports.sort(key=lambda r: (r.kappa.value is None, -(r.kappa.value or 0), -r.n, r.judge.name))
    return Report(judges=reports, people=_people_report(people, resamples, seed))


def _majorities(raters: Sequence[Mapping[Hashable, int]] | Any) -> dict[Hashable, int]:
    picks: dict[Hashable, list[int]] = defaultdict(list)
    for rater in raters:
        for item, pick in rater.items():
            if pick != NO_VERDICT:
                picks[item].append(pick)
    out = {item: majority(values) for item, values in picks.items()}
    return {item: value for item, value in out.items() if value != NO_VERDICT}


def _reference(
    people: Mapping[Hashable, int], settled: Mapping[Hashable, Settled], *, consensus_only: bool
) -> dict[Hashable, tuple[int, str]]:
    out = {
        item: (verdict.verdict, DEBATE_REFERENCE)
        for item, verdict in settled.items()
        if not consensus_only or verdict.how == CONSENSUS
    }
    out.update({item: (verdict, PEOPLE_REFERENCE) for item, verdict in people.items()})
    return out


@dataclass(frozen=True)
class _Context:
    """What every judge's report reads, computed once."""

    pairs: Mapping[Hashable, Pair]
    people: Mapping[str, Mapping[Hashable, int]]
    people_by_item: Mapping[Hashable, list[tuple[str, int]]]
    people_kappas: Mapping[tuple[str, str], float]
    verdicts: Mapping[str, JudgeVerdicts]
    judges: Sequence[JudgeInfo]
    resamples: int
    seed: int


def _judge_report(
    judge: JudgeInfo, mine: JudgeVerdicts, reference: Mapping[Hashable, tuple[int, str]], context: _Context
) -> JudgeReport:
    pairs, resamples, seed = context.pairs, context.resamples, context.seed
    items = [item for item in mine.primary if item in reference]
    predicted = [mine.primary[item] for item in items]
    expected = [reference[item][0] for item in items]
    clusters = [pairs[item].cluster for item in items]
    agreement, kappa = agreement_and_kappa(predicted, expected, clusters, resamples, seed)
    flips, both = position_flips(mine)
    decided = [(pick, pairs[item]) for item, pick in mine.primary.items()]
    longer, longer_total = longer_share(decided)
    people_picks = [
        (pick, pairs[item])
        for item in mine.primary
        for person, pick in context.people_by_item.get(item, ())
        if person != judge.id and pick != NO_VERDICT
    ]
    people_longer, people_total = longer_share(people_picks)
    return JudgeReport(
        judge=judge,
        judged=len(mine.primary),
        n=len(items),
        reference_sources=dict(Counter(reference[item][1] for item in items)),
        agreement=agreement,
        kappa=kappa,
        confusion=confusion(predicted, expected),
        position=wilson(flips, both),
        position_pairs=both,
        longer_share=longer / longer_total if longer_total else None,
        longer_pairs=longer_total,
        people_longer_share=people_longer / people_total if people_total else None,
        length_coef=length_slope(decided),
        people_length_coef=length_slope(people_picks) if judge.kind != PERSON else None,
        self_preference=_self_preference(judge, mine, context),
        calibration=_calibration(mine, reference),
        privileged=_privileged(judge, mine, reference, context),
        versus_people=(
            as_good_as_a_person(mine.primary, context.people, context.people_kappas) if judge.kind != PERSON else None
        ),
    )


def _self_preference(judge: JudgeInfo, mine: JudgeVerdicts, context: _Context) -> dict[str, Any] | None:
    pairs, verdicts, model = context.pairs, context.verdicts, judge.model
    if not model or judge.kind == PERSON:
        return None
    own_items = [item for item in mine.primary if model in (pairs[item].model_1, pairs[item].model_2)]
    wins, total = own_win_rate([(mine.primary[item], pairs[item]) for item in own_items], model)
    if not total:
        return None
    others = [
        (verdicts[other.id].primary[item], pairs[item])
        for other in context.judges
        if other.kind in (MODEL, AGENT) and other.model != model
        for item in own_items
        if item in verdicts[other.id].primary
    ]
    humans = [(pick, pairs[item]) for item in own_items for _, pick in context.people_by_item.get(item, ())]
    other_wins, other_total = own_win_rate(others, model)
    people_wins, people_total = own_win_rate(humans, model)
    own_rate = wins / total
    comparison = people_wins / people_total if people_total else (other_wins / other_total if other_total else None)
    return {
        "model": model,
        "pairs": total,
        "own_win_rate": own_rate,
        "other_judges_win_rate": other_wins / other_total if other_total else None,
        "other_judges_verdicts": other_total,
        "people_win_rate": people_wins / people_total if people_total else None,
        "people_verdicts": people_total,
        "excess": None if comparison is None else own_rate - comparison,
    }


def _calibration(mine: JudgeVerdicts, reference: Mapping[Hashable, tuple[int, str]]) -> Calibration | None:
    scored = [
        (probability, int(reference[item][0] == FIRST))
        for item, probability in mine.probability.items()
        if item in reference and reference[item][0] in (FIRST, SECOND)
    ]
    return calibration([p for p, _ in scored], [y for _, y in scored])


def _privileged(
    judge: JudgeInfo, mine: JudgeVerdicts, reference: Mapping[Hashable, tuple[int, str]], context: _Context
) -> list[PrivilegedLift]:
    """For a judge without privileged information: each of its siblings that had some, on the pairs
    both judged that have a reference."""
    if judge.privileged:
        return []
    lifts = []
    for sibling in context.judges:
        if sibling.base != judge.id or not sibling.privileged:
            continue
        theirs = context.verdicts[sibling.id].primary
        items = [item for item in mine.primary if item in theirs and item in reference]
        if not items:
            continue
        hits_without = [mine.primary[item] == reference[item][0] for item in items]
        hits_with = [theirs[item] == reference[item][0] for item in items]
        lifts.append(
            PrivilegedLift(
                sources=sibling.privileged,
                judge=sibling.id,
                pairs=len(items),
                without=sum(hits_without) / len(items),
                with_=sum(hits_with) / len(items),
                difference=paired_difference(
                    hits_without,
                    hits_with,
                    [context.pairs[item].cluster for item in items],
                    context.resamples,
                    context.seed,
                ),
            )
        )
    return lifts


def _people_report(people: Mapping[str, Mapping[Hashable, int]], resamples: int, seed: int) -> PeopleReport:
    units: dict[Hashable, list[int]] = defaultdict(list)
    for rated in people.values():
        for item, pick in rated.items():
            if pick != NO_VERDICT:
                units[item].append(pick)
    shared = [values for values in units.values() if len(values) >= 2]
    with_others = []
    for person, rated in sorted(people.items()):
        others = _majorities([v for other, v in people.items() if other != person])
        items = [item for item, pick in rated.items() if item in others and pick != NO_VERDICT]
        hits = sum(rated[item] == others[item] for item in items)
        with_others.append({"person": person, "pairs": len(items), "agreement": hits / len(items) if items else None})
    return PeopleReport(
        people=len(people),
        units=len(shared),
        alpha=krippendorff_alpha(shared, resamples, seed),
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
        "self_preference_excess": (report.self_preference or {}).get("excess"),
        "ece": report.calibration.ece if report.calibration else None,
        "brier": report.calibration.brier if report.calibration else None,
    }
