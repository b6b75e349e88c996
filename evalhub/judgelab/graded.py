"""Graded preferences against people's average rating: the privileged-information paper's
Figure 1 and Table 4 (definitions in evalhub.core.privileged.graded).

People's grades are imported judgments with a `grade` (−3 … 3); a judge's are imported graded
judgments, or the answers of graded judge runs (Figure 8's prompt, k samples, both orders). Every
grade is read from the side of the model whose slug sorts first (alpha over beta, whichever was
shown first), so the same two responses judged in any order meet and every pair of the same two
models is read the same way round. ρ over pairs depends on that choice where several model pairs
are mixed (turning one pair round changes it), as the paper's depends on which response it showed
as A. Judge runs on the same pairs (one debate run) that differ only in their seed are one
configuration: the table gives ρ of all their answers averaged, and Table 4's mean ± sd of each
seed's ρ.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from evalhub.catalog.models import Judgment
from evalhub.core.charts import IntervalChart, interval_chart
from evalhub.core.privileged.graded import SeedSpread, each_person, mean_grades, people_average
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.core.statistics.rank_correlation import MIN_ITEMS, RankCorrelation, spearman
from evalhub.debates.models import GRADED, Debate, JudgeRun, JudgeVerdict
from evalhub.reads.judged_pairs import Scope, pair_key, with_privileged

PERSON, MODEL, RUNS = "person", "model", "judge runs"


@dataclass(frozen=True)
class GradedRow:
    judge: str
    kind: str  # PERSON (against the other people), MODEL (an imported judge) or RUNS (graded judge runs)
    sources: tuple[str, ...]
    correlation: RankCorrelation
    grades: int  # the grades it rests on (samples × orders × pairs)
    seeds: tuple[int, ...] = ()
    spread: SeedSpread | None = None  # Table 4: each seed's ρ, their mean and sd
    on: str = ""  # judge runs: the debate run whose pairs they judged

    @property
    def seed_values(self) -> list[tuple[int, float | None]]:
        return list(zip(self.seeds, self.spread.values, strict=True)) if self.spread else []


@dataclass
class GradedTable:
    rows: list[GradedRow] = field(default_factory=list)
    pairs: int = 0  # pairs people rated
    ratings: int = 0  # people's ratings of them
    people: int = 0
    min_pairs: int = MIN_ITEMS


def graded_table(scope: Scope) -> GradedTable:
    people, judges, ratings = _imported(scope)
    reference = people_average(people)
    table = GradedTable(pairs=len(reference), ratings=sum(ratings.values()), people=len(people))
    for person, correlation in sorted(each_person(people).items()):
        table.rows.append(GradedRow(person, PERSON, (), correlation, ratings[person]))
    for judge, rows in sorted(judges.items()):
        table.rows.append(GradedRow(judge, MODEL, (), spearman(mean_grades(rows), reference), len(rows)))
    table.rows += _judge_runs(scope, reference)
    return table


def _imported(
    scope: Scope,
) -> tuple[dict[str, dict[Hashable, float]], dict[str, list[tuple[Hashable, float]]], dict[str, int]]:
    """People's mean grade per pair (each person's own mean), every imported judge's grades, and how
    many ratings each person gave."""
    rows = Judgment.objects.filter(grade__isnull=False, prompt_variant=ORIGINAL, judge_model__isnull=False)
    if scope.benchmark:
        rows = rows.filter(response__prompt__benchmark__slug=scope.benchmark)
    if scope.criterion:
        rows = rows.filter(criterion__slug=scope.criterion)
    fields = (
        "judge_model__slug",
        "judge_model__is_human",
        "criterion__slug",
        "response_id",
        "response__model__slug",
        "response_2_id",
        "response_2__model__slug",
        "grade",
    )
    people: dict[str, list[tuple[Hashable, float]]] = defaultdict(list)
    judges: dict[str, list[tuple[Hashable, float]]] = defaultdict(list)
    for judge, is_human, criterion, first, first_model, second, second_model, grade in (
        rows.order_by().values_list(*fields).iterator(2000)
    ):
        (people if is_human else judges)[judge].append(
            oriented(criterion, first, first_model, second, second_model, grade)
        )
    ratings = {person: len(grades) for person, grades in people.items()}
    return {person: mean_grades(grades) for person, grades in people.items()}, judges, ratings


def oriented(
    criterion: str, first: int, first_model: str, second: int, second_model: str, grade: float
) -> tuple[Hashable, float]:
    """(the pair, the grade from the side of the model whose slug sorts first) for a grade given with
    `first` shown first; two responses of one model fall back to the lower id."""
    first_side = (first_model, first) < (second_model, second)
    return pair_key(criterion, first, second), grade if first_side else -grade


def _judge_runs(scope: Scope, reference: Mapping[Hashable, float]) -> list[GradedRow]:
    graded = JudgeRun.objects.filter(scale=GRADED, criteria_variant=ORIGINAL).select_related("reference")
    if scope.benchmark:
        graded = graded.filter(reference__benchmark__slug=scope.benchmark)
    if scope.criterion:
        graded = graded.filter(reference__criterion__slug=scope.criterion)
    runs = list(graded.order_by("id"))
    if not runs:
        return []
    debates = Debate.objects.filter(run_id__in={run.reference_id for run in runs})
    shown = {  # debate → (criterion, the agents' first response and its model, then the second)
        pk: (criterion, *((b, b_model, a, a_model) if swapped else (a, a_model, b, b_model)))
        for pk, criterion, a, a_model, b, b_model, swapped in debates.values_list(
            "pk",
            "run__criterion__slug",
            "response_a_id",
            "response_a__model__slug",
            "response_b_id",
            "response_b__model__slug",
            "swapped",
        )
    }
    answers: dict[int, list[tuple[Hashable, float]]] = defaultdict(list)
    verdicts = JudgeVerdict.objects.filter(judge_run__in=runs, grade__isnull=False)
    rows: Iterable[tuple[int, int, bool, int | None]] = verdicts.values_list(
        "judge_run_id", "debate_id", "reversed_order", "grade"
    ).iterator(5000)
    for run_id, debate_id, reversed_order, grade in rows:
        debate = shown.get(debate_id)
        if debate is not None and grade is not None:
            criterion, first, first_model, second, second_model = debate
            if reversed_order:
                first, first_model, second, second_model = second, second_model, first, first_model
            answers[run_id].append(oriented(criterion, first, first_model, second, second_model, grade))
    # One configuration: the same judge, settings and pairs; only the seed differs.
    configurations: dict[tuple, list[JudgeRun]] = defaultdict(list)
    for run in runs:
        sources = tuple(sorted(run.privileged_sources))
        key = (run.judge, sources, run.samples, run.check_position, run.temperature, run.reference_id)
        configurations[key].append(run)
    out = []
    for (judge, sources, *_), group in configurations.items():
        label, _names = with_privileged(judge, list(sources))
        pooled = [answer for run in group for answer in answers[run.pk]]
        per_seed = [spearman(mean_grades(answers[run.pk]), reference).rho for run in group]
        out.append(
            GradedRow(
                label,
                RUNS,
                sources,
                spearman(mean_grades(pooled), reference),
                len(pooled),
                tuple(run.seed for run in group),
                SeedSpread.of(per_seed),
                on=group[0].reference.name,
            )
        )
    return out


def csv_rows(table: GradedTable) -> list[dict[str, object]]:
    """The table as CSV rows (empty where a figure is undefined), every figure in full precision: a
    p-value of 1.3e-7 rounded to six places read 0.0."""

    def cell(value: float | None) -> object:
        return "" if value is None else value

    out: list[dict[str, object]] = []
    for row in table.rows:
        c, spread = row.correlation, row.spread
        out.append(
            {
                "judge": row.judge,
                "kind": row.kind,
                "privileged": " + ".join(row.sources),
                "on": row.on,
                "n_pairs": c.n,
                "rho": cell(c.rho),
                "low": cell(c.low),
                "high": cell(c.high),
                "p_value": cell(c.p_value),
                "grades": row.grades,
                "seeds": " ".join(map(str, row.seeds)),
                "seed_rhos": " ".join("NA" if rho is None else f"{rho:.6f}" for _, rho in row.seed_values),
                "seed_mean": cell(spread.mean if spread else None),
                "seed_sd": cell(spread.sd if spread else None),
            }
        )
    return out


def rho_chart(table: GradedTable) -> IntervalChart:
    """Figure 1's comparison: every row's ρ with its 95 % interval, people (each against the others)
    drawn as squares beside the judges."""
    return interval_chart(
        [
            {
                "name": row.judge,
                "mean": row.correlation.rho,
                "low": row.correlation.low,
                "high": row.correlation.high,
                "baseline": row.kind == PERSON,
            }
            for row in table.rows
        ]
    )
