"""Dashboard aggregates are cached under a fingerprint of the data they are computed from.

The fingerprint is one cheap query: counts and highest ids of the rows that feed the boards
(debates that reached a reference verdict, judges' verdicts, finished jobs, models, people's
adjudications, imported judgments). A new
verdict, an adjudication, a finished GEM or DHP job or a new model changes it, so the next
request recomputes; nothing has to remember to invalidate, whichever code path wrote the row.
Counts of settled debates (not a last-updated time) are used because a transaction that
commits late can carry an older timestamp than one already seen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.db import connection

from evalhub.adjudication.models import Adjudication
from evalhub.catalog.models import Judgment, LanguageModel
from evalhub.debates.models import Debate, DebateStatus, JudgeRun, JudgeVerdict
from evalhub.jobs.models import Job, JobStatus

TIMEOUT_S = 24 * 3600


def fingerprint() -> str:
    debate, verdict, run = Debate._meta.db_table, JudgeVerdict._meta.db_table, JudgeRun._meta.db_table
    job, model = Job._meta.db_table, LanguageModel._meta.db_table
    # The judge lab reads each person's verdict and imported labels (an edited label is a new row).
    person, label = Adjudication._meta.db_table, Judgment._meta.db_table
    settled = (DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED)
    sql = f"""
        SELECT
          (SELECT COUNT(*) FROM {debate}), (SELECT MAX(id) FROM {debate}),
          (SELECT COUNT(*) FROM {debate} WHERE status IN (%s, %s)),
          (SELECT COUNT(*) FROM {verdict}), (SELECT MAX(id) FROM {verdict}),
          (SELECT COUNT(*) FROM {run}), (SELECT MAX(id) FROM {run}),
          (SELECT COUNT(*) FROM {job} WHERE status = %s), (SELECT MAX(finished_at) FROM {job}),
          (SELECT COUNT(*) FROM {model}), (SELECT MAX(id) FROM {model}),
          (SELECT COUNT(*) FROM {person}), (SELECT MAX(id) FROM {person}),
          (SELECT COUNT(*) FROM {label}), (SELECT MAX(id) FROM {label})
    """  # noqa: S608 (table names come from the models, not from input)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*settled, JobStatus.SUCCEEDED])
        row = cursor.fetchone()
    return hashlib.sha1(repr(row).encode(), usedforsecurity=False).hexdigest()[:16]


def cached(name: str, compute: Callable[[], Any], *, stamp: str | None = None) -> Any:
    """`compute()` once per fingerprint of the data (pass `stamp` to reuse one taken this request)."""
    key = f"dashboards:{name}:{stamp or fingerprint()}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, TIMEOUT_S)
    return value
