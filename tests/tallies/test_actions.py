"""The counts' stale flag and version (evalhub.tallies.actions)."""

from __future__ import annotations

from evalhub.tallies.actions import _bump_version, do_mark_stale, is_stale
from evalhub.tallies.models import JUDGE_COUNTS, JUDGE_SUMS, TallyState


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


def test_a_transaction_raises_the_version_once_however_many_of_its_writes_ask(transactional_db):
    from django.db import transaction

    from evalhub.tallies.actions import do_add_battles, do_add_judge_tallies, note_change, tally_version

    before = tally_version()
    with transaction.atomic():  # a judge run's chunk: battles, judge tallies, and a change noted
        do_add_battles({("a", "b", "single_judge", "overall", "", "", ""): (1, 0, 0)})
        do_add_judge_tallies({(7, ""): (1,) + (0,) * (len(JUDGE_COUNTS + JUDGE_SUMS) - 1)})
        note_change()
    assert tally_version() == before + 1


def test_a_raise_dropped_with_a_rolled_back_savepoint_is_asked_again_by_a_later_write(transactional_db):
    from django.db import transaction

    from evalhub.tallies.actions import note_change, tally_version

    before = tally_version()
    with transaction.atomic():
        try:
            with transaction.atomic():
                note_change()  # pending, but in the savepoint
                raise RuntimeError
        except RuntimeError:
            pass
        note_change()  # after the rollback: the raise must be asked for again
    assert tally_version() == before + 1
    with transaction.atomic():
        note_change()
        with transaction.atomic():
            note_change()  # in a savepoint: asked again, in case only this one is kept
    assert tally_version() > before + 1
