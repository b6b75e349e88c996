"""Learning from people's reasons: the reasons people wrote on the train disagreements are distilled by a
(scripted) proposer into numbered guidelines, the explained disagreements kept as worked examples; no
held-out reason or pair ever reaches the proposer; where the reasons carry the rule people use, the new
version's held-out gain over its parent has an interval above 0."""

from __future__ import annotations

import re

import pytest

from evalhub.alignment.actions import do_create_judge, do_distil_reasons, do_run_version
from evalhub.alignment.comparisons import parent_comparisons
from evalhub.alignment.improvers import reasons
from evalhub.alignment.models import Method
from evalhub.alignment.training_set import train_reasons, training_pairs
from evalhub.catalog.models import Judgment, LabelSplit, Prompt
from evalhub.core.alignment.fewshot import TrainingPair
from evalhub.core.alignment.paired import AGREEMENT
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.jobs.models import JobStatus
from tests.alignment.test_few_shot_versions import study

pytestmark = pytest.mark.django_db(transaction=True)  # the job's chunks run as they commit
SECRET = "HELD-OUT-SECRET"
TRAIN_REASON = "The short answer gives the number at once; the long one only adds words."


def with_reasons():
    """The study (people prefer the terse answer everywhere), each label with its reason; a held-out
    label's reason carries a marker that must never reach the proposer."""
    benchmark, reference = study(lambda number, held_out: True)
    for judgment in Judgment.objects.filter(judge_model__slug="human-ann").select_related("response__prompt"):
        held_out = judgment.response.prompt.split_part.part == "held_out"
        judgment.rationale = f"{SECRET} {judgment.pk}" if held_out else TRAIN_REASON
        judgment.save(update_fields=["rationale"])
    return benchmark, reference


@pytest.fixture
def proposer(monkeypatch):
    shown: list[str] = []

    def propose(spec, messages):
        shown.append(messages[-1]["content"])
        return "Here:\n<guidelines>\n1) Prefer the shorter, concise answer when both are right.\n</guidelines>"

    monkeypatch.setattr(reasons, "propose", propose)
    return shown


def test_the_reasons_become_guidelines_and_examples_and_the_version_gains_on_held_out_pairs(proposer):
    _, reference = with_reasons()
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))  # prefers the longer answer
    do_run_version(first, reference)
    run = do_distil_reasons(first, reference, "scripted", examples=2)
    run.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED, run.job.message
    made = run.made
    assert (made.number, made.method, made.split) == (2, Method.REASONS, run.split)
    assert made.judge.instructions == "1. Prefer the shorter, concise answer when both are right."
    assert len(made.judge.examples) == 2 and "people's reasons on" in made.note

    (prompt,) = proposer
    assert TRAIN_REASON in prompt and SECRET not in prompt, "a held-out reason reached the proposer"
    train = set(Prompt.objects.filter(split_part__part="train").values_list("text", flat=True))
    asked = set(re.findall(r"Question: (.*)", prompt))
    assert asked and asked <= train

    do_run_version(made, reference)
    (comparison,) = parent_comparisons(made)
    gain = comparison.differences[AGREEMENT]
    assert gain.after > gain.before and gain.low > 0  # the planted rule, learned from the reasons, holds out of sample


def test_the_door_gives_no_reason_of_a_held_out_pair_even_when_asked_for_one():
    _, reference = with_reasons()
    split = LabelSplit.objects.get()
    pairs = training_pairs(split, "helpfulness", "nobody")
    held_out = Prompt.objects.filter(split_part__part="held_out").first()
    low, high = sorted(held_out.responses.values_list("pk", flat=True))
    assert Judgment.objects.filter(response_id__in=(low, high), rationale__startswith=SECRET).exists()
    smuggled = TrainingPair(("helpfulness", low, high), held_out.pk, "a", 1, 2)  # a real held-out pair
    found = train_reasons(split, [*pairs, smuggled])
    assert found and all(SECRET not in text for texts in found.values() for text in texts)
    assert smuggled.item not in found


def test_without_written_reasons_the_job_says_there_is_nothing_to_learn_from(proposer):
    _, reference = study(lambda number, held_out: True)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    do_run_version(first, reference)
    run = do_distil_reasons(first, reference, "scripted")
    run.refresh_from_db()
    assert run.made is None and run.job.status == JobStatus.FAILED
    assert "carries people's written reasons" in run.job.message and not proposer


def test_an_admin_starts_it_from_the_versions_page(client, proposer):
    from tests.conftest import make_user

    _, reference = with_reasons()
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    do_run_version(first, reference)
    client.force_login(make_user("ada", "admin"))
    page = client.get("/judge-versions/detail/").content.decode()
    assert "Learn from people&#x27;s reasons for v1" in page or "Learn from people's reasons for v1" in page
    answer = client.post(
        "/judge-versions/detail/v1/reasons/",
        {"reference": reference.pk, "proposer": "scripted", "examples": 2, "seed": 0},
    )
    assert answer.status_code == 302 and "/jobs/" in answer["Location"]
