"""Which saves mark the counts stale (evalhub.tallies.signals.watch_changes)."""

from __future__ import annotations

from evalhub.catalog.models import LanguageModel
from evalhub.tallies.actions import is_stale
from evalhub.tallies.models import TallyState


def fresh_counts() -> None:
    TallyState.objects.update_or_create(pk=1, defaults={"stale": False})


def test_renaming_a_model_marks_the_counts_stale_whether_or_not_the_save_names_its_fields(db):
    model = LanguageModel.objects.create(slug="gpt-a", display_name="A")
    for update_fields in (None, ["slug"]):
        fresh_counts()
        model.slug = f"renamed-{len(update_fields or ())}"
        model.save(update_fields=update_fields)
        assert is_stale()


def test_a_save_that_changes_no_watched_field_leaves_the_counts_fresh(db):
    model = LanguageModel.objects.create(slug="gpt-b", display_name="B")
    fresh_counts()
    model.display_name = "Bee"
    model.save()
    assert not is_stale()


def test_a_save_naming_only_unwatched_fields_reads_nothing_more_than_its_update(db, django_assert_num_queries):
    model = LanguageModel.objects.create(slug="gpt-c", display_name="C")
    fresh_counts()
    model.notes = "a note"
    with django_assert_num_queries(1):  # the UPDATE alone; no read of the row's watched fields
        model.save(update_fields=["notes"])
    assert not is_stale()
