"""A benchmark's held-out split on its page: made once by an admin, shown per category, extended to
prompts added since without moving any; viewers see it, nobody else changes it."""

from __future__ import annotations

import pytest

from evalhub.catalog.actions.splits import SplitRejected, do_make_split
from evalhub.catalog.models import Benchmark, LabelSplit, PromptPart
from evalhub.catalog.queries import benchmark_split, read_split
from tests.alignment.test_training_set import imported, labels_csv

pytestmark = pytest.mark.django_db


def test_an_admin_splits_once_and_the_page_shows_each_categorys_parts(login, admin_user):
    imported(labels_csv(range(20)))  # 10 code, 10 math
    client = login(admin_user)
    answer = client.post("/benchmarks/study/split/", {"held_out_percent": 30, "seed": 4})
    assert answer.status_code == 302
    page = client.get("/benchmarks/study/").content.decode()
    assert "6 of 20 prompts held out" in page
    assert '<td>code</td><td class="num">7</td><td class="num">3</td>' in page
    split = LabelSplit.objects.get()
    assert (split.held_out_fraction, split.seed, split.created_by) == (0.3, 4, admin_user)
    parts = parts_of("study")
    client.post("/benchmarks/study/split/", {"held_out_percent": 80, "seed": 9})  # no second split
    assert LabelSplit.objects.count() == 1
    assert parts_of("study") == parts


def test_prompts_added_later_are_placed_on_the_admins_word_without_moving_any(login, admin_user):
    imported(labels_csv(range(10)))
    split = do_make_split(Benchmark.objects.get(slug="study"), held_out_fraction=0.5, seed=0)
    before = parts_of("study")
    imported(labels_csv(range(10, 16)))
    client = login(admin_user)
    assert "6 prompt(s) added since are in neither part." in client.get("/benchmarks/study/").content.decode()
    client.post("/benchmarks/study/split/")
    after = parts_of("study")
    assert len(after) == 16
    assert {pk: after[pk] for pk in before} == before
    assert PromptPart.objects.filter(split=split).count() == 16


def test_a_second_split_is_refused_with_a_reason():
    imported(labels_csv(range(4)))
    benchmark = Benchmark.objects.get(slug="study")
    do_make_split(benchmark, held_out_fraction=0.5)
    with pytest.raises(SplitRejected, match="split already"):
        do_make_split(benchmark, held_out_fraction=0.2)
    with pytest.raises(SplitRejected, match="between 5 % and 90 %"):
        do_make_split(Benchmark.objects.create(slug="other", name="other"), held_out_fraction=0.99)


def test_only_an_admin_splits_and_a_viewer_sees_the_split(login, viewer, adjudicator, outsider, admin_user):
    imported(labels_csv(range(6)))
    for person in (viewer, adjudicator, outsider):
        assert login(person).post("/benchmarks/study/split/", {"held_out_percent": 30}).status_code == 403
    assert not LabelSplit.objects.exists()
    do_make_split(Benchmark.objects.get(slug="study"), held_out_fraction=0.5)
    page = login(viewer).get("/benchmarks/study/").content.decode()
    assert "4 of 6 prompts held out" in page  # 3 code and 3 math prompts: 1.5 rounds up to 2 each
    assert "Split once" not in page
    login(admin_user)
    assert login(admin_user).get("/benchmarks/study/split/").status_code == 405


def parts_of(benchmark: str) -> dict[int, str]:
    """prompt id → its part in the benchmark's split ({} without one)."""
    split = benchmark_split(benchmark)
    return dict(read_split(split).parts) if split else {}
