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
from collections.abc import Hashable, Mapping
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


def alt_test(
    people: Mapping[str, Mapping[Hashable, Label]],
    judge: Mapping[Hashable, Label],
    *,
    epsilon: float = 0.2,
    q: float = 0.05,
    kind: Kind = CATEGORICAL,
) -> AltTest:
    """The alt-test of `judge` ({item: label}) against `people` ({person: {item: label}}). Items the
    judge did not label are left out for everyone; a person with fewer than MIN_ITEMS shared items is
    listed without a p-value and counts as not beaten."""
    from scipy.stats import false_discovery_control, ttest_1samp, wilcoxon

    if kind == RANKED:
        people = {person: _ranks(labels) for person, labels in people.items()}
        judge = _ranks(judge)
    if len([p for p, labels in people.items() if labels]) < MIN_PEOPLE:
        return AltTest(epsilon, q, kind, verdict="too few people: the test needs at least two per item")
    tests: list[PersonTest] = []
    for person in sorted(people):
        w_judge, w_person = [], []
        for item, own in sorted(people[person].items(), key=lambda pair: str(pair[0])):
            if item not in judge:
                continue
            others = [labels[item] for other, labels in people.items() if other != person and item in labels]
            if not others:
                continue
            s_judge, s_person = _alignment(judge[item], others, kind), _alignment(own, others, kind)
            w_judge.append(1.0 if s_judge >= s_person else 0.0)
            w_person.append(1.0 if s_person >= s_judge else 0.0)
        n = len(w_judge)
        if n == 0:
            continue
        rho_f, rho_h = float(np.mean(w_judge)), float(np.mean(w_person))
        d = np.asarray(w_person) - np.asarray(w_judge)
        test, p = "", None
        if n >= T_TEST_FROM:
            test = "t"
            p = _t_p(d, epsilon, ttest_1samp)
        elif n >= MIN_ITEMS:
            test = "wilcoxon"
            shifted = d - epsilon
            p = 1.0 if not np.any(shifted) else float(wilcoxon(shifted, alternative="less").pvalue)
        tests.append(PersonTest(person, n, rho_f, rho_h, test, p))
    tested = [t for t in tests if t.p is not None]
    if not tested:
        return AltTest(epsilon, q, kind, tests, verdict="too few items: no person shares enough with the judge")
    adjusted = iter(false_discovery_control([t.p for t in tested], method="by"))
    people_tests = [t if t.p is None else _with_adjusted(t, float(next(adjusted)), q) for t in tests]
    rate = sum(t.judge_wins for t in people_tests) / len(people_tests)
    advantage = float(np.mean([t.rho_judge for t in people_tests]))
    verdict = (
        f"may replace these people at ε = {epsilon:g}"
        if rate >= PASSING_RATE
        else f"may not replace these people at ε = {epsilon:g}"
    )
    return AltTest(epsilon, q, kind, people_tests, rate, advantage, verdict)


def _t_p(d: np.ndarray, epsilon: float, ttest_1samp: Any) -> float:
    if np.all(d == d[0]):  # no spread: the mean is known exactly
        return 0.0 if d[0] < epsilon else 1.0
    return float(ttest_1samp(d, epsilon, alternative="less").pvalue)


def _with_adjusted(test: PersonTest, adjusted: float, q: float) -> PersonTest:
    return PersonTest(
        test.person, test.items, test.rho_judge, test.rho_person, test.test, test.p, adjusted, adjusted <= q
    )
