"""Where imported labels show: the pages an import's summary links to, filtered to its benchmark.

By URL name, so the catalog app (below the boards) needs none of their code."""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse


def pages_showing(benchmark_slug: str) -> tuple[tuple[str, str], ...]:
    """The pages that show a judgments import: (label, path)."""
    benchmark = urlencode({"benchmark": benchmark_slug})
    return (
        ("the pairwise board", f"{reverse('leaderboards')}?{benchmark}"),
        ("win rates against a baseline", f"{reverse('baseline_win_rates')}?{benchmark}"),
        ("the judge lab", f"{reverse('judge_list')}?{benchmark}"),
    )


def pages_showing_scores(benchmark_slug: str) -> tuple[tuple[str, str], ...]:
    """The pages that show a scores import: (label, path)."""
    benchmark = urlencode({"benchmark": benchmark_slug})
    return (
        ("pointwise judges against people", f"{reverse('judge_pointwise')}?{benchmark}"),
        ("the rating screen", f"{reverse('rate_choose')}?{benchmark}"),
    )
