"""A minimum validation protocol for a judge, in the order a team should read it: agreement with people
→ chance-corrected agreement (κ) → consistency (test–retest: the same pair asked again, same order) →
a bias audit (position and length). After Norman, Rivera & Hughes, "Reliability without Validity" (2026),
which found test–retest reliability above 0.95 beside severe position bias in 21 judges: consistency is
necessary, not sufficient, so every step is shown and a consistent but biased judge is named as such.

Each step passes, fails or is "not measured" (with the n it rests on), against thresholds the page states
and its user may change (`Thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from evalhub.core.judge_lab.report_types import JudgeReport

PASS, FAIL, NOT_MEASURED = "pass", "fail", "not measured"
CONSISTENT = 0.9  # retest agreement from which a judge counts as consistent (for the pattern's flag)


@dataclass(frozen=True)
class Thresholds:
    agreement: float = 0.7  # its agreement with the reference (people, or the debate) at least
    kappa: float = 0.4  # Cohen's κ at least (Landis & Koch's "moderate")
    retest_kappa: float = 0.8  # κ between its two answers to the same question at least
    position_flips: float = 0.1  # the share of pairs whose verdict changes with the order at most

    @classmethod
    def of(cls, given: dict[str, str]) -> Thresholds:
        """From a page's query: a value outside [0, 1], or not a number, keeps the default."""
        values = {}
        for field in fields(cls):
            try:
                value = float(given.get(field.name, ""))
            except ValueError:
                continue
            if 0 <= value <= 1:
                values[field.name] = value
        return cls(**values)


@dataclass(frozen=True)
class Step:
    name: str
    measured: str  # what was measured, in words, with its n
    threshold: str
    outcome: str  # PASS, FAIL or NOT_MEASURED


def _step(name: str, value: float | None, n: int, threshold: float, at_least: bool, what: str) -> Step:
    sign = "≥" if at_least else "≤"
    if value is None or not n:
        return Step(name, f"not measured ({what})", f"{sign} {threshold:g}", NOT_MEASURED)
    passed = value >= threshold if at_least else value <= threshold
    return Step(name, f"{value:.3f} on {n} pairs", f"{sign} {threshold:g}", PASS if passed else FAIL)


def protocol(report: JudgeReport, thresholds: Thresholds = Thresholds()) -> list[Step]:
    """The four steps for one judge's report."""
    retest = report.retest_kappa.value if report.retest_kappa else None
    length = report.length_interval
    length_biased = length.low is not None and length.high is not None and (length.low > 0 or length.high < 0)
    flips = _step(
        "Bias audit: position",
        report.position.value,
        report.position_pairs,
        thresholds.position_flips,
        False,
        "never asked in both orders",
    )
    return [
        _step("Agreement", report.agreement.value, report.n, thresholds.agreement, True, "no reference"),
        _step("Chance-corrected agreement (κ)", report.kappa.value, report.n, thresholds.kappa, True, "no reference"),
        _step(
            "Consistency (test–retest κ)",
            retest,
            report.retest_pairs,
            thresholds.retest_kappa,
            True,
            "ask each pair twice: a judge run with 2 or more samples",
        ),
        flips,
        Step(
            "Bias audit: length",
            "prefers the longer response (95 % interval of its length slope above 0)"
            if length_biased and (length.low or 0) > 0
            else "prefers the shorter response (interval below 0)"
            if length_biased
            else "no length preference found"
            if length.value is not None
            else "not measured (no decisive verdict)",
            "interval covers 0",
            NOT_MEASURED if length.value is None else FAIL if length_biased else PASS,
        ),
    ]


def consistent_but_biased(report: JudgeReport, thresholds: Thresholds = Thresholds()) -> bool:
    """The pattern the study warns of: it answers the same way again, and the order it is shown decides."""
    retest = report.retest_agreement.value if report.retest_agreement else None
    flips = report.position.value
    return retest is not None and retest >= CONSISTENT and flips is not None and flips > thresholds.position_flips
