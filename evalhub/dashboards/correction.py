"""How a win-rate page's corrected columns are estimated (the estimator asked for, and whether its
intervals stay valid however often one looks: the page's and export_winrates' choice), and how many
of people's labels they need for a target width."""

from __future__ import annotations

from typing import Any

from evalhub.core.statistics.estimators import Correction
from evalhub.core.statistics.ppi import labels_needed
from evalhub.core.statistics.sequential import labels_for as sequence_labels_for


def correction_of(query: Any) -> tuple[Correction, str]:
    """The correction a page's query asks for, or the default and why the asked one cannot be used."""
    return Correction.asked(query.get("estimator", ""), anytime=query.get("interval") == "anytime")


def target_of(text: str) -> tuple[float | None, str]:
    """The half-width asked for (percentage points), or why it cannot be used."""
    if not text.strip():
        return None, ""
    try:
        target = float(text)
    except ValueError:
        return None, f"the target {text[:20]!r} is not a number of points"
    if not 0 < target <= 50:
        return None, "the target must be between 0 and 50 points"
    return target, ""


def with_labels_needed(rows: list[dict[str, Any]], target: float) -> list[dict[str, Any]]:
    """Each row with `labels_needed`: people's labels its corrected interval (its confidence sequence,
    where the page shows those) needs to be ± `target` points (None: the judge's own uncertainty is
    wider, or there is no correction yet), and `labels_beyond_pairs` where that is more than the pairs
    the judge judged: people can label no more."""
    out = []
    for row in rows:
        corrected = row["corrected"]
        needed = None
        if corrected["label_variance"] is not None and corrected["anytime"]:
            # The page shows confidence sequences: as many labels as make the sequence this narrow.
            share = [corrected["label_variance"] / 1e4, corrected["judge_term"] / 1e4, target / 100]
            needed = sequence_labels_for(*share)
        elif corrected["label_variance"] is not None:
            needed = labels_needed(corrected["label_variance"], corrected["judge_term"], target)
        beyond = needed is not None and needed > row["n_total"]
        if beyond:
            needed = None
        more = max(0, needed - corrected["n_human"]) if needed is not None else None
        out.append({**row, "labels_needed": needed, "labels_more": more, "labels_beyond_pairs": beyond})
    return out
