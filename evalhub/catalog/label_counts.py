"""Imported pairwise labels in the boards' counts (evalhub.tallies): each person's label and each
judge's verdict on a pair, under the original criteria prompt, is one battle, as a single judge's
verdict is. evalhub.reads.battles reads the same rows, one battle each."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator

from django.db import connection
from django.db.models import Case, Count, F, Q, QuerySet, Sum, When
from django.db.models.functions import Greatest, Least

from evalhub.catalog.models import IMPORTED_VARIANT, Judgment
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.system.bounded_queries import in_slices
from evalhub.tallies.actions import do_add_battles
from evalhub.tallies.models import IMPORTED_JUDGES, IMPORTED_PEOPLE

FIELDS = (
    "judge_model__slug",
    "judge_model__is_human",
    "verdict",
    "criterion__slug",
    "response__prompt__category",
    "response__prompt__benchmark__slug",
    "response__model__slug",
    "response_2__model__slug",
    "response_id",
    "response_2_id",
)
OUTCOME = {1: "a", 2: "b", 0: "tie"}  # response 1 was shown first and is model A here


def pairwise_labels() -> QuerySet[Judgment]:
    """The imported judgments that are battles."""
    return Judgment.objects.filter(
        response_2__isnull=False, judge_model__isnull=False, prompt_variant=ORIGINAL, verdict__isnull=False
    )


def battle_key(first: str, second: str, human: bool, criterion: str, category: str, benchmark: str) -> tuple:
    """The counts' key of a label by a person (human) or a judge on a pair of these two models."""
    source = IMPORTED_PEOPLE if human else IMPORTED_JUDGES
    return (first, second, source, criterion, category or "—", benchmark, IMPORTED_VARIANT)


def imported_battles(labels: QuerySet[Judgment]) -> Iterator[tuple[tuple, str, str, int, int]]:
    """(battle key, outcome, judge, response 1, response 2) per label; a model against itself is none."""
    for judge, human, verdict, criterion, category, benchmark, first, second, r1, r2 in (
        labels.order_by("pk").values_list(*FIELDS).iterator(chunk_size=5000)
    ):
        if first == second:
            continue
        yield battle_key(first, second, human, criterion, category, benchmark), OUTCOME[verdict], judge, r1, r2


def imported_counts(labels: QuerySet[Judgment] | None = None) -> dict[tuple, list[int]]:
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for key, outcome, *_ in imported_battles(pairwise_labels() if labels is None else labels):
        counts[key][("a", "b", "tie").index(outcome)] += 1
    return counts


def do_count_new_labels(labels: Iterable[tuple[tuple, int | None, int]]) -> None:
    """Add the battles of labels just inserted, from what the import holds — (battle key, verdict, how
    many labels) each, without reading them back: an unreadable verdict (None) and a model against
    itself count no battle, as in `imported_battles`."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for key, verdict, many in labels:
        if verdict is not None and key[0] != key[1]:
            counts[key][("a", "b", "tie").index(OUTCOME[verdict])] += many
    if counts:
        do_add_battles(counts)


PKS_PER_QUERY = 100_000


def do_count_imported(pks: Collection[int], sign: int) -> None:
    """Add (sign 1) or take away (sign -1) these labels' battles, in the caller's transaction."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    # Ids as one parameter each query (InIntegers): the labels a server-side merge inserted may be a
    # million, and an IN list of 5,000 placeholders a query cost a 200,000-label import 4 s more wall.
    for ids in in_slices(sorted(set(pks)), PKS_PER_QUERY):
        for key, values in imported_counts(pairwise_labels().filter(pk__in_integers=ids)).items():
            counts[key] = [total + n for total, n in zip(counts[key], values, strict=True)]
    if counts:
        do_add_battles({key: [sign * n for n in values] for key, values in counts.items()})


def shared_label_items(
    sources: Collection[str],
    criterion: str = "",
    scenario: str = "",
    benchmark: str = "",
    responses: str = "",
    judge: str = "",
) -> Counter:
    """The items of more than one imported label under a board's filters: a pair of responses under one
    criterion, labelled by several people (or several judges; each source apart), as their patterns
    (((model, model, outcome), labels), …) → how many items fell that way. The board resamples these
    whole (evalhub.core.statistics.item_patterns). One query, which counts each item's labels and then
    the items of each pattern in the database: a few hundred rows come back, however many labels."""
    kinds = [source == IMPORTED_PEOPLE for source in sources if source in (IMPORTED_PEOPLE, IMPORTED_JUDGES)]
    if not kinds or responses not in ("", IMPORTED_VARIANT):
        return Counter()
    labels = pairwise_labels().filter(judge_model__is_human__in=kinds)
    labels = labels.exclude(response__model_id=F("response_2__model_id"))
    if criterion:
        labels = labels.filter(criterion__slug=criterion)
    if scenario:
        labels = labels.filter(response__prompt__category="" if scenario == "—" else scenario)
    if benchmark:
        labels = labels.filter(response__prompt__benchmark__slug=benchmark)
    if judge:  # one judge's labels: an item it labelled twice (both orders) is still one item
        labels = labels.filter(judge_model__slug=judge)
    first, second = F("response__model__slug"), F("response_2__model__slug")
    # Each label's outcome for the pair's model whose slug sorts first in the database (every label
    # of an item turned the same way; the board turns the cells again by its own order).
    low_wins = Q(verdict=1, response__model__slug__lt=second) | Q(verdict=2, response_2__model__slug__lt=first)
    high_wins = Q(verdict=1, response__model__slug__gt=second) | Q(verdict=2, response_2__model__slug__gt=first)
    items = (
        labels.annotate(
            low=Least("response_id", "response_2_id"),
            high=Greatest("response_id", "response_2_id"),
            model_low=Least(first, second),
            model_high=Greatest(first, second),
        )
        .values("criterion_id", "low", "high", "judge_model__is_human", "model_low", "model_high")
        .annotate(
            labels=Count("id"),
            low_wins=Sum(Case(When(low_wins, then=1), default=0)),
            high_wins=Sum(Case(When(high_wins, then=1), default=0)),
            ties=Sum(Case(When(verdict=0, then=1), default=0)),
        )
        .filter(labels__gt=1)
        .order_by()
    )
    sql, params = items.query.sql_with_params()
    patterns: Counter = Counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT model_low, model_high, low_wins, high_wins, ties, COUNT(*) FROM ("  # noqa: S608 (the ORM's SQL)
            f"{sql}) AS items GROUP BY model_low, model_high, low_wins, high_wins, ties",
            params,
        )
        for model_low, model_high, low_wins_n, high_wins_n, ties_n, count in cursor.fetchall():
            outcomes = (("a", low_wins_n), ("b", high_wins_n), ("tie", ties_n))
            pattern = tuple(((model_low, model_high, o), int(n)) for o, n in outcomes if n)
            patterns[pattern] += int(count)
    return patterns
