"""Win-rate preferences from evalhub's own single-judge runs on debates: the judge `run:SPEC` of the
win-rate page (evalhub.dashboards.baseline_win_rates), read as an imported file's judge is."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import Length

from evalhub.catalog.models import Verdict
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.debates.models import JudgeVerdict, single_judge_name, single_judge_of
from evalhub.debates.queries import share_of_first

SHARE_OF_FIRST = {Verdict.FIRST: 1.0, Verdict.SECOND: 0.0, Verdict.NEITHER: 0.5}
RUN_JUDGE = "run:"  # a judge named so is evalhub's single-judge runs of that spec, not an imported file's
IMPORTED, JUDGE_RUNS = "imported", "judge runs"


def is_run_judge(judge: str) -> bool:
    return judge.startswith(RUN_JUDGE)  # an imported judge is a model's slug, which holds no colon


def _plain_run_verdicts():
    """A plain judge's verdicts in single-judge runs: the original criteria, no privileged information and
    no improved version (each of those is a judge of its own in the judge lab), a verdict read."""
    return JudgeVerdict.objects.filter(
        verdict__isnull=False,
        judge_run__criteria_variant=ORIGINAL,
        judge_run__privileged_sources=[],
        judge_run__label="",
    )


def run_judge_counts() -> Iterator[tuple[tuple[str, str, str], str, int, bool]]:
    """((benchmark, run:SPEC, criterion), a model, the debates it is in, whether as their first response),
    in two grouped queries whatever the number of runs."""
    group = ("debate__prompt__benchmark__slug", "judge_run__judge", "judge_run__rubric", "debate__run__criterion__slug")
    for side in ("debate__response_a__model__slug", "debate__response_b__model__slug"):
        rows = _plain_run_verdicts().values_list(*group, side).annotate(n=Count("debate", distinct=True)).order_by()
        for benchmark, spec, rubric, criterion, model, n in rows:
            judge = RUN_JUDGE + single_judge_name(spec, rubric)
            yield (benchmark, judge, criterion), model, n, side == "debate__response_a__model__slug"


def runs_against_baseline(
    judge: str | None, benchmark: str, criterion: str, baseline: str
) -> dict[str, dict[tuple[str, int], list[tuple[float, int, int, Any]]]]:
    """run:SPEC → (model, prompt) → each answer's (preference for the model, its length, the baseline's,
    the prompt's difficulty), from the judge runs of `judge` (every run judge when None, in the same one
    query) on the benchmark's debates under the criterion that pit a model against `baseline`: each
    answer (an order, a sample) is one preference, the judge's token probabilities where the run asked
    for them, else its verdict."""
    verdicts = _plain_run_verdicts()
    if judge is not None:
        spec, rubric = single_judge_of(judge.removeprefix(RUN_JUDGE))
        verdicts = verdicts.filter(judge_run__judge=spec, judge_run__rubric=rubric)
    rows = (
        verdicts.filter(
            debate__prompt__benchmark__slug=benchmark,
            debate__run__criterion__slug=criterion,
        )
        .filter(Q(debate__response_a__model__slug=baseline) | Q(debate__response_b__model__slug=baseline))
        .annotate(length_a=Length("debate__response_a__text"), length_b=Length("debate__response_b__text"))
        .values_list(
            "judge_run__judge",
            "judge_run__rubric",
            "debate__response_a__model__slug",
            "debate__response_b__model__slug",
            "debate__prompt_id",
            "debate__swapped",
            "reversed_order",
            "verdict",
            "judge_run__probabilities",
            "probabilities",
            "length_a",
            "length_b",
            "debate__prompt__metadata__instruction_difficulty",
        )
        .order_by("pk")
    )
    by_spec: dict[str, dict[tuple[str, int], list[tuple[float, int, int, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for (
        spec,
        rubric,
        a,
        b,
        prompt,
        swapped,
        reversed_order,
        verdict,
        asked,
        given,
        length_a,
        length_b,
        difficulty,
    ) in rows.iterator(chunk_size=5000):
        found = by_spec[single_judge_name(spec, rubric)]  # a YESciEval rubric's judge apart from its spec's
        if a == b:
            continue
        read = asked and isinstance(given, dict)
        share_first = share_of_first(given) if read else SHARE_OF_FIRST[verdict]
        # The response shown first: the debate's response_b where the debate or this answer reversed it.
        share_a = 1.0 - share_first if swapped != reversed_order else share_first
        if a == baseline:
            found[(b, prompt)].append((1.0 - share_a, length_b, length_a, difficulty))
        else:
            found[(a, prompt)].append((share_a, length_a, length_b, difficulty))
    return {RUN_JUDGE + spec: found for spec, found in by_spec.items()}
