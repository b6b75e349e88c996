"""The judge report for a scope, computed once per fingerprint of the data it reads."""

from __future__ import annotations

import hashlib

from evalhub.core.judge_lab.report import Report, build_report
from evalhub.dashboards.caching import cached
from evalhub.judgelab.observations import Scope, collect


def judge_lab_report(scope: Scope = Scope(), stamp: str | None = None) -> Report:  # noqa: B008 (frozen)
    # ":3": the privileged lift gained its per-category and bias tables; a report cached before lacks them.
    return cached(f"judge_lab:3:{scope.key}", lambda: compute(scope), stamp=stamp)


def compute(scope: Scope) -> Report:
    found = collect(scope)
    return build_report(list(found.judges.values()), found.labels, found.pairs, found.settled)


def judge_key(judge_id: str) -> str:
    """A judge's id in URLs: ids are provider specs, which may hold ':' and '/'."""
    return hashlib.sha1(judge_id.encode(), usedforsecurity=False).hexdigest()[:12]


def model_as_judge(slug: str) -> list:
    """The model page's section: this model's reports as a judge (single judge, debate agent)."""
    return [judge for judge in judge_lab_report().judges if judge.judge.model == slug]
