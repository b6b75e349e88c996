"""The one door through which whatever builds or tunes a judge reads people's labels: pairs on the
benchmark's *train* prompts only (catalog.LabelSplit). Held-out prompts, and prompts added since the
split and not yet placed, never leave this module; `evalhub.alignment.improvers` may not read labels any
other way (an import contract in pyproject.toml)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import cast

from django.db.models import Q

from evalhub.alignment.labels import pair_verdicts
from evalhub.catalog.models import LabelSplit, Response
from evalhub.catalog.queries import benchmark_split, read_split
from evalhub.core.alignment.fewshot import TrainingPair
from evalhub.core.judge_lab.measures import ABSENT, NO_VERDICT
from evalhub.reads.judged_pairs import BLIND, TUNING, PairKey, admitted
from evalhub.system.bounded_queries import where_in


class NoSplit(Exception):
    pass


def training_pairs(split: LabelSplit, criterion: str, judge: str, *, people: str = BLIND) -> list[TrainingPair]:
    """The split's train pairs under `criterion` that people settled (their majority, blind verdicts by
    default), each with `judge`'s verdict (NO_VERDICT where it gave none)."""
    read = read_split(split)
    found = pair_verdicts(read.benchmark, criterion, [judge], people=people)
    mine = found.judges[judge]
    out = []
    for row, item in enumerate(found.items):
        if not admitted(read, found.prompt(row), TUNING) or found.people[row] == ABSENT:
            continue
        pair = found.pairs[row]
        verdict = NO_VERDICT if mine[row] == ABSENT else int(mine[row])
        out.append(TrainingPair(item, pair.cluster, pair.category, int(found.people[row]), verdict))
    return out


def training_split(benchmark: str) -> LabelSplit:
    """The benchmark's split, whose train pairs a judge is improved on. Raises NoSplit."""
    split = benchmark_split(benchmark)
    if split is None:
        raise NoSplit(f"{benchmark} has no held-out split: split it once on its page first.")
    return split


def pair_texts(items: Sequence[Hashable]) -> dict[Hashable, tuple[str, str, str]]:
    """The question and the two responses (in the pair's order) of train pairs, for worked examples."""
    keys = [cast(PairKey, item) for item in items]  # the judge lab's pairs: (criterion, low id, high id)
    ids = {response for _, low, high in keys for response in (low, high)}
    texts = {
        pk: (prompt, text)
        for pk, prompt, text in where_in(Response.objects.values_list("pk", "prompt__text", "text"), "pk", ids)
    }
    return {key: (texts[key[1]][0], texts[key[1]][1], texts[key[2]][1]) for key in keys}


def train_reasons(split: LabelSplit, pairs: Sequence[TrainingPair]) -> dict[Hashable, list[str]]:
    """People's written reasons on these train pairs: the rationale of an imported or rated label, and an
    adjudicator's notes, in the order stored. Each pair's prompt is checked against the split here again,
    so a held-out pair handed in by mistake gives nothing."""
    from evalhub.adjudication.models import Adjudication
    from evalhub.catalog.models import Judgment
    from evalhub.reads.judged_pairs import pair_key

    read = read_split(split)
    wanted = {pair.item for pair in pairs if admitted(read, cast(int, pair.prompt), TUNING)}
    ids = sorted({response for _, low, high in cast(set[PairKey], wanted) for response in (low, high)})
    found: dict[Hashable, list[str]] = {}
    people_labels = (
        Judgment.objects.filter(response_2__isnull=False)
        .exclude(rationale="")
        .filter(Q(judge_user__isnull=False) | Q(judge_model__is_human=True))
    )
    rows = where_in(
        people_labels.values_list("criterion__slug", "response_id", "response_2_id", "rationale", "pk"),
        "response_id",
        ids,
    )
    notes = where_in(
        Adjudication.objects.exclude(notes="").values_list(
            "item__debate__run__criterion__slug",
            "item__debate__response_a_id",
            "item__debate__response_b_id",
            "notes",
            "pk",
        ),
        "item__debate__response_a_id",
        ids,
    )
    for criterion, first, second, text, _ in sorted([*rows, *notes], key=lambda row: (row[4], row[3])):
        key = pair_key(criterion, first, second)
        if key in wanted:
            found.setdefault(key, []).append(text.strip())
    return found
