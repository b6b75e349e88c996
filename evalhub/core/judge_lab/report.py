"""The judge report: for every judge, how far its verdicts can be trusted (see `judge_lab` for the
definitions; `report_types` for what it holds). Pure: the caller gathers labels, pairs and the debates'
settled verdicts."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalhub.core.judge_lab.corrected_boards import PairCodes, PeoplesShares, board_inputs, corrected_board, shares
from evalhub.core.judge_lab.measures import (
    ABSENT,
    BOOTSTRAP,
    FIRST,
    MIN_SHARED,
    NO_VERDICT,
    SECOND,
    SEED,
    TIE,
    TURNED,
    Calibration,
    Interval,
    JudgeVerdicts,
    Label,
    LabelArrays,
    Pair,
    calibration,
    confusion_figures,
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
from evalhub.core.judge_lab.report_types import (
    AGENT,
    CONSENSUS,
    DEBATE_REFERENCE,
    MODEL,
    PANEL,
    PEOPLE_REFERENCE,
    PERSON,
    BiasErrors,
    CategoryLift,
    DebateReference,
    JudgeInfo,
    JudgeReport,
    PeopleReport,
    PersonAgreement,
    PersonPair,
    PrivilegedLift,
    Report,
    SelfPreference,
    VersusPeople,
)
from evalhub.core.statistics.corrected_ratings import CorrectedBoard
from evalhub.core.statistics.estimators import Correction

BY_RULE = Correction()

COLUMN = {FIRST: 0, SECOND: 1, TIE: 2}  # verdict → its column in a count table
VERDICT_OF_COLUMN = np.array([FIRST, SECOND, TIE])


class _Index:
    """Every pair as a row of numpy arrays, so that each judge's figures are array operations:
    the report reads every verdict of every judge, and the board must stay fast cold."""

    def __init__(self, pairs: Mapping[Hashable, Pair], settled: Mapping[Hashable, DebateReference]) -> None:
        self.items = list(pairs)
        self.row = {item: i for i, item in enumerate(self.items)}
        cluster_ids = {pair.cluster: i for i, pair in enumerate(pairs.values())}
        self.cluster = np.array([cluster_ids[pairs[item].cluster] for item in self.items], dtype=int)
        model_1 = np.array([pairs[i].model_1 for i in self.items], dtype=object)
        model_2 = np.array([pairs[i].model_2 for i in self.items], dtype=object)
        # Response 1 is the model whose slug sorts first (as read where one model's), not whichever a file
        # listed first: κ, calibration's bins, the length slope's intercept and α's pooled categories moved
        # when a file wrote pairs the other way round. Turned once, with labels (`LabelArrays.turned`).
        self.flipped = model_1 > model_2
        sign = np.where(self.flipped, -1.0, 1.0)
        self.model_1 = np.where(self.flipped, model_2, model_1)
        self.model_2 = np.where(self.flipped, model_1, model_2)
        self.difference = sign * np.array([pairs[i].length_1 - pairs[i].length_2 for i in self.items], dtype=float)
        self.category = np.array([pairs[i].category for i in self.items], dtype=object)
        self.formatting = sign * np.array(
            [pairs[i].formatting_1 - pairs[i].formatting_2 for i in self.items], dtype=float
        )
        self.consensus = np.full(len(self.items), ABSENT)
        self.adjudicated = np.full(len(self.items), ABSENT)
        for item, verdict in settled.items():
            if item in self.row:
                target = self.consensus if verdict.how == CONSENSUS else self.adjudicated
                row = self.row[item]
                target[row] = TURNED[verdict.verdict + 1] if self.flipped[row] else verdict.verdict

    def counts(self, picks: np.ndarray) -> np.ndarray:
        """(pairs × 3) counts of FIRST, SECOND and TIE from one rater's dense picks."""
        out = np.zeros((len(self.items), 3))
        for verdict, column in COLUMN.items():
            out[:, column] = picks == verdict
        return out


def _arrays(labels: Sequence[Label] | LabelArrays, index: _Index) -> LabelArrays:
    return labels if isinstance(labels, LabelArrays) else LabelArrays.of(labels, index.row)


def majority_of_counts(counts: np.ndarray) -> np.ndarray:
    """Per pair the most frequent verdict, ABSENT when there is none or the top is tied."""
    top = counts.argmax(axis=1)
    ordered = np.sort(counts, axis=1)
    clear = (ordered[:, -1] > 0) & (ordered[:, -1] > ordered[:, -2])
    return np.where(clear, VERDICT_OF_COLUMN[top], ABSENT)


def build_report(
    judges: Sequence[JudgeInfo],
    labels: Mapping[str, Sequence[Label] | LabelArrays],
    pairs: Mapping[Hashable, Pair],
    settled: Mapping[Hashable, DebateReference],
    *,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    correction: Correction = BY_RULE,
    kept_boards: Mapping[str, CorrectedBoard | str | None] | None = None,
) -> Report:
    """Every judge's report, ranked by kappa (highest first; judges whose kappa rests on too few prompts for
    an interval after those with one; judges without one last), its corrected board by `correction`.
    `kept_boards`: boards by the digest of their inputs (an earlier report's `corrected_inputs`), taken
    as they are where a judge's inputs have that digest, not fitted again."""
    context = _context(judges, labels, pairs, settled, resamples=resamples, seed=seed, correction=correction)
    context = dataclasses.replace(context, codes=PairCodes.of(context.index), kept_boards=kept_boards or {})
    index, dense, people_counts = context.index, context.dense, context.people_counts
    general = _reference(index, majority_of_counts(people_counts), judge_kind=MODEL)
    without_consensus = _reference(index, majority_of_counts(people_counts), judge_kind=PANEL)
    reports = []
    for judge in judges:
        if not (dense[judge.id] != ABSENT).any():
            continue
        if judge.kind == PERSON:
            others = majority_of_counts(people_counts - context.person_counts[judge.id])
            reference = _reference(index, others, judge_kind=PERSON)
        else:
            reference = without_consensus if judge.kind in (PANEL, AGENT) else general
        reports.append(_judge_report(judge, reference, context))
    # Judges whose kappa rests on too few prompts for an interval come after those with one.
    reports.sort(key=lambda r: (r.kappa.value is None, r.kappa.low is None, -(r.kappa.value or 0), -r.n, r.judge.name))
    return Report(judges=reports, people=_people_report(context))


def build_corrected_boards(
    judges: Sequence[JudgeInfo],
    labels: Mapping[str, Sequence[Label] | LabelArrays],
    pairs: Mapping[Hashable, Pair],
    settled: Mapping[Hashable, DebateReference],
    correction: Correction,
) -> dict[str, CorrectedBoard | str | None]:
    """Each judge's corrected board by `correction` (judge id → board, or why there is none), as
    `build_report` makes them, and nothing else of the report: another estimator's boards cost their
    fits, not every measure again (`Report.with_corrected` puts them in a report)."""
    context = _context(judges, labels, pairs, settled, correction=correction)
    return {
        judge.id: _corrected(judge, context)
        for judge in judges
        if judge.kind != PERSON and (context.dense[judge.id] != ABSENT).any()
    }


def _context(
    judges: Sequence[JudgeInfo],
    labels: Mapping[str, Sequence[Label] | LabelArrays],
    pairs: Mapping[Hashable, Pair],
    settled: Mapping[Hashable, DebateReference],
    *,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    correction: Correction = BY_RULE,
) -> _Context:
    index = _Index(pairs, settled)
    verdicts = {
        judge.id: dense_verdicts(_arrays(labels.get(judge.id, ()), index).turned(index.flipped), len(index.items))
        for judge in judges
    }
    dense = {judge.id: verdicts[judge.id].primary for judge in judges}
    people = [judge.id for judge in judges if judge.kind == PERSON]
    person_counts = {person: index.counts(dense[person]) for person in people}
    people_counts = sum(person_counts.values(), np.zeros((len(index.items), 3)))
    return _Context(
        index=index,
        verdicts=verdicts,
        # Each judge's share for the first model, once: several-judge boards read every other judge's.
        shares={judge.id: shares(verdicts[judge.id]) for judge in judges if judge.kind != PERSON},
        dense=dense,
        people=people,
        person_counts=person_counts,
        people_counts=people_counts,
        people_kappas=_people_kappas(people, dense),
        left_out=_left_out(people, dense, person_counts, people_counts),
        model_counts=_counts_by_model(index, judges, dense),
        peoples_shares=PeoplesShares.of(index, people_counts),
        judges=judges,
        resamples=resamples,
        seed=seed,
        correction=correction,
    )


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
    that are that model; and under None, of all LLM judges (self-preference compares the two). A judge
    whose model is in no pair has no table of its own: at ten million labels forty such tables held
    0.4 GiB that self-preference never read."""
    out: dict[str | None, np.ndarray] = {None: np.zeros((len(index.items), 3))}
    candidates = set(index.model_1) | set(index.model_2)
    for judge in judges:
        if judge.kind in (MODEL, AGENT):
            counts = index.counts(dense[judge.id])
            out[None] += counts
            if judge.model in candidates:
                out[judge.model] = out.get(judge.model, 0) + counts
    return out


@dataclass(frozen=True)
class _Context:
    """What every judge's report reads, computed once."""

    index: _Index
    verdicts: Mapping[str, JudgeVerdicts]
    shares: Mapping[str, np.ndarray]
    dense: Mapping[str, np.ndarray]
    people: Sequence[str]
    person_counts: Mapping[str, np.ndarray]
    people_counts: np.ndarray
    people_kappas: list[PersonPair]  # every two people who share enough pairs
    left_out: Mapping[str, _LeftOut]  # each person as the alternative annotator test leaves them out
    model_counts: Mapping[str | None, np.ndarray]
    peoples_shares: PeoplesShares
    judges: Sequence[JudgeInfo]
    resamples: int
    seed: int
    correction: Correction = BY_RULE
    codes: PairCodes | None = None
    kept_boards: Mapping[str, CorrectedBoard | str | None] = dataclasses.field(default_factory=dict)


def _judge_report(judge: JudgeInfo, reference: tuple[np.ndarray, np.ndarray], context: _Context) -> JudgeReport:
    index, mine = context.index, context.verdicts[judge.id]
    picks = context.dense[judge.id]
    judged = picks != ABSENT
    expected, source = reference
    scored = judged & (expected != ABSENT)
    agreement, kappa, per_class = confusion_figures(
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
        per_class=per_class,
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
        alt_outcomes=_alt_outcomes(picks, context) if judge.kind != PERSON else {},
        **_retest(mine, index, context),
        **(_corrected_or_kept(judge, context) if judge.kind != PERSON else {}),
    )


def _retest(mine: JudgeVerdicts, index: _Index, context: _Context) -> dict[str, Any]:
    """Test–retest reliability: on the pairs the judge answered at least twice in the same order (a new
    sample of the same question), agreement and Cohen's κ between its first two answers, with 95 %
    bootstrap intervals over prompts (pairs where either answer held no verdict are left out)."""
    first, second = mine.first_sample, mine.second_sample
    if first is None or second is None:
        return {}
    read = (first != ABSENT) & (second != ABSENT) & (first != NO_VERDICT) & (second != NO_VERDICT)
    if not read.any():
        return {}
    agreement, kappa, _ = confusion_figures(
        second[read], first[read], index.cluster[read], context.resamples, context.seed
    )
    return {"retest_pairs": int(read.sum()), "retest_agreement": agreement, "retest_kappa": kappa}


@dataclass(frozen=True)
class _LeftOut:
    """One person left out, as the alternative annotator test reads them: the pairs they and at least one
    other person gave a verdict on, the share of the other people giving each verdict there (pairs × 3),
    and the share agreeing with the person's own verdict."""

    rows: np.ndarray
    shares: np.ndarray
    own: np.ndarray


def _columns(picks: np.ndarray) -> np.ndarray:
    """FIRST, SECOND, TIE → their column in a count table (COLUMN), as arrays."""
    return np.select([picks == FIRST, picks == SECOND], [COLUMN[FIRST], COLUMN[SECOND]], COLUMN[TIE])


def _left_out(
    people: Sequence[str],
    dense: Mapping[str, np.ndarray],
    person_counts: Mapping[str, np.ndarray],
    people_counts: np.ndarray,
) -> dict[str, _LeftOut]:
    """Each person's `_LeftOut`, once a report (every judge's test reads them)."""
    out: dict[str, _LeftOut] = {}
    if len(people) < 2:
        return out
    for person in people:
        mine = dense[person]
        others = people_counts - person_counts[person]
        total = others.sum(axis=1)
        rows = np.flatnonzero((mine != ABSENT) & (mine != NO_VERDICT) & (total > 0))
        if len(rows):
            shares = others[rows] / total[rows, None]
            out[person] = _LeftOut(rows, shares, shares[np.arange(len(rows)), _columns(mine[rows])])
    return out


def _alt_outcomes(picks: np.ndarray, context: _Context) -> dict[str, list[int]]:
    """The alt-test's counts per person (evalhub.core.statistics.alt_test.outcomes, on verdicts): on each
    pair the person and at least one other person labelled and the judge answered, whether the judge's
    verdict or the person's is shared by more of the other people (their share agreeing, the paper's
    accuracy against each of them averaged)."""
    out: dict[str, list[int]] = {}
    for person, left in sorted(context.left_out.items()):
        judged = picks[left.rows]
        answered = np.flatnonzero((judged != ABSENT) & (judged != NO_VERDICT))
        if not len(answered):
            continue
        judge_score = left.shares[answered, _columns(judged[answered])]
        person_score = left.own[answered]
        out[person] = [
            int((judge_score > person_score).sum()),
            int((judge_score == person_score).sum()),
            int((judge_score < person_score).sum()),
        ]
    return out


def _corrected(judge: JudgeInfo, context: _Context) -> CorrectedBoard | str | None:
    estimator = context.correction.estimator
    return corrected_board(judge, context.index, context.shares, context.judges, context.peoples_shares, estimator)


def _corrected_or_kept(judge: JudgeInfo, context: _Context) -> dict[str, Any]:
    """The judge's corrected board and the digest of its inputs: the kept board with that digest, if any."""
    assert context.codes is not None, "build_report makes the pairs' codes once"
    estimator = context.correction.estimator
    inputs = board_inputs(judge, context.index, context.codes, context.shares, context.peoples_shares, estimator)
    if inputs is not None and inputs in context.kept_boards:
        return {"corrected": context.kept_boards[inputs], "corrected_inputs": inputs}
    return {"corrected": _corrected(judge, context), "corrected_inputs": inputs or ""}


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
    people_kappas = [pair.kappa for pair in context.people_kappas if pair.kappa is not None]
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


def _people_kappas(people: Sequence[str], dense: Mapping[str, np.ndarray]) -> list[PersonPair]:
    """Kappa of every two people on the pairs both answered (at least MIN_SHARED), with that n, in the
    order of `people`. Only the two that share enough are compared: the pairs each answered, one sparse row a
    person, multiplied by their transpose, count what every two share at once. Comparing every two of
    a crowd's voters (Arena's, a vote or a few each) took a thousand of them 7 CPU-s, and grew with
    their square."""
    from scipy import sparse

    if len(people) < 2:
        return []
    columns = [np.flatnonzero((dense[person] != ABSENT) & (dense[person] != NO_VERDICT)) for person in people]
    starts = np.concatenate([[0], np.cumsum([len(answered) for answered in columns])])
    answered = sparse.csr_matrix(
        (np.ones(starts[-1], dtype=np.int32), np.concatenate(columns), starts),
        shape=(len(people), len(dense[people[0]])),
    )
    shared = sparse.triu(answered @ answered.T, k=1).tocoo()
    enough = shared.data >= MIN_SHARED
    found = []
    pairs = zip(shared.row[enough].tolist(), shared.col[enough].tolist(), shared.data[enough].tolist(), strict=True)
    for i, j, n in sorted(pairs):
        a, b = dense[people[i]], dense[people[j]]
        first, second = sorted((people[i], people[j]))  # kappa is the same either way round
        found.append(PersonPair(first, second, int(n), _pair_kappa(np.where(a == NO_VERDICT, ABSENT, a), b)))
    return sorted(found, key=lambda pair: (pair.first, pair.second))  # by name, whatever the judges' order


def _people_report(context: _Context) -> PeopleReport:
    with_others = []
    for person in sorted(context.people):
        others = majority_of_counts(context.people_counts - context.person_counts[person])
        mine = context.dense[person]
        rated = (mine != ABSENT) & (mine != NO_VERDICT) & (others != ABSENT)
        with_others.append(
            PersonAgreement(
                person=person,
                pairs=int(rated.sum()),
                agreement=float((mine[rated] == others[rated]).mean()) if rated.any() else None,
            )
        )
    counts = context.people_counts
    return PeopleReport(
        people=len(context.people),
        units=int((counts.sum(axis=1) >= 2).sum()),
        alpha=krippendorff_alpha_from_counts(counts, context.resamples, context.seed, clusters=context.index.cluster),
        with_others=with_others,
        pairwise=context.people_kappas,
    )
