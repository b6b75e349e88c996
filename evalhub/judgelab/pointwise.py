"""Pointwise judges against people on the scores evalhub stores (import_scores): the judge lab's page
and the pointwise_report command read the same scores through here."""

from __future__ import annotations

from typing import Any

from evalhub.catalog.models import Benchmark, Judgment
from evalhub.core.statistics.pointwise import Score, ScoresError, meta_evaluation
from evalhub.dashboards.caching import cached

SINGLE_RESPONSE_SCORES = {
    "response_2__isnull": True,
    "response__parent__isnull": True,
    "response__variant": "",
}
PERSON_PREFIX = "person:"  # a person who scored on the rating screen; imported raters are models' slugs


def scored_benchmarks() -> list[str]:
    """Benchmarks with stored scores of single responses."""
    return sorted(
        set(
            Judgment.objects.filter(**SINGLE_RESPONSE_SCORES).values_list(
                "response__prompt__benchmark__slug", flat=True
            )
        )
    )


def stored_scores(slug: str) -> list[Score]:
    """Every stored score of a single original response on the benchmark, a person's or a judge's."""
    if not Benchmark.objects.filter(slug=slug).exists():
        raise ScoresError([f"no benchmark {slug!r}."])
    rows = Judgment.objects.filter(response__prompt__benchmark__slug=slug, **SINGLE_RESPONSE_SCORES).values_list(
        "response__prompt__external_id",
        "response__model__slug",
        "judge_model__slug",
        "judge_model__is_human",
        "judge_user__username",
        "score",
        "criterion__slug",
    )
    scores = [
        Score(
            prompt, system, rater or f"{PERSON_PREFIX}{username}", bool(human) or rater is None, float(score), criterion
        )
        for prompt, system, rater, human, username, score, criterion in rows
        if score is not None  # a single response's judgment always has one (a constraint); its type does not say
    ]
    if not scores:
        raise ScoresError([f"{slug} has no stored scores of single responses (import some with import_scores)."])
    return scores


def pointwise_report(slug: str, stamp: str | None = None) -> dict[str, Any]:
    """The meta-evaluation of the benchmark's stored scores (1000 bootstrap resamples), cached until
    the data change."""
    return cached(f"pointwise:{slug}", lambda: meta_evaluation(stored_scores(slug)), stamp=stamp)
