"""The judge lab's numbers are read as one array: on PostgreSQL each row packed into bytes by the
database, read a batch at a time; on SQLite through the cursor. Either way, the rows' values, exactly,
in primary-key order, none skipped at a batch's edge; a NULL is an error, not a row quietly left out."""

from __future__ import annotations

import numpy as np
import pytest
from django.db.models import BigIntegerField, ExpressionWrapper, F, FloatField, Value

from evalhub.catalog.models import LanguageModel
from evalhub.system import numeric_reads
from evalhub.system.numeric_reads import numeric_table

pytestmark = pytest.mark.django_db
NUMBERS = np.dtype([("big", np.int64), ("ratio", np.float64)])


@pytest.fixture
def models() -> None:
    LanguageModel.objects.bulk_create(LanguageModel(slug=f"m{i}", display_name=f"M {i}") for i in range(11))
    LanguageModel.objects.filter(slug__in=["m0", "m4", "m5"]).delete()  # gaps in the keys


def numbers():
    return LanguageModel.objects.annotate(
        # Past 32 bits and negative, and floats that text would round if it were printed short
        big=ExpressionWrapper(F("pk") * Value(2**40) - Value(2**41 + 3), output_field=BigIntegerField()),
        ratio=ExpressionWrapper(F("pk") / Value(3.0) - Value(1e-300), output_field=FloatField()),
    )


@pytest.mark.parametrize("batch", [1, 3, 8, 100])
def test_it_reads_every_row_in_key_order_whatever_the_batch(models, monkeypatch, batch):
    monkeypatch.setattr(numeric_reads, "ROWS_PER_FETCH", batch)
    expected = list(numbers().order_by("pk").values_list("big", "ratio"))

    table = numeric_table(numbers().order_by("-slug"), NUMBERS)  # the caller's order is not the read's

    assert len(expected) == 8
    assert table.dtype == NUMBERS
    assert [(int(big), float(ratio)) for big, ratio in table.tolist()] == expected


def test_nothing_read_is_an_empty_table_of_the_asked_shape(models):
    table = numeric_table(numbers().filter(slug="none"), NUMBERS)

    assert len(table) == 0 and table.dtype == NUMBERS


def test_a_null_is_refused_not_left_out(models):
    LanguageModel.objects.filter(slug="m7").update(parameter_count=None)
    LanguageModel.objects.exclude(slug="m7").update(parameter_count=7)
    dtype = np.dtype([("parameter_count", np.int64)])

    with pytest.raises(ValueError, match="NULL"):
        numeric_table(LanguageModel.objects.all(), dtype)


def test_only_64_bit_numbers_are_read(models):
    with pytest.raises(TypeError, match="64-bit"):
        numeric_table(numbers(), np.dtype([("big", np.int32)]))
