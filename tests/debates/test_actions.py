"""Storing debate turns: several in one transaction, each once, each shown to its debate's watchers."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from evalhub.adjudication.models import AdjudicationItem
from evalhub.core.runs.usage import CallStats, Usage
from evalhub.core.scaleeval.debate import DebateOutcome, Turn
from evalhub.debates import actions
from evalhub.debates.actions import do_claim_debates, do_finish_debates, do_record_turns, do_start_run
from evalhub.debates.models import Debate, DebateStatus, DebateTurn, Winner
from evalhub.jobs.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """Fragments broadcast after commit, as (group, html), rendered as for a watched group."""
    fragments: list[tuple[str, str]] = []
    monkeypatch.setattr(
        actions, "broadcast_html", lambda group, html: fragments.append((group, html() if callable(html) else html))
    )
    return fragments


def test_turns_of_several_debates_are_stored_together_and_each_goes_to_its_own_debate(make_run, sent):
    first, second = make_run().debates.order_by("id")[:2]
    entries = [
        (first.pk, Turn(0, 0, "first, speaker 1\n1", 1, extra=CallStats(input_tokens=7, cost_usd=0.5)), "spec-a"),
        (second.pk, Turn(2, 1, "second, speaker 3\n2", 2, reasked=True), "spec-b"),
        (first.pk, Turn(1, 0, "no verdict", None), "spec-c"),
    ]
    stored = do_record_turns(entries)
    assert [(t.debate_id, t.round, t.agent, t.text, t.verdict) for t in stored] == [
        (first.pk, 0, 0, "first, speaker 1\n1", 1),
        (second.pk, 1, 2, "second, speaker 3\n2", 2),
        (first.pk, 0, 1, "no verdict", None),
    ]
    row = DebateTurn.objects.get(debate=first, agent=0)
    assert (row.agent_spec, row.input_tokens, row.cost_usd) == ("spec-a", 7, 0.5)
    assert DebateTurn.objects.get(debate=second).reasked
    assert [group for group, _ in sent] == [f"debate.{first.pk}", f"debate.{second.pk}", f"debate.{first.pk}"]
    assert 'id="turn-1-2"' in sent[1][1]
    assert "second, speaker 3" in sent[1][1]


def test_a_turn_stored_before_is_kept_as_it_was_and_shown_again(make_run, sent):
    debate = make_run().debates.first()
    do_record_turns([(debate.pk, Turn(0, 0, "the original\n1", 1), "spec")])
    again = do_record_turns(
        [(debate.pk, Turn(0, 0, "a retried task's text\n2", 2), "spec"), (debate.pk, Turn(1, 0, "new\n1", 1), "spec")]
    )
    assert [(t.text, t.verdict) for t in again] == [("the original\n1", 1), ("new\n1", 1)]
    assert DebateTurn.objects.filter(debate=debate).count() == 2
    assert "the original" in sent[-2][1]


def test_new_turns_are_stored_in_one_statement_and_not_read_back(make_run, sent):
    debates = list(make_run().debates.order_by("id"))
    entries = [(debate.pk, Turn(agent, 0, f"speaker {agent}\n1", 1), "s") for debate in debates for agent in range(3)]
    with CaptureQueriesContext(connection) as captured:
        stored = do_record_turns(entries)
    turn_queries = [query["sql"] for query in captured if "debates_debateturn" in query["sql"]]
    assert len(turn_queries) == 1 and turn_queries[0].startswith("INSERT"), turn_queries
    assert {(t.pk, t.debate_id, t.round, t.agent, t.created_at) for t in stored} == set(
        DebateTurn.objects.values_list("pk", "debate_id", "round", "agent", "created_at")
    )


def test_a_turn_its_constraints_forbid_is_refused_not_skipped(make_run, sent):
    debate = make_run().debates.first()
    with pytest.raises(IntegrityError):
        do_record_turns([(debate.pk, Turn(0, 0, "fine\n1", 1), "s"), (debate.pk, Turn(-1, 0, "no agent\n1", 1), "s")])
    assert not DebateTurn.objects.exists()


def test_storing_a_batch_takes_the_same_queries_for_two_turns_as_for_twelve(make_run, sent):
    debates = list(make_run().debates.order_by("id"))

    def queries(count: int) -> int:
        entries = [(debates[i % len(debates)].pk, Turn(i // len(debates), i % 3, "x\n1", 1), "s") for i in range(count)]
        DebateTurn.objects.all().delete()
        with CaptureQueriesContext(connection) as captured:
            do_record_turns(entries)
        return len(captured)

    assert queries(2) == queries(12)


def test_debates_finishing_together_are_settled_in_one_call_and_their_run_summary_is_sent_once(make_run, sent):
    run = do_start_run(make_run(), enqueue=False)
    sent.clear()
    agreed, split = run.debates.order_by("id")[:2]
    turn = Turn(0, 0, "x\n1", 1, extra=CallStats(input_tokens=10, output_tokens=3, cost_usd=0.25))
    second = Turn(1, 0, "x\n1", 1, extra=CallStats(input_tokens=10, output_tokens=3, cost_usd=0.25))
    stored = [(agreed.pk, turn, "scripted-0"), (agreed.pk, second, "scripted-1"), (split.pk, turn, "scripted-0")]
    do_record_turns(stored)  # as the runner stores each turn: its call is counted then
    do_record_turns(stored)  # a retried task storing them again counts nothing twice
    finished = do_finish_debates(
        [
            (agreed, DebateOutcome(verdict=1, rounds_used=1, turns=[turn, turn])),
            (split, DebateOutcome(verdict=None, rounds_used=3, turns=[turn])),
        ]
    )
    assert [(d.pk, d.status) for d in finished] == [
        (agreed.pk, DebateStatus.CONSENSUS),
        (split.pk, DebateStatus.UNRESOLVED),
    ]
    assert finished[0].winner == (Winner.B if agreed.swapped else Winner.A)
    assert AdjudicationItem.objects.filter(debate=split).exists()
    assert not AdjudicationItem.objects.filter(debate=agreed).exists()
    usage = Job.objects.get(pk=run.job_id).usage_value
    assert usage == Usage(calls=3, input_tokens=30, output_tokens=9, cost_usd=0.75)
    groups = [group for group, _ in sent]
    summaries = [group for group, html in sent if "run-summary" in html]
    assert sorted(summaries) == ["debate-runs", f"run.{run.pk}"], "one run summary for both debates"
    rows = [html for group, html in sent if group == f"run.{run.pk}" and "debate-row-" in html]
    assert len(rows) == 2, "each debate's row on the run page is sent as it changes"
    # Bare: htmx's ws extension swaps each top-level element by its id, and a <template> has none.
    assert all(row.lstrip().startswith('<tr id="debate-row-') for row in rows)
    assert f"debate.{agreed.pk}" in groups
    assert f"debate.{split.pk}" in groups


def test_a_batch_claims_only_debates_without_a_result_and_marks_them_running_together(make_run, sent):
    run = do_start_run(make_run(), enqueue=False)
    sent.clear()
    pending, crashed, finished = run.debates.order_by("id")[:3]
    Debate.objects.filter(pk=crashed.pk).update(status=DebateStatus.RUNNING)  # a killed worker's
    Debate.objects.filter(pk=finished.pk).update(status=DebateStatus.CONSENSUS)
    with CaptureQueriesContext(connection) as captured:
        claimed = do_claim_debates([pending.pk, crashed.pk, finished.pk, 10**9])
    assert sorted(d.pk for d in claimed) == sorted([pending.pk, crashed.pk])
    assert all(d.status == DebateStatus.RUNNING for d in claimed)
    assert {d.pk: d.status for d in Debate.objects.filter(pk__in=[pending.pk, finished.pk])} == {
        pending.pk: DebateStatus.RUNNING,
        finished.pk: DebateStatus.CONSENSUS,
    }
    with CaptureQueriesContext(connection) as loading:
        assert claimed[0].run.criterion.name
        assert claimed[0].prompt.text
        assert claimed[0].response_b.text
    assert len(loading) == 0, "claimed debates come with what a runner reads"
    assert sorted(group for group, _ in sent if group.startswith("debate.")) == sorted(
        [f"debate.{pending.pk}", f"debate.{crashed.pk}"]
    )
    assert "debating" in sent[0][1]
    writes = [q["sql"] for q in captured if not q["sql"].lstrip().upper().startswith("SELECT")]
    debate_updates = [w for w in writes if w.lstrip().upper().startswith('UPDATE "DEBATES_DEBATE"')]
    assert len(debate_updates) == 1, "one UPDATE for the batch"


def test_a_debate_settled_again_by_a_retried_task_keeps_its_one_adjudication_item_as_it_was(make_run, sent):
    run = make_run(human_verdicts=2)
    first, second = run.debates.order_by("id")[:2]
    unresolved = DebateOutcome(verdict=None, rounds_used=3, turns=[])
    do_finish_debates([(first, unresolved)])
    item = AdjudicationItem.objects.get(debate=first)
    assert (item.required_verdicts, item.status) == (2, "open")
    AdjudicationItem.objects.filter(pk=item.pk).update(status="resolved", final_verdict=1)
    do_finish_debates([(first, unresolved), (second, unresolved)])
    assert AdjudicationItem.objects.filter(debate=first).count() == 1
    assert AdjudicationItem.objects.values_list("status", "final_verdict").get(pk=item.pk) == ("resolved", 1)
    assert AdjudicationItem.objects.get(debate=second).required_verdicts == 2
