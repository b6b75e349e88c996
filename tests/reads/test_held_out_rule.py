"""The held-out rule is decided in one place (evalhub.reads.judged_pairs.admitted) and every reader of a
split's pairs passes through it: the judge lab scoring an improved judge, the comparison of a version
with its parent, and the training set a tuner reads. It was applied three ways in three rooms, the split
looked up again by its benchmark's slug in each."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.core.cache import cache

from evalhub.alignment.comparisons import parent_comparisons
from evalhub.alignment.training_set import training_pairs
from evalhub.catalog.models import PromptPart
from evalhub.core.alignment.paired import AGREEMENT
from evalhub.core.alignment.split import HELD_OUT, TRAIN
from evalhub.judgelab.models import ReportSnapshot
from tests.alignment.test_improved_judges_in_the_judge_lab import judges, versions  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[2]
# Where a prompt's part may be named: where parts are defined and made, and the one rule.
MAY_NAME_A_PART = {
    "evalhub/core/alignment/split.py",  # the parts and how prompts are drawn into them
    "evalhub/catalog/models.py",  # the part's stored choices
    "evalhub/catalog/actions/splits.py",  # making and summarising a split
    "evalhub/reads/judged_pairs.py",  # the rule
}


def modules_naming_a_part() -> set[str]:
    named = set()
    for path in (ROOT / "evalhub").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name) and node.id in {"TRAIN", "HELD_OUT"}:
                named.add(str(path.relative_to(ROOT)))
    return named


def test_no_reader_of_a_split_names_its_parts_but_the_rule():
    assert modules_naming_a_part() - MAY_NAME_A_PART == set()


@pytest.mark.django_db(transaction=True)
def test_a_prompt_moved_to_train_leaves_every_scoring_of_the_improved_judge_and_joins_its_training_set(
    versions,  # noqa: F811 (the fixture imported above)
    login,
    viewer,
):
    first, second = versions
    split = second.split
    client = login(viewer)

    def seen() -> tuple[int, int, int]:
        compared = parent_comparisons(second)[0].differences[AGREEMENT].prompts
        return judges(client)["detail v2"]["judged"], compared, len(training_pairs(split, "helpfulness", "detail v1"))

    before = seen()
    # Moved as no page moves a placed prompt (a split is made once): the kept report is let go here, as
    # placing new prompts lets it go by changing the data's fingerprint.
    moved = PromptPart.objects.filter(split=split, part=HELD_OUT).order_by("prompt_id")[:5]
    PromptPart.objects.filter(pk__in=[part.pk for part in moved]).update(part=TRAIN)
    ReportSnapshot.objects.all().delete()
    cache.clear()
    after = seen()

    assert before == (20, 20, 20)
    assert after == (15, 15, 25)


@pytest.mark.django_db
def test_placing_new_prompts_changes_what_the_judge_lab_keys_its_report_by():
    """A prompt placed after the split enters its held-out part, where an improved judge is scored: the
    report kept from before must not be shown as current."""
    from evalhub.catalog.actions.splits import do_make_split, do_place_new_prompts
    from evalhub.catalog.models import Benchmark, Prompt
    from evalhub.reads.caching import fingerprint

    benchmark = Benchmark.objects.create(slug="study", name="Study")
    Prompt.objects.bulk_create(Prompt(benchmark=benchmark, external_id=f"p{n}", text="?") for n in range(10))
    split = do_make_split(benchmark, held_out_fraction=0.5, seed=0)
    Prompt.objects.create(benchmark=benchmark, external_id="late", text="?")
    before = fingerprint()

    assert do_place_new_prompts(split) == 1
    assert fingerprint() != before


@pytest.mark.django_db
def test_splits_are_read_in_two_queries_however_many(django_assert_num_queries):
    from evalhub.catalog.actions.splits import do_make_split
    from evalhub.catalog.models import Benchmark, Prompt
    from evalhub.catalog.queries import read_splits

    made = []
    for slug in ("one", "two", "three"):
        benchmark = Benchmark.objects.create(slug=slug, name=slug)
        Prompt.objects.bulk_create(Prompt(benchmark=benchmark, external_id=f"p{n}", text="?") for n in range(6))
        made.append(do_make_split(benchmark, held_out_fraction=0.5, seed=0))

    with django_assert_num_queries(2):  # the splits, then their prompts' parts
        read = read_splits(split.pk for split in made)

    assert {split.benchmark for split in read.values()} == {"one", "two", "three"}
    assert all(len(split.parts) == 6 for split in read.values())
