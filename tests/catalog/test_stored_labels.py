"""The stored labels a re-import compares with, held as three integers each: loaded without holding
every table's sorted copy beside every table's columns (a score file of ten million rows imported again
peaked at 894 MiB, most of it these columns twice)."""

from __future__ import annotations

import random
import tracemalloc

from evalhub.catalog.actions.judgment_import_state import StoredLabels

JUDGES, PER_JUDGE = 10, 20_000


def rows(seed: int = 0):
    """Each judge's scores of PER_JUDGE responses in a shuffled order, as the database returns them."""
    rng = random.Random(seed)
    for judge in range(1, JUDGES + 1):
        responses = list(range(1, PER_JUDGE + 1))
        rng.shuffle(responses)
        for response in responses:
            yield judge, 7, response, 0, judge * 10**6 + response, hash((judge, response))


def test_every_label_is_found_with_its_key_and_hash_and_none_other():
    stored = StoredLabels()
    stored.load_all(rows())
    wanted = [
        (7, judge, response, 0)
        for judge in (1, 5, JUDGES, JUDGES + 1)
        for response in (1, 77, PER_JUDGE, PER_JUDGE + 1)
    ]
    found = stored.find_all(wanted)
    for (_, judge, response, _), got in zip(wanted, found, strict=True):
        if judge <= JUDGES and response <= PER_JUDGE:
            assert got == (judge * 10**6 + response, hash((judge, response)))
        else:
            assert got is None


def test_loading_holds_the_columns_once_and_one_table_sorted_beside_them():
    listed = list(rows())  # the rows themselves are not what is measured
    tracemalloc.start()
    try:
        stored = StoredLabels()
        stored.load_all(iter(listed))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    columns = 3 * 8 * JUDGES * PER_JUDGE  # three int64 a label
    assert held >= columns
    assert peak < 1.5 * columns  # every table's sorted copy beside every table's columns was 2x
    assert stored.tables
