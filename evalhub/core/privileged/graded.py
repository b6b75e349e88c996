"""Graded pairwise preferences against people's average rating (privileged-information paper,
Figure 1, Table 4, Appendix A.1 and Figure 8).

People rate a pair on seven grades, −3 … 3 (1, 2, 3: the one response is slightly better, better,
significantly better; 0: of similar quality); about five people rate each pair and their ratings
are averaged (Appendix A.1). A judge answers with Figure 8's five verdicts, read here as grades
−2 … 2 from the first-shown response's side. A judge's grade of a pair is its mean over the k
samples and both orders (a grade given with the pair reversed counts with its sign flipped), and the
paper's figure is Spearman's ρ between those means and the people's averages over the pairs.
Spearman's ρ depends on ranks only, so the two scales need no common unit; the mean over samples
does weigh "significantly" twice "slightly", as the grades' spacing says.

Figure 1 puts individual people beside the judges: each person's ρ here is against the average of
the *other* people (the person's own rating left out), on the pairs at least one other person rated.
Table 4 repeats each configuration over seeds and gives the mean ± standard deviation of ρ.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from evalhub.core.prompts import sections as ps
from evalhub.core.statistics.rank_correlation import BOOTSTRAP, RankCorrelation, spearman

K = TypeVar("K", bound=Hashable)

PEOPLE_LOW, PEOPLE_HIGH = -3, 3  # Appendix A.1's seven grades
GRADES = {"A>>B": 2, "A>B": 1, "A=B": 0, "B>A": -1, "B>>A": -2}  # Figure 8's five verdicts
RESPONSE_A, RESPONSE_B = "Response A", "Response B"

# Figure 8 (Vibe-Eval's rating template), for text prompts: "image and prompt" reads "prompt", and
# each piece of privileged information is a marked section of its own, as in evalhub's other judges.
INSTRUCTIONS = (
    "You are an impartial judge who evaluates the quality of the responses provided by two AI assistants to the "
    "prompt below. You may be given extra information (such as guidelines, image descriptions, reference answers, "
    "etc) to help decide which response is better."
)
WITH_REFERENCE = (
    "In addition to the model responses, you will be given a reference answer. You should treat it as an example of "
    "what an excellent response to the prompt should be; ideally, responses A and B should mimic the reference "
    "answer. No need for responses to be well-formatted, detailed or informative."
)
VERDICT_REQUEST = (
    "When given the two responses, your job is to evaluate which of response A or response B is better. First, you "
    "always begin by analyzing the responses individually, pointing the pros and cons of each response. Second, you "
    "compare both responses against each other. This serves as a summary and synthesis of the individual analyses "
    "above. Finally, you will output your verdict. Your final verdict always is one of the following choices:\n\n"
    "1. Response A is significantly better: [[A >> B]]\n"
    "2. Response A is slightly better: [[A > B]]\n"
    "3. Tie, relatively the same: [[A = B]]\n"
    "4. Response B is slightly better: [[B > A]]\n"
    "5. Response B is significantly better: [[B >> A]]\n\n"
    'Example of final verdict: "My final verdict is tie: [[A = B]]."'
)
RATING_HEADING = "[Rating of Response A vs Response B]:"  # Figure 8's heading, marked so no section runs into it
CLOSING = "[Detailed Rating]:"  # a section of its own, so Response B's text ends where it should
GRADE_REMINDER = (
    "Your answer did not end with a final verdict. Reply again with your analysis and end with exactly one of "
    "[[A >> B]], [[A > B]], [[A = B]], [[B > A]] or [[B >> A]]."
)
_VERDICT = re.compile(r"\[\[\s*([AB])\s*(>>|>|=)\s*([AB])\s*\]\]")


def graded_prompt(
    question: str,
    response_a: str,
    response_b: str,
    *,
    criteria: str = "",
    privileged: Mapping[str, str] | None = None,
    reference_title: str = ps.REFERENCE_ANSWER,
    privileged_note: str = "",
) -> list[dict[str, str]]:
    """Figure 8's messages. `privileged` maps a section title to its text (empty: none shown); the
    reference-answer paragraph is there only when a reference answer is. evalhub's runs are per
    criterion, so the criterion is given as its own section (Figure 8 has Vibe-Eval's in its guidelines)."""
    shown = {title: text for title, text in (privileged or {}).items() if text}
    note = f" ({privileged_note})" if privileged_note else ""
    parts = [INSTRUCTIONS]
    if reference_title in shown:
        parts.append(WITH_REFERENCE)
    parts.append(VERDICT_REQUEST)
    sections = [ps.section(ps.QUESTION, question)]
    sections += [ps.section(ps.CRITERIA, criteria)] if criteria else []
    sections += [ps.section(f"{title}{note}", text) for title, text in shown.items()]
    sections += [RATING_HEADING + "\n", ps.section(RESPONSE_A, response_a), ps.section(RESPONSE_B, response_b)]
    body = "\n\n".join(parts) + "\n\n" + "\n".join(sections) + "\n" + CLOSING
    return [{"role": "user", "content": body}]


def parse_grade(text: str) -> int | None:
    """The last of Figure 8's verdicts in the answer, as a grade from A's side (2 … −2); None when
    there is none, or the last names one response twice ("[[A > A]]")."""
    found = _VERDICT.findall(text)
    if not found:
        return None
    left, relation, right = found[-1]
    if left == right:
        return None
    if relation == "=":
        return 0
    grade = 2 if relation == ">>" else 1
    return grade if left == "A" else -grade


def verdict_of_grade(grade: float | None) -> int | None:
    """A graded preference as a plain verdict in the same order: 1 first better, 2 second, 0 neither."""
    if grade is None:
        return None
    return 1 if grade > 0 else 2 if grade < 0 else 0


def mean_grades(rows: Iterable[tuple[K, float]]) -> dict[K, float]:
    """Each pair's mean grade over its rows (a judge's samples and orders, or people's ratings),
    every grade already from the same response's side."""
    totals: dict[K, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for key, grade in rows:
        total = totals[key]
        total[0] += grade
        total[1] += 1
    return {key: total / count for key, (total, count) in totals.items()}


def people_average(people: Mapping[str, Mapping[K, float]]) -> dict[K, float]:
    """The average rating of each pair over the people who rated it (each person's own mean first,
    so a person who rated a pair twice counts once)."""
    return mean_grades((key, grade) for grades in people.values() for key, grade in grades.items())


def each_person(
    people: Mapping[str, Mapping[K, float]], resamples: int = BOOTSTRAP, seed: int = 0
) -> dict[str, RankCorrelation]:
    """Each person's ρ against the average of the other people, their own rating left out."""
    out = {}
    for person, grades in people.items():
        others = people_average({name: g for name, g in people.items() if name != person})
        out[person] = spearman(grades, others, resamples, seed)
    return out


@dataclass(frozen=True)
class SeedSpread:
    """Table 4's "ρ ± sd": one configuration's ρ over its runs (seeds)."""

    values: tuple[float | None, ...]
    mean: float | None
    sd: float | None  # the sample standard deviation; None under two values

    @classmethod
    def of(cls, values: Sequence[float | None]) -> SeedSpread:
        defined = [value for value in values if value is not None]
        mean = statistics.fmean(defined) if defined else None
        sd = statistics.stdev(defined) if len(defined) > 1 else None
        return cls(tuple(values), mean, sd)
