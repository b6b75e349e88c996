"""The counts' stale flag and version (evalhub.tallies.actions)."""

from __future__ import annotations

from evalhub.tallies.actions import _bump_version, do_mark_stale, is_stale
from evalhub.tallies.models import TallyState


def test_a_cascade_marking_the_counts_stale_row_by_row_raises_the_version_once(db, django_capture_on_commit_callbacks):
    TallyState.objects.update_or_create(pk=1, defaults={"stale": False})
    with django_capture_on_commit_callbacks() as callbacks:
        for _ in range(50):  # a deletion's cascade: one call per deleted row
            do_mark_stale()
    assert is_stale()
    assert [callback for callback in callbacks if callback is _bump_version] == [_bump_version]


def test_marking_counts_that_have_no_state_row_yet_makes_it_stale(db, django_capture_on_commit_callbacks):
    TallyState.objects.all().delete()
    with django_capture_on_commit_callbacks() as callbacks:
        do_mark_stale()
    assert is_stale()
    assert _bump_version in callbacks
