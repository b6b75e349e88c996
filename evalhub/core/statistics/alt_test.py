"""The alternative annotator test (alt-test): may a judge replace these people?

Calderon, Reichart & Dror, "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs" (ACL 2025). Leave one person out at a time; on every item
that person labelled along with at least one other person, score how well the judge and the left-out
person each represent the remaining people (the alignment score S). The judge "wins" an item when its
score is at least the person's (W_f), the person when theirs is at least the judge's (W_h): a tie is a
win for both. Per person j, the advantage probabilities are rho_f = mean W_f and rho_h = mean W_h, and the
test is one-sided, H0: rho_f <= rho_h - epsilon against H1: rho_f > rho_h - epsilon, epsilon the
cost-benefit penalty on the person (the authors' rule of thumb: 0.2 for experts, 0.15 for skilled
annotators, 0.1 for crowd workers; smaller where people agree less). It is a paired test on the items'
d_i = W_h - W_f: Student's t of mean(d) < epsilon from 30 items, Wilcoxon's signed-rank test of
d - epsilon below that, as the authors advise. The people's p-values are adjusted together by
Benjamini–Yekutieli's procedure (the tests share the judge and the people: they are dependent; scipy's
`false_discovery_control`), and the winning rate omega is the share of people whose null hypothesis is
rejected at q. The judge passes when omega >= 0.5. The advantage probability of the judge is the mean of
its rho_f over the people.

The alignment score, by kind of label (evalhub's reading of the paper's "represents the others"):
- categorical (a verdict 1 / 2 / neither, a category): the share of the other people who gave the same
  label (accuracy against each of them, averaged);
- numeric and ordinal (a score, a rating): minus the root mean squared difference from the other people's
  values (a smaller distance represents them better);
- ranked: as numeric, on each rater's ranks of the items (ties at their mean rank), so that only order
  matters.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Kind = Literal["categorical", "numeric", "ranked"]
CATEGORICAL: Kind = "categorical"
NUMERIC: Kind = "numeric"
RANKED: Kind = "ranked"
MIN_PEOPLE = 2  # the test needs one person left out and at least one other (the authors recommend 3)
MIN_ITEMS = 10  # per person: below this no p-value is drawn (the authors recommend 50–100)
T_TEST_FROM = 30  # items per person from which Student's t is used (Wilcoxon's below)
PASSING_RATE = 0.5
DEFAULT_EPSILON = 0.2  # the authors' rule of thumb for experts (0.15 skilled annotators, 0.1 crowd workers)
Label = Any  # a category (any value compared by equality) or a number


@dataclass(frozen=True)
class PersonTest:
    """One left-out person: their items, the judge's and their advantage probabilities, the test."""

    person: str
    items: int
    rho_judge: float
    rho_person: float
    test: str  # "t" or "wilcoxon", or "" with too few items
    p: float | None
    p_adjusted: float | None = None
    judge_wins: bool = False  # H0 rejected at q after the adjustment


@dataclass(frozen=True)
class AltTest:
    epsilon: float
    q: float
    kind: str
    people: list[PersonTest] = field(default_factory=list)
    winning_rate: float | None = None
    advantage_probability: float | None = None
    verdict: str = ""

    @property
    def passes(self) -> bool:
        return self.winning_rate is not None and self.winning_rate >= PASSING_RATE


def _ranks(labels: Mapping[Hashable, float]) -> dict[Hashable, float]:
    from scipy.stats import rankdata

    items = list(labels)
    return dict(zip(items, rankdata([float(labels[i]) for i in items]), strict=True))


def _alignment(value: Label, others: list[Label], kind: str) -> float:
    if kind == CATEGORICAL:
        return float(np.mean([other == value for other in others]))
    return -math.sqrt(float(np.mean([(float(value) - float(other)) ** 2 for other in others])))


# Per person: the items the judge represents the others better on (W_f = 1, W_h = 0), those it ties the
# person on (both 1), and those the person is better on (W_h = 1, W_f = 0). These three counts are all the
# test reads (d = W_h - W_f is -1, 0 or 1), so a report keeps them and the test runs at any epsilon later.
Outcomes = dict[str, tuple[int, int, int]]


def outcomes(
    people: Mapping[str, Mapping[Hashable, Label]], judge: Mapping[Hashable, Label], kind: Kind = CATEGORICAL
) -> Outcomes:
    """Each person's (judge better, tied, person better) over the items they labelled with at least one other
    person and the judge; a person with no such item is left out."""
    if kind == RANKED:
        people = {person: _ranks(labels) for person, labels in people.items()}
        judge = _ranks(judge)
    found: Outcomes = {}
    for person in sorted(people):
        judge_better = tied = person_better = 0
        for item, own in people[person].items():
            if item not in judge:
                continue
            others = [labels[item] for other, labels in people.items() if other != person and item in labels]
            if not others:
                continue
            s_judge, s_person = _alignment(judge[item], others, kind), _alignment(own, others, kind)
            if s_judge > s_person:
                judge_better += 1
            elif s_judge == s_person:
                tied += 1
            else:
                person_better += 1
        if judge_better + tied + person_better:
            found[person] = (judge_better, tied, person_better)
    return found


def alt_test(
    people: Mapping[str, Mapping[Hashable, Label]],
    judge: Mapping[Hashable, Label],
    *,
    epsilon: float = DEFAULT_EPSILON,
    q: float = 0.05,
    kind: Kind = CATEGORICAL,
) -> AltTest:
    """The alt-test of `judge` ({item: label}) against `people` ({person: {item: label}}). Items the
    judge did not label are left out for everyone; a person with fewer than MIN_ITEMS shared items is
    listed without a p-value and counts as not beaten."""
    if len([p for p, labels in people.items() if labels]) < MIN_PEOPLE:
        return AltTest(epsilon, q, kind, verdict="too few people: the test needs at least two per item")
    return alt_test_of(outcomes(people, judge, kind), epsilon=epsilon, q=q, kind=kind)


def alt_test_of(
    found: Mapping[str, Sequence[int]], *, epsilon: float = DEFAULT_EPSILON, q: float = 0.05, kind: str = CATEGORICAL
) -> AltTest:
    """The alt-test from each person's (judge better, tied, person better) counts (`outcomes`)."""
    from scipy.stats import false_discovery_control, ttest_1samp, wilcoxon

    if len(found) < MIN_PEOPLE:
        return AltTest(epsilon, q, kind, verdict="too few people: the test needs at least two per item")
    tests: list[PersonTest] = []
    for person, (judge_better, tied, person_better) in sorted(found.items()):
        n = judge_better + tied + person_better
        rho_f, rho_h = (judge_better + tied) / n, (person_better + tied) / n
        d = np.array([-1.0] * judge_better + [0.0] * tied + [1.0] * person_better)
        test, p = "", None
        if n >= T_TEST_FROM:
            test, p = "t", _t_p(d, epsilon, ttest_1samp)
        elif n >= MIN_ITEMS:
            shifted = d - epsilon
            test = "wilcoxon"
            p = 1.0 if not np.any(shifted) else float(wilcoxon(shifted, alternative="less").pvalue)
        tests.append(PersonTest(person, n, rho_f, rho_h, test, p))
    tested = [t for t in tests if t.p is not None]
    if not tested:
        return AltTest(epsilon, q, kind, tests, verdict="too few items: no person shares enough with the judge")
    adjusted = iter(false_discovery_control([t.p for t in tested], method="by"))
    people_tests = [t if t.p is None else _with_adjusted(t, float(next(adjusted)), q) for t in tests]
    rate = sum(t.judge_wins for t in people_tests) / len(people_tests)
    advantage = float(np.mean([t.rho_judge for t in people_tests]))
    may = "may" if rate >= PASSING_RATE else "may not"
    return AltTest(epsilon, q, kind, people_tests, rate, advantage, f"{may} replace these people at ε = {epsilon:g}")


def _t_p(d: np.ndarray, epsilon: float, ttest_1samp: Any) -> float:
    if np.all(d == d[0]):  # no spread: the mean is known exactly
        return 0.0 if d[0] < epsilon else 1.0
    return float(ttest_1samp(d, epsilon, alternative="less").pvalue)


def _with_adjusted(test: PersonTest, adjusted: float, q: float) -> PersonTest:
    return PersonTest(
        test.person, test.items, test.rho_judge, test.rho_person, test.test, test.p, adjusted, adjusted <= q
    )
