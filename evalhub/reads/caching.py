"""Dashboard aggregates are cached under a fingerprint of the data they are computed from.

The fingerprint is one cheap query plus the counts' version (evalhub.tallies): highest ids of the
rows the boards and the judge lab read (debates, judges' verdicts, people's adjudications,
imported judgments, models), judge runs, and the finished jobs. Settling, overriding or deleting
anything the boards count raises the counts' version after its commit; new rows raise a highest
id. Nothing else has to remember to invalidate, whichever code path wrote the row. No COUNT over
the verdicts: at half a million rows that alone cost more than the board it guards.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.db import connection

from evalhub.adjudication.models import Adjudication
from evalhub.catalog.models import Judgment, LanguageModel, PromptPart
from evalhub.debates.models import Debate, JudgeRun, JudgeVerdict
from evalhub.jobs.models import Job, JobStatus
from evalhub.tallies.actions import tally_version

TIMEOUT_S = 24 * 3600
REFRESH_LOCK_S = 15 * 60  # a refresh asked of a worker and not finished within this is asked for again
logger = logging.getLogger(__name__)


def fingerprint() -> str:
    debate, verdict, run = Debate._meta.db_table, JudgeVerdict._meta.db_table, JudgeRun._meta.db_table
    job, model = Job._meta.db_table, LanguageModel._meta.db_table
    person, label = Adjudication._meta.db_table, Judgment._meta.db_table
    # A prompt placed in a split's held-out part changes where an improved judge is scored.
    placed = PromptPart._meta.db_table
    sql = f"""
        SELECT
          (SELECT MAX(id) FROM {debate}), (SELECT MAX(id) FROM {verdict}),
          (SELECT COUNT(*) FROM {run}), (SELECT MAX(id) FROM {run}),
          (SELECT COUNT(*) FROM {job} WHERE status = %s), (SELECT MAX(finished_at) FROM {job}),
          (SELECT COUNT(*) FROM {model}), (SELECT MAX(id) FROM {model}),
          (SELECT MAX(id) FROM {person}), (SELECT MAX(id) FROM {label}), (SELECT MAX(id) FROM {placed})
    """  # noqa: S608 (table names come from the models, not from input)
    with connection.cursor() as cursor:
        cursor.execute(sql, [JobStatus.SUCCEEDED])
        row = cursor.fetchone()
    return hashlib.sha1(repr((tally_version(), row)).encode(), usedforsecurity=False).hexdigest()[:16]


def cached(name: str, compute: Callable[[], Any], *, stamp: str | None = None) -> Any:
    """`compute()` once per fingerprint of the data (pass `stamp` to reuse one taken this request)."""
    key = f"dashboards:{name}:{stamp or fingerprint()}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, TIMEOUT_S)
    return value


def cached_forever(key: str, compute: Callable[[], Any]) -> Any:
    """`compute()` once per key, for values that a key names completely (a hash of their inputs)."""
    value = cache.get(f"dashboards:{key}")
    if value is None:
        value = compute()
        cache.set(f"dashboards:{key}", value, TIMEOUT_S)
    return value


def ask_worker_once(lock: str, send: Callable[[], object], what: str) -> bool:
    """Whether a worker computes `what` now: asked here by `send()` (a task's apply_async), or by an
    earlier request holding `lock` until the worker deletes it, so one is asked however many pages ask.
    A broker that does not answer is logged, not a failed page; the next request asks again."""
    if not cache.add(lock, 1, REFRESH_LOCK_S):
        return True
    try:
        send()
    except Exception as error:  # noqa: BLE001 (the kept result is still shown)
        cache.delete(lock)
        logger.warning("could not ask a worker for %s (%s)", what, type(error).__name__)
        return False
    return True
