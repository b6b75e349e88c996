"""Pointwise judges against people on the scores evalhub stores (import_scores): the judge lab's page
and the pointwise_report command read the same scores through here."""

from __future__ import annotations

from typing import Any

from django.db.models import Avg, Exists, OuterRef

from evalhub.catalog.models import Benchmark, Judgment
from evalhub.core.charts import IntervalChart, interval_chart
from evalhub.core.statistics.pointwise import Score, ScoresError, meta_evaluation
from evalhub.reads.caching import cached
from evalhub.scoring.models import JudgeScore

SINGLE_RESPONSE_SCORES = {
    "response_2__isnull": True,
    "response__parent__isnull": True,
    "response__variant": "",
}
PERSON_PREFIX = "person:"  # a person who scored on the rating screen; imported raters are models' slugs


def _dhp_scores():
    """DHP and YESciEval judge runs' valid scores of original texts (their perturbed copies are the
    method's own business): each a pointwise judge of the texts people may have scored too."""
    return JudgeScore.objects.filter(
        valid=True, score__isnull=False, response__parent__isnull=True, response__variant=""
    )


def dhp_rater(judge: str, run_id: int) -> str:
    return f"{judge} (DHP run {run_id})"


def scored_benchmarks(stamp: str | None = None) -> list[str]:
    """Benchmarks with stored scores of single responses, imported, rated or a DHP run's: an EXISTS per
    benchmark (its first score ends the search), cached until the data change. It read every score's
    benchmark on every view of the page, a full scan of the judgments (issue 79)."""

    def find() -> list[str]:
        scores = Judgment.objects.filter(response__prompt__benchmark=OuterRef("pk"), **SINGLE_RESPONSE_SCORES)
        dhp = _dhp_scores().filter(response__prompt__benchmark=OuterRef("pk"))
        return sorted(Benchmark.objects.filter(Exists(scores) | Exists(dhp)).values_list("slug", flat=True))

    return cached("pointwise:benchmarks", find, stamp=stamp)


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
    runs = (
        _dhp_scores()
        .filter(response__prompt__benchmark__slug=slug)
        .values("run_id", "judge", "response__prompt__external_id", "response__model__slug", "metric")
        .annotate(mean=Avg("score"))  # its repeats averaged, as DHP reads them
        .order_by()
    )
    scores += [
        Score(
            row["response__prompt__external_id"],
            row["response__model__slug"],
            dhp_rater(row["judge"], row["run_id"]),
            False,
            float(row["mean"]),
            row["metric"],
        )
        for row in runs
    ]
    if not scores:
        raise ScoresError([f"{slug} has no stored scores of single responses (import some with import_scores)."])
    return scores


def pointwise_report(slug: str, stamp: str | None = None) -> dict[str, Any]:
    """The meta-evaluation of the benchmark's stored scores (1000 bootstrap resamples), cached until
    the data change."""
    return cached(f"pointwise:{slug}", lambda: meta_evaluation(stored_scores(slug)), stamp=stamp)


def item_chart(entry: dict[str, Any]) -> IntervalChart:
    """Each judge's item-level Spearman ρ with its 95 % interval, for one criterion."""
    return interval_chart(
        [
            {
                "name": judge,
                "mean": r["item_spearman"]["value"],
                "low": (r["item_spearman"]["ci"] or [None, None])[0],
                "high": (r["item_spearman"]["ci"] or [None, None])[1],
            }
            for judge, r in entry["judges"].items()
        ]
    )


def export_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per criterion and judge: every figure of the page, intervals as low and high."""
    rows = []
    for criterion, entry in sorted(report["criteria"].items()):
        for judge, r in entry["judges"].items():
            row: dict[str, Any] = {"criterion": criterion, "judge": judge, "people": entry["people"]}
            for name in ("item_spearman", "item_kendall", "system_spearman", "system_kendall"):
                ci = r[name]["ci"] or [None, None]
                row.update({name: r[name]["value"], f"{name}_low": ci[0], f"{name}_high": ci[1]})
                row[f"{name}_n"] = r[name]["n"]
            row["mean_item_spearman_with_each_person"] = r["mean_item_spearman_with_each_person"]
            rows.append(row)
    return rows
