"""What the judge report is made of: the judges it measures, the debates' reference verdicts, and one
record per judge and for the people (see `report` for how they are computed). Pure data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, astuple, dataclass, field, fields, replace
from typing import Any

from evalhub.core.judge_lab.measures import (
    CONFUSION_COLUMNS,
    CONFUSION_ROWS,
    Calibration,
    ClassScores,
    Interval,
    OrderAgreement,
)
from evalhub.core.statistics.alt_test import DEFAULT_EPSILON, AltTest, alt_test_of
from evalhub.core.statistics.corrected_ratings import CorrectedBoard, CorrectedRating

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
    # A judge improved on people's train labels: scored on HELD_OUT_PAIRS only, or on ALL_PAIRS when
    # asked (optimistic); "" for any other judge.
    improved: str = ""
    version_of: str = ""  # a judge version's run (evalhub.alignment): the judge's name, whose versions page lists it


HELD_OUT_PAIRS, ALL_PAIRS = "held_out_pairs", "all_pairs"


@dataclass(frozen=True)
class DebateReference:
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
class PersonPair:
    """Two people's Cohen's kappa on the pairs both gave a verdict on (the table judge studies publish)."""

    first: str
    second: str
    pairs: int
    kappa: float | None


def alt_test_json(result: AltTest, found: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    return {
        "epsilon": result.epsilon,
        "q": result.q,
        "fdr": "Benjamini–Yekutieli",
        "winning_rate": result.winning_rate,
        "advantage_probability": result.advantage_probability,
        "passes": result.passes,
        "verdict": result.verdict,
        "people": [asdict(person) for person in result.people],
        "outcomes": {person: list(counts) for person, counts in found.items()},  # judge better, tied, person better
    }


@dataclass
class JudgeReport:
    judge: JudgeInfo
    judged: int  # pairs with a verdict (or an unreadable answer)
    n: int  # of those, pairs with a reference
    reference_sources: dict[str, int]
    agreement: Interval
    kappa: Interval
    confusion: list[list[int]]
    per_class: list[ClassScores]  # precision, recall and F1 per verdict, with intervals
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
    # A digest of what that board was fitted from (corrected_boards.board_inputs): the next report takes the
    # board as it is where the digest is the same. Blank where none was made.
    corrected_inputs: str = ""
    # The alternative annotator test's counts per person (judge better, tied, person better): the page runs
    # the test at the epsilon it is asked for (evalhub.core.statistics.alt_test.alt_test_of).
    alt_outcomes: dict[str, list[int]] = field(default_factory=dict)
    # Test–retest: its first two answers on the same pair in the same order (a judge run with k > 1 samples).
    retest_pairs: int = 0
    retest_agreement: Interval | None = None
    retest_kappa: Interval | None = None

    @property
    def length_coef(self) -> float | None:
        return self.length_interval.value

    @property
    def kind_label(self) -> str:
        return KINDS[self.judge.kind]

    def alt_test(self, epsilon: float = DEFAULT_EPSILON) -> AltTest:
        """May this judge replace the people? The alternative annotator test at `epsilon`."""
        return alt_test_of(self.alt_outcomes, epsilon=epsilon)

    def as_json(self, epsilon: float = DEFAULT_EPSILON) -> dict[str, Any]:
        """The export's object: the names the issue and the manual promise, plain values only (the
        alternative annotator test at `epsilon`)."""
        return {
            "id": self.judge.id,
            "name": self.judge.name,
            "kind": self.judge.kind,
            "model": self.judge.model,
            "privileged": list(self.judge.privileged),
            "improved_on_train_labels": bool(self.judge.improved),
            "scored_on": {HELD_OUT_PAIRS: "held-out pairs only", ALL_PAIRS: "all pairs (optimistic)"}.get(
                self.judge.improved, "all pairs"
            ),
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
            "per_class": [
                {
                    "verdict": scores.verdict,
                    "support": scores.support,
                    **{
                        f"{name}{suffix}": bound
                        for name in ("precision", "recall", "f1")
                        for suffix, bound in zip(("", "_low", "_high"), astuple(getattr(scores, name)), strict=True)
                    },
                }
                for scores in self.per_class
            ],
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
            "alt_test": alt_test_json(self.alt_test(epsilon), self.alt_outcomes) if self.alt_outcomes else None,
            "retest": None
            if not self.retest_pairs or self.retest_agreement is None or self.retest_kappa is None
            else {
                "pairs": self.retest_pairs,
                "agreement": self.retest_agreement.value,
                "agreement_ci": self.retest_agreement.as_list(),
                "kappa": self.retest_kappa.value,
                "kappa_ci": self.retest_kappa.as_list(),
            },
            "corrected_ratings": (
                {"note": self.corrected}
                if isinstance(self.corrected, str)
                else None
                if self.corrected is None
                else {
                    "n_human": self.corrected.n_human,
                    "n_judge": self.corrected.n_judge,
                    "judge_weight": self.corrected.judge_weight,
                    "model": "Bradley–Terry (prediction-powered logistic regression)",
                    "estimator": self.corrected.estimator,
                    "estimator_label": self.corrected.estimator_label,
                    "estimator_reason": self.corrected.estimator_reason,
                    "judges_combined": self.corrected.judges,
                    "strata": self.corrected.strata,
                    "intervals": f"cluster-robust by prompt ({self.corrected.prompts} prompts)"
                    if self.corrected.prompts
                    else "independent battles",
                    "prompts": self.corrected.prompts,
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
    pairwise: list[PersonPair]  # every two people who share enough pairs: their kappa, with its n

    def as_json(self) -> dict[str, Any]:
        return {
            "people": self.people,
            "units": self.units,
            "krippendorff_alpha": self.alpha.value,
            "alpha_ci": self.alpha.as_list(),
            "with_others": [asdict(row) for row in self.with_others],
            "pairwise_kappa": [asdict(row) for row in self.pairwise],
        }


@dataclass
class Report:
    judges: list[JudgeReport]
    people: PeopleReport

    def as_json(self, epsilon: float = DEFAULT_EPSILON) -> dict[str, Any]:
        return {"judges": [judge.as_json(epsilon) for judge in self.judges], "people": self.people.as_json()}

    def find(self, judge_id: str) -> JudgeReport | None:
        return next((judge for judge in self.judges if judge.judge.id == judge_id), None)

    def with_corrected(self, boards: Mapping[str, CorrectedBoard | str | None]) -> Report:
        """This report with each judge's corrected board replaced by its board in `boards` (judge id →
        board, as `build_corrected_boards` gives them; a judge missing there keeps none)."""
        judges = [
            replace(judge, corrected=boards.get(judge.judge.id)) if judge.judge.kind != PERSON else judge
            for judge in self.judges
        ]
        return Report(judges=judges, people=self.people)


def summary_row(report: JudgeReport) -> dict[str, Any]:
    """The headline figures of one judge, as the list page and its CSV show them."""
    return {
        "judge": report.judge.name,
        "kind": report.judge.kind,
        "n": report.n,
        "agreement": report.agreement.value,
        "agreement_low": report.agreement.low,
        "agreement_high": report.agreement.high,
        "kappa": report.kappa.value,
        "kappa_low": report.kappa.low,
        "kappa_high": report.kappa.high,
        "position_flip_rate": report.position.value,
        "longer_share": report.longer_share,
        "people_longer_share": report.people_longer_share,
        "self_preference_excess": report.self_preference.excess if report.self_preference else None,
        "ece": report.calibration.ece if report.calibration else None,
        "brier": report.calibration.brier if report.calibration else None,
        "corrected_estimator": report.corrected.estimator if isinstance(report.corrected, CorrectedBoard) else None,
    }


_BOARD_FACTS = (
    "judge",
    "kind",
    "estimator",
    "estimator_reason",
    "judge_weight",
    "judges_combined",
    "n_human",
    "n_judge",
    "prompts",
)


def _rating_column(name: str) -> str:
    return name.replace("judge", "judge_rating")  # the judge's own rating: "judge" names the judge


# The corrected boards' columns, in order: a CSV of no board still has its header.
CORRECTED_COLUMNS = [*_BOARD_FACTS, *(_rating_column(f.name) for f in fields(CorrectedRating))]


def corrected_rows(reports: Sequence[JudgeReport]) -> list[dict[str, Any]]:
    """Every corrected board as rows (CORRECTED_COLUMNS), one per judge and model: the judge's own
    rating, the corrected one and people's alone, each with its interval, and the estimator that
    gave the corrected one."""
    rows: list[dict[str, Any]] = []
    for report in reports:
        board = report.corrected
        if not isinstance(board, CorrectedBoard):
            continue
        facts = dict(
            zip(
                _BOARD_FACTS,
                (
                    report.judge.name,
                    report.judge.kind,
                    board.estimator,
                    board.estimator_reason,
                    board.judge_weight,
                    board.judges,
                    board.n_human,
                    board.n_judge,
                    board.prompts,
                ),
                strict=True,
            )
        )
        for rating in board.ratings:
            rows.append({**facts, **{_rating_column(key): value for key, value in asdict(rating).items()}})
    return rows
