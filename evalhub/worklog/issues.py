"""Reported rows grouped by cause: a run whose 2,000 calls failed the same way shows one line
with its count and a few examples, not 2,000 rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evalhub.jobs.models import Job
from evalhub.worklog.models import RowIssue

_NUMBER = re.compile(r"\d+")
EXAMPLES = 3


@dataclass
class IssueGroup:
    stage: str
    cause: str  # the first message of the group, as written
    count: int = 0
    examples: list[RowIssue] = field(default_factory=list)


def cause_key(stage: str, message: str) -> tuple[str, str]:
    """Messages that differ only in numbers (ids, token counts) share a cause."""
    return stage, _NUMBER.sub("#", message)


def issue_groups(job: Job, limit: int = 50) -> tuple[list[IssueGroup], int]:
    """The job's reported rows grouped by cause, most frequent first (at most `limit` groups, each
    with a few examples), and the total number of rows."""
    groups: dict[tuple[str, str], IssueGroup] = {}
    rows = RowIssue.objects.filter(job=job).select_related("prompt", "response__model").order_by("id")
    total = 0
    for issue in rows.iterator(chunk_size=2000):
        total += 1
        group = groups.setdefault(cause_key(issue.stage, issue.message), IssueGroup(issue.stage, issue.message))
        group.count += 1
        if len(group.examples) < EXAMPLES:
            group.examples.append(issue)
    ordered = sorted(groups.values(), key=lambda g: -g.count)
    return ordered[:limit], total
