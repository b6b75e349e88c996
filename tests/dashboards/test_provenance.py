from __future__ import annotations

import pytest

from evalhub.debates.actions import do_create_judge_run
from evalhub.debates.models import DebateTurn, JudgeVerdict
from evalhub.reads.provenance import stand_in_specs
from tests.debates.conftest import demo, make_run  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def test_a_run_that_has_stored_nothing_is_behind_no_number(make_run):  # noqa: F811
    run = make_run(agents=["heuristic", "openai:gpt-4o"])
    do_create_judge_run(reference=run, judge="heuristic:concise", enqueue=False)
    assert stand_in_specs() == []


def test_the_stand_ins_behind_stored_turns_and_verdicts_are_named_and_real_providers_are_not(make_run):  # noqa: F811
    run = make_run(agents=["heuristic", "openai:gpt-4o"])
    judge_run = do_create_judge_run(reference=run, judge="heuristic:concise", enqueue=False)
    debate = run.debates.first()
    DebateTurn.objects.create(debate=debate, round=0, agent=0, agent_spec="heuristic", text="…", verdict=1)
    assert stand_in_specs() == ["heuristic"]
    JudgeVerdict.objects.create(judge_run=judge_run, debate=debate, reversed_order=False, sample=0, text="…", verdict=1)
    assert stand_in_specs() == ["heuristic", "heuristic:concise"]
