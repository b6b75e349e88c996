"""Writes to the work log, for the runners of every app."""

from __future__ import annotations

from collections.abc import Sequence

from evalhub.worklog.models import RowIssue


def do_record_row_issues(issues: Sequence[RowIssue]) -> None:
    """Store the rows a chunk could not score (inside the chunk's transaction, so exactly once)."""
    RowIssue.objects.bulk_create(issues)
