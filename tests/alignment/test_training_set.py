"""Nothing that tunes a judge reads a held-out label: the training set holds the benchmark's train
prompts only, and a label planted on a held-out prompt, which would change the examples chosen if it
were read, changes nothing."""

from __future__ import annotations

import pytest

from evalhub.alignment.improvers.fewshot import few_shot_examples
from evalhub.alignment.training_set import NoSplit, training_pairs, training_split
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.splits import do_make_split
from evalhub.catalog.models import Benchmark, Prompt
from evalhub.catalog.queries import read_split
from evalhub.core.alignment.fewshot import choose_examples
from evalhub.core.alignment.split import HELD_OUT, TRAIN
from evalhub.core.judge_lab.measures import FIRST, SECOND

pytestmark = pytest.mark.django_db

HEADER = "prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,winner"


def labels_csv(prompts: range, *, category: str = "", judge_wrong_every: int = 3) -> bytes:
    """On each prompt a person says a is better; judge-x agrees except on every `judge_wrong_every`-th."""
    rows = [HEADER]
    for number in prompts:
        cat = category or ("math" if number % 2 else "code")
        pair = f"p{number},Question {number}?,{cat},alpha,beta,A{number},B{number}"
        rows.append(f"{pair},human-ann,a")
        rows.append(f"{pair},judge-x,{'b' if number % judge_wrong_every == 0 else 'a'}")
    return ("\r\n".join(rows) + "\r\n").encode()


def imported(data: bytes) -> None:
    do_import_judgments(filename="labels.csv", data=data, benchmark_slug="study", allow_new_models=True)


@pytest.fixture
def split_study():
    imported(labels_csv(range(40)))
    return do_make_split(Benchmark.objects.get(slug="study"), held_out_fraction=0.5, seed=0)


def test_the_training_set_holds_the_train_prompts_people_settled_and_the_judges_verdicts(split_study):
    parts = read_split(split_study).parts
    pairs = training_pairs(split_study, "overall", "judge-x")
    train = {pk for pk, part in parts.items() if part == TRAIN}
    assert {pair.prompt for pair in pairs} == train
    assert len(train) == 20
    externals = dict(Prompt.objects.values_list("pk", "external_id"))
    for pair in pairs:
        number = int(externals[pair.prompt][1:])
        assert pair.people == FIRST  # a shown first, and its id is the lower
        assert pair.judge == (SECOND if number % 3 == 0 else FIRST)


def test_a_label_planted_on_a_held_out_prompt_changes_no_example(split_study):
    before = few_shot_examples(split_study, "overall", "judge-x", k=6)
    parts = read_split(split_study).parts
    held_out = Prompt.objects.filter(pk__in=[pk for pk, part in parts.items() if part == HELD_OUT])
    # Planted: on every held-out prompt the judge now disagrees with people, in a category of its own
    # that would take the first turn of the rule (the most disagreements) if it were read.
    numbers = [int(prompt.external_id[1:]) for prompt in held_out]
    planted = labels_csv(numbers, category="planted", judge_wrong_every=1).replace(b"planted,", b",")
    imported(planted.replace(b",judge-x,a", b",judge-x,b"))
    Prompt.objects.filter(pk__in=held_out).update(category="planted")
    after = few_shot_examples(split_study, "overall", "judge-x", k=6)
    assert after == before
    assert {example.prompt for example in after} <= {pk for pk, part in parts.items() if part == TRAIN}
    # Read without the split, the planted labels would have been chosen first: the plant can be seen.
    everything = training_pairs_ignoring_split(split_study)
    assert choose_examples(everything, 6)[0].category == "planted"


def training_pairs_ignoring_split(split):
    """The same pairs with every prompt counted as train: what a leak would read."""
    from evalhub.catalog.models import PromptPart

    PromptPart.objects.update(part=TRAIN)
    return training_pairs(split, "overall", "judge-x")


def test_prompts_added_since_the_split_stay_out_until_placed():
    imported(labels_csv(range(10)))
    split = do_make_split(Benchmark.objects.get(slug="study"), held_out_fraction=0.3, seed=1)
    imported(labels_csv(range(10, 14)))
    new = set(Prompt.objects.filter(external_id__in=["p10", "p11", "p12", "p13"]).values_list("pk", flat=True))
    assert not {pair.prompt for pair in training_pairs(split, "overall", "judge-x")} & new
    from evalhub.catalog.actions.splits import do_place_new_prompts

    assert do_place_new_prompts(split) == 4
    assert set(read_split(split).parts) >= new


def test_a_benchmark_without_a_split_has_no_training_set():
    imported(labels_csv(range(4)))
    with pytest.raises(NoSplit, match="split it once"):
        training_split("study")
