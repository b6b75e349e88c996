"""The judge report for a scope: computed once per fingerprint of the data it reads, kept, and shown
at once even when labels have landed since (saying so) while a worker computes the new one.

At a million labels a report takes seconds to compute (reading every label, a bootstrap per judge),
so no page request computes one once any report of its scope exists: the page gets the report for
the data as it is now from the cache or the last snapshot, or else the last snapshot marked as
earlier, and one refresh is asked of a worker (at most one in flight per scope). With that many
labels a scope's first report is a worker's too: the page says it is being computed. Exports hold the
report of the data as it is (a file a researcher keeps must): with few labels computed in the request,
with many asked of a worker while the export answers 503 with Retry-After (`ReportNotReady`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from datetime import datetime

from django.core.cache import cache
from django.utils import timezone
from threadpoolctl import threadpool_limits

from evalhub.catalog.models import DataImport, Judgment
from evalhub.celery import task_named
from evalhub.core.judge_lab.measures import Interval
from evalhub.core.judge_lab.report import BY_RULE, build_corrected_boards, build_report
from evalhub.core.judge_lab.report_types import PeopleReport, Report
from evalhub.core.judge_lab.snapshots import (
    BOARDS_SCHEMA_VERSION,
    SCHEMA_VERSION,
    Boards,
    decode_boards,
    decode_report,
)
from evalhub.core.statistics.corrected_ratings import CorrectedBoard
from evalhub.core.statistics.estimators import Correction
from evalhub.judgelab.actions import do_store_boards_snapshot, do_store_report_snapshot
from evalhub.judgelab.models import ReportSnapshot
from evalhub.reads.caching import TIMEOUT_S, ask_worker_once, fingerprint
from evalhub.reads.judged_pairs import Scope, collect
from evalhub.system.row_counts import row_count

REFRESH_TASK = "judgelab.refresh_report"
BOARDS_TASK = "judgelab.refresh_corrected_boards"


# With this many judgments (PostgreSQL's estimate, evalhub.system.row_counts) a scope's first report is
# computed by a worker, not in a page's request: about 5 CPU-s at a million, 200 s at ten million.
FIRST_REPORT_IN_WORKER_AT = 200_000


@dataclass(frozen=True)
class Freshness:
    computed_at: datetime | None  # None: no report of the scope kept yet (a worker computes the first)
    seconds: float  # what computing it took
    current: bool  # computed from the data as it is now
    refreshing: bool = False  # not current, and a worker has been asked for the current one
    # The estimator asked for, whose corrected boards are not kept for this data yet: those shown are by
    # evalhub's rule meanwhile; `estimator_asked`: a worker was asked for them (False: the broker did not
    # answer).
    estimator_pending: str = ""
    estimator_asked: bool = False

    def imports_since(self) -> ImportsSince | None:
        """The imports that landed after this report was computed, for a page to say what it lacks (None:
        it is current, none is kept, or none landed: debates and people's verdicts move it too)."""
        if self.current or self.computed_at is None:
            return None
        landed = DataImport.objects.filter(created_at__gt=self.computed_at)
        rows = list(landed.order_by("-created_at").values_list("filename", "benchmark__slug", "created_at")[:50])
        if not rows:
            return None
        return ImportsSince(
            count=len(rows) if len(rows) < 50 else landed.count(),
            benchmarks=tuple(sorted({slug for _, slug, _ in rows})),
            latest=rows[0][0],
            latest_at=rows[0][2],
        )


@dataclass(frozen=True)
class ImportsSince:
    count: int
    benchmarks: tuple[str, ...]  # those of the latest 50 imports
    latest: str  # its file name
    latest_at: datetime


def _scope_key(scope: Scope) -> str:
    # The report's schema version (computed from its types, evalhub.core.judge_lab.snapshots): a report
    # kept by an evalhub whose report had other fields is not this scope's kept report.
    return f"{SCHEMA_VERSION}|{scope.key}"


def _cache_key(scope: Scope, stamp: str) -> str:
    return f"judge_lab:{_scope_key(scope)}:{stamp}"


def judge_lab_report(scope: Scope = Scope(), stamp: str | None = None) -> Report:  # noqa: B008 (frozen)
    return report_with_freshness(scope, stamp)[0]


def report_with_freshness(
    scope: Scope = Scope(),  # noqa: B008 (frozen)
    stamp: str | None = None,
    *,
    wait: bool = False,
    correction: Correction = BY_RULE,
) -> tuple[Report, Freshness]:
    """The scope's report, its corrected boards by `correction`, and how fresh it is. `wait`: compute
    what the data changed since here. The report is the scope's whatever the correction: boards by
    another estimator are computed apart (by a worker, unless `wait`) and put in it where they are of
    the same data; until then it shows its own, by evalhub's rule, and says so."""
    stamp = stamp or fingerprint()
    report, freshness = _report(scope, stamp, wait)
    if correction.by_rule or not report.judges:
        return report, freshness
    if not freshness.current:  # boards of other data than the report's would not be its judges': asked for now
        asked = _ask_for_boards(scope, correction)
        return report, dataclasses.replace(freshness, estimator_pending=correction.estimator, estimator_asked=asked)
    boards = _kept_boards(scope, correction, stamp)
    if boards is None and wait and row_count(Judgment).rows >= FIRST_REPORT_IN_WORKER_AT:
        asked = _ask_for_boards(scope, correction)
        if (boards := _kept_boards(scope, correction, stamp)) is None:  # an eager worker may have kept them
            raise ReportNotReady(asked, None)
    if boards is None and wait:
        boards = _compute_and_keep_boards(scope, correction, stamp)
    if boards is None:
        asked = _ask_for_boards(scope, correction)
        boards = _kept_boards(scope, correction, stamp)  # an eager (in-process) worker may have kept them
        if boards is None:
            return report, dataclasses.replace(freshness, estimator_pending=correction.estimator, estimator_asked=asked)
    return report.with_corrected(boards), freshness


def _report(scope: Scope, stamp: str, wait: bool) -> tuple[Report, Freshness]:
    found = cache.get(_cache_key(scope, stamp))
    if found is not None:
        return found
    kept, asked = _kept_fingerprint(scope), False
    if kept is not None and kept != stamp and not wait:
        asked = _ask_for_refresh(scope)
        kept = _kept_fingerprint(scope)  # an eager (in-process) refresh may have made it current
    if kept == stamp and (snapshot := _snapshot(scope)) is not None:
        cache.set(_cache_key(scope, stamp), snapshot, TIMEOUT_S)
        return snapshot
    if kept is not None and not wait and (snapshot := _snapshot(scope)) is not None:
        report, freshness = snapshot
        return report, Freshness(freshness.computed_at, freshness.seconds, current=False, refreshing=asked)
    if kept is None and not wait and row_count(Judgment).rows >= FIRST_REPORT_IN_WORKER_AT:
        asked = _ask_for_refresh(scope)
        if _kept_fingerprint(scope) is not None and (snapshot := _snapshot(scope)) is not None:  # eager worker
            return snapshot
        return NO_REPORT_YET, Freshness(None, 0.0, current=False, refreshing=asked)
    if wait and row_count(Judgment).rows >= FIRST_REPORT_IN_WORKER_AT:
        # An export at scale: the report of the data as it is, or a worker asked for it (178 s in the request
        # at ten million judgments on SQLite, benchmarks/page_scale.py).
        asked = _ask_for_refresh(scope)
        if _kept_fingerprint(scope) == stamp and (snapshot := _snapshot(scope)) is not None:  # eager worker
            return snapshot
        raise ReportNotReady(asked, _kept_computed_at(scope))
    return _compute_and_keep(scope, stamp)


class ReportNotReady(Exception):
    """An export's report (or its boards by another estimator) is not of the data as it is, and a worker
    computes it: `asked` whether one could be asked, `computed_at` when the kept one was (None: none)."""

    def __init__(self, asked: bool, computed_at: datetime | None) -> None:
        super().__init__("a worker is computing the judge lab's report for the data as it is")
        self.asked, self.computed_at = asked, computed_at


def _kept_computed_at(scope: Scope) -> datetime | None:
    return ReportSnapshot.objects.filter(scope=_scope_key(scope)).values_list("computed_at", flat=True).first()


# What a page shows while a worker computes a scope's first report: no judge, no people's figures.
NO_REPORT_YET = Report(judges=[], people=PeopleReport(0, 0, Interval(None, None, None), [], []))


def refresh_report(scope: Scope) -> None:
    """A worker's refresh: compute the scope's report unless the kept one is already current. On one
    BLAS thread, as a web process computes (evalhub.asgi): the library's pool of a thread per core made
    a refresh at a million judgments take 7.0 CPU-s for 4.9 s, against 4.6-5.1 CPU-s on one thread in
    about the same time, and a worker's other tasks share those cores."""
    try:
        stamp = fingerprint()
        if _kept_fingerprint(scope) != stamp:
            with threadpool_limits(limits=1, user_api="blas"):
                _compute_and_keep(scope, stamp)
    finally:
        cache.delete(f"judge_lab:refreshing:{_scope_key(scope)}")


def _compute_and_keep(scope: Scope, stamp: str) -> tuple[Report, Freshness]:
    # The fingerprint is taken before reading: labels landing meanwhile make the next request refresh.
    started, clock = timezone.now(), time.perf_counter()
    report = compute(scope)
    freshness = Freshness(started, time.perf_counter() - clock, current=True)
    do_store_report_snapshot(_scope_key(scope), stamp, report, started, freshness.seconds)
    cache.set(_cache_key(scope, stamp), (report, freshness), TIMEOUT_S)
    return report, freshness


def _kept_fingerprint(scope: Scope) -> str | None:
    """The fingerprint of the data the kept report was computed from (None: none kept), read alone:
    the report itself is large and is decoded only when it is shown."""
    return ReportSnapshot.objects.filter(scope=_scope_key(scope)).values_list("fingerprint", flat=True).first()


def _snapshot(scope: Scope) -> tuple[Report, Freshness] | None:
    row = ReportSnapshot.objects.filter(scope=_scope_key(scope)).first()
    if row is None:
        return None
    report = decode_report(bytes(row.payload))
    if report is None:
        return None  # kept under another schema (an older evalhub), or not a report: computed again
    return report, Freshness(row.computed_at, row.seconds, current=True)


def _ask_for_refresh(scope: Scope) -> bool:
    """Whether a worker computes the scope's report now: asked here, or by an earlier request."""
    return ask_worker_once(
        f"judge_lab:refreshing:{_scope_key(scope)}",
        # The whole scope, field by field: a field added to it travels without this line knowing.
        lambda: task_named(REFRESH_TASK).apply_async(kwargs={"scope": dataclasses.asdict(scope)}),
        "the judge lab's report",
    )


def compute(scope: Scope, correction: Correction = BY_RULE) -> Report:
    found = collect(scope)
    judges = list(found.judges.values())
    kept = _kept_boards_by_inputs(scope)  # each digest names its estimator: another's boards are not taken
    return build_report(judges, found.labels, found.pairs, found.settled, correction=correction, kept_boards=kept)


def _kept_boards_by_inputs(scope: Scope) -> dict[str, CorrectedBoard | str | None]:
    """The corrected boards of the scope's kept report by the digest of their inputs, whatever data it was
    computed from: a refresh after a label fits again only the boards whose inputs it moved (46 boards
    were 1.6 of a refresh's 4.4 CPU-s at a million labels)."""
    snapshot = _snapshot(scope)
    if snapshot is None:
        return {}
    return {judge.corrected_inputs: judge.corrected for judge in snapshot[0].judges if judge.corrected_inputs}


# --- corrected boards by another estimator, kept apart from the report -------------------------------


def _boards_key(scope: Scope, correction: Correction) -> str:
    return f"{BOARDS_SCHEMA_VERSION}|{scope.key}|boards:{correction.estimator}"


def _kept_boards(scope: Scope, correction: Correction, stamp: str) -> Boards | None:
    """The scope's boards by `correction` kept for the data as it is now (`stamp`), else None."""
    cache_key = f"judge_lab:{_boards_key(scope, correction)}:{stamp}"
    if (found := cache.get(cache_key)) is not None:
        return found
    row = ReportSnapshot.objects.filter(scope=_boards_key(scope, correction), fingerprint=stamp)
    payload = row.values_list("payload", flat=True).first()
    boards = decode_boards(bytes(payload)) if payload is not None else None
    if boards is not None:
        cache.set(cache_key, boards, TIMEOUT_S)
    return boards


def refresh_corrected_boards(scope: Scope, correction: Correction) -> None:
    """A worker's part: the scope's boards by `correction`, unless those kept are current."""
    try:
        stamp = fingerprint()
        if _kept_boards(scope, correction, stamp) is None:
            with threadpool_limits(limits=1, user_api="blas"):
                _compute_and_keep_boards(scope, correction, stamp)
    finally:
        cache.delete(f"judge_lab:boards-refreshing:{_boards_key(scope, correction)}")


def _compute_and_keep_boards(scope: Scope, correction: Correction, stamp: str) -> Boards:
    started, clock = timezone.now(), time.perf_counter()
    found = collect(scope)
    boards = build_corrected_boards(list(found.judges.values()), found.labels, found.pairs, found.settled, correction)
    do_store_boards_snapshot(_boards_key(scope, correction), stamp, boards, started, time.perf_counter() - clock)
    cache.set(f"judge_lab:{_boards_key(scope, correction)}:{stamp}", boards, TIMEOUT_S)
    return boards


def _ask_for_boards(scope: Scope, correction: Correction) -> bool:
    return ask_worker_once(
        f"judge_lab:boards-refreshing:{_boards_key(scope, correction)}",
        lambda: task_named(BOARDS_TASK).apply_async(
            kwargs={"scope": dataclasses.asdict(scope), "estimator": correction.estimator}
        ),
        "the judge lab's corrected boards",
    )


def judge_key(judge_id: str) -> str:
    """A judge's id in URLs: ids are provider specs, which may hold ':' and '/'."""
    return hashlib.sha1(judge_id.encode(), usedforsecurity=False).hexdigest()[:12]


def model_as_judge(slug: str) -> list:
    """The model page's section: this model's reports as a judge (single judge, debate agent)."""
    return [judge for judge in judge_lab_report().judges if judge.judge.model == slug]
