"""Instruction rewriting, a job: proposals from a scripted proposer that sees train disagreements only,
each scored on the train pairs beside the current instructions; the best that beats them becomes the
next version, whose held-out gain the versions page then shows."""

from __future__ import annotations

import re

import pytest

from evalhub.alignment.actions import do_create_judge, do_rewrite_instructions, do_run_version
from evalhub.alignment.comparisons import parent_comparisons
from evalhub.alignment.improvers import rewriting
from evalhub.alignment.models import JudgeVersion, Method
from evalhub.catalog.models import Prompt
from evalhub.core.alignment.paired import AGREEMENT
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.jobs.models import JobStatus
from tests.alignment.test_few_shot_versions import study

pytestmark = pytest.mark.django_db(transaction=True)  # the job's chunks run as they commit


@pytest.fixture
def proposer(monkeypatch):
    """A scripted proposer: its answers in turn, and every prompt it was shown."""
    shown: list[str] = []
    answers = iter(
        [
            "<instructions>Prefer the shorter, concise answer when both are right.</instructions>",
            "Be fair to both submissions.",
            "",
        ]
    )

    def propose(spec, messages):
        shown.append(messages[-1]["content"])
        return next(answers)

    monkeypatch.setattr(rewriting, "propose", propose)
    return shown


def test_the_proposal_that_beats_the_current_instructions_on_train_pairs_becomes_the_next_version(proposer):
    _, reference = study(lambda number, held_out: True)  # people prefer the terse answer
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    do_run_version(first, reference)
    rewrite = do_rewrite_instructions(first, reference, "scripted", proposals=3)
    rewrite.refresh_from_db()
    scores = {score.proposal: (score.agreed, score.judged) for score in rewrite.scores.all()}
    assert scores == {0: (0, 20), 1: (20, 20), 2: (0, 20), 3: (0, 0)}
    assert rewrite.job.status == JobStatus.PARTIAL, "one proposal gave nothing usable"
    made = rewrite.made
    assert (made.number, made.method, made.split) == (2, Method.REWRITE, rewrite.split)
    assert made.judge.instructions == "Prefer the shorter, concise answer when both are right."
    assert "proposal 3: nothing usable" in made.note
    train = {prompt.text for prompt in Prompt.objects.filter(split_part__part="train")}
    held_out = {prompt.text for prompt in Prompt.objects.filter(split_part__part="held_out")}
    asked = {question for prompt in proposer for question in re.findall(r"Question: (.*)", prompt)}
    assert asked
    assert asked <= train
    assert not asked & held_out, "the proposer saw a held-out pair"
    do_run_version(made, reference)
    (comparison,) = parent_comparisons(made)
    agreement = comparison.differences[AGREEMENT]
    assert (agreement.before, agreement.after, agreement.pairs) == (0.0, 1.0, 20)
    assert agreement.low > 0


def test_no_new_version_when_no_proposal_beats_the_current_instructions(monkeypatch):
    _, reference = study(lambda number, held_out: True)
    monkeypatch.setattr(rewriting, "propose", lambda spec, messages: "Weigh every detail; longer is better.")
    first = do_create_judge("brief", JudgeDefinition(spec="heuristic:detail", instructions="Prefer the shorter one."))
    do_run_version(first, reference)
    rewrite = do_rewrite_instructions(first, reference, "scripted", proposals=2)
    rewrite.refresh_from_db()
    assert rewrite.made is None
    assert "No proposal beat the current instructions on the train pairs; no new version." in rewrite.job.message
    assert JudgeVersion.objects.count() == 1


def test_an_admin_starts_a_rewrite_from_the_versions_page_and_a_viewer_cannot(proposer, login, admin_user, viewer):
    _, reference = study(lambda number, held_out: True)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    do_run_version(first, reference)
    form = {"reference": reference.pk, "proposer": "scripted", "proposals": 1, "seed": 0}
    assert login(viewer).post("/judge-versions/detail/v1/rewrite/", form).status_code == 403
    answer = login(admin_user).post("/judge-versions/detail/v1/rewrite/", form)
    assert answer["Location"].startswith("/jobs/")
    assert JudgeVersion.objects.get(name="detail", number=2).method == Method.REWRITE
    page = login(viewer).get("/judge-versions/detail/").content.decode()
    assert "instructions rewritten" in page
    assert "+Prefer the shorter, concise answer when both are right." in page
