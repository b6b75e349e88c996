"""How a win-rate page's corrected columns are estimated: the estimator asked for and whether its
intervals stay valid however often one looks (the page's and export_winrates' choice)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalhub.core.statistics.estimators import AUTO, ESTIMATORS
from evalhub.core.statistics.estimators import LABEL as ESTIMATOR_LABEL


@dataclass(frozen=True)
class Correction:
    """How the corrected columns are estimated: the estimator asked for (AUTO: by evalhub's rule) and
    whether the intervals stay valid however often one looks (confidence sequences)."""

    estimator: str = AUTO
    anytime: bool = False

    @property
    def key(self) -> str:
        return f"{self.estimator}|{int(self.anytime)}"


ESTIMATOR_CHOICES = [(AUTO, "chosen by evalhub"), *((name, ESTIMATOR_LABEL[name]) for name in ESTIMATORS)]


def correction_of(query: Any) -> tuple[Correction, str]:
    """The correction a page's query asks for, or the default and why the asked one cannot be used."""
    estimator = query.get("estimator", "") or AUTO
    if estimator not in dict(ESTIMATOR_CHOICES):
        return Correction(anytime=query.get("interval") == "anytime"), "unknown estimator: chosen by evalhub"
    return Correction(estimator, query.get("interval") == "anytime"), ""
