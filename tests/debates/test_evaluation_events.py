"""Stored judgments as OpenTelemetry evaluation events: sent after commit with the documented
attributes when configured, and nothing sent (or imported) when not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evalhub.debates.actions import do_create_judge_run
from evalhub.debates.models import DebateStatus
from evalhub.system import telemetry
from tests.test_architecture import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def exporter():
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    memory = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    with telemetry.using_provider(provider):
        yield memory


def events(memory) -> list[tuple[str, dict]]:
    return [(r.log_record.event_name, dict(r.log_record.attributes)) for r in memory.get_finished_logs()]


def test_a_single_judges_verdicts_reach_the_exporter_as_evaluation_results(make_run, agents, exporter):
    reference = make_run()
    reference.debates.update(status=DebateStatus.CONSENSUS, verdict=1)
    agents(lambda agent, messages: "Submission 1 is clearer.\n1")
    run = do_create_judge_run(reference=reference, judge="scripted-0", check_position=True)
    sent = events(exporter)
    assert len(sent) == run.verdicts.count() == 2 * reference.debates.count()
    assert {name for name, _ in sent} == {"gen_ai.evaluation.result"}
    debate = reference.debates.order_by("id").first()
    first_look = next(
        a for _, a in sent if a["evalhub.debate.id"] == debate.pk and a["evalhub.reversed_order"] is False
    )
    shown_first_is_a = not debate.swapped
    assert first_look == {
        "gen_ai.evaluation.name": reference.criterion.slug,
        "gen_ai.evaluation.score.value": 1.0 if shown_first_is_a else 0.0,
        "gen_ai.evaluation.score.label": "response_a_better" if shown_first_is_a else "response_b_better",
        "gen_ai.evaluation.explanation": "Submission 1 is clearer.\n1",
        "gen_ai.response.id": str(debate.response_a_id),
        "evalhub.evaluator.name": "scripted-0",
        "evalhub.evaluator.version": "original",
        "evalhub.benchmark": reference.benchmark.slug,
        "evalhub.response_b.id": str(debate.response_b_id),
        "evalhub.judge_run.id": run.pk,
        "evalhub.debate.id": debate.pk,
        "evalhub.sample": 0,
        "evalhub.reversed_order": False,
    }
    reversed_look = next(
        a for _, a in sent if a["evalhub.debate.id"] == debate.pk and a["evalhub.reversed_order"] is True
    )
    assert reversed_look["gen_ai.evaluation.score.value"] == 1.0 - first_look["gen_ai.evaluation.score.value"]


def test_an_unreadable_verdict_is_sent_as_unreadable_with_no_score(make_run, agents, exporter):
    reference = make_run()
    agents(lambda agent, messages: "I cannot decide.")
    do_create_judge_run(reference=reference, judge="scripted-0", check_position=False)
    sent = [a for _, a in events(exporter)]
    assert sent and all(a["gen_ai.evaluation.score.label"] == "unreadable" for a in sent)
    assert all("gen_ai.evaluation.score.value" not in a for a in sent)


def test_without_an_endpoint_nothing_is_sent_and_opentelemetry_is_never_imported(make_run, agents, settings):
    settings.EVALHUB_OTEL_ENDPOINT = ""
    assert not telemetry.enabled()
    code = (
        "import django, os, sys; os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings'; django.setup();"
        "import evalhub.system.telemetry, evalhub.debates.judging, evalhub.scoring.discernment.runner;"
        "from evalhub.system.telemetry import emit_after_commit;"
        "emit_after_commit(lambda: (_ for _ in ()).throw(AssertionError('built')));"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_broken_collector_never_fails_the_write(make_run, agents, caplog):
    class Broken:
        def get_logger(self, name):
            raise ConnectionError("collector down")

    reference = make_run()
    agents(lambda agent, messages: "x\n1")
    with telemetry.using_provider(Broken()):
        run = do_create_judge_run(reference=reference, judge="scripted-0", check_position=False)
    assert run.verdicts.count() == reference.debates.count()
    assert "could not send evaluation events" in caplog.text


def test_debate_agents_turns_and_peoples_verdicts_are_sent_too(make_run, agents, exporter, adjudicator):
    from evalhub.adjudication.actions import do_reserve_next
    from evalhub.debates.actions import do_start_run
    from tests.adjudication.verdicts import give_verdict

    agents(lambda agent, messages: f"My view.\n{1 if agent == 0 else 2}")  # no consensus: people decide
    run = make_run(rounds=1)
    do_start_run(run)
    turns = [a for _, a in events(exporter) if a["evalhub.evaluator.version"] == "debate agent"]
    assert len(turns) == 3 * run.debates.count()
    assert {a["evalhub.evaluator.name"] for a in turns} == {"scripted-0", "scripted-1", "scripted-2"}
    assert {a["evalhub.round"] for a in turns} == {0}
    reservation = do_reserve_next(adjudicator)
    give_verdict(adjudicator, reservation.item_id, 0, notes="Both are fine.")
    (person,) = [a for _, a in events(exporter) if a["evalhub.evaluator.version"] == "adjudication"]
    assert person["evalhub.evaluator.name"] == f"person:{adjudicator.pk}", "a user id, never a name"
    assert (person["gen_ai.evaluation.score.label"], person["gen_ai.evaluation.score.value"]) == ("tie", 0.5)
    assert person["gen_ai.evaluation.explanation"] == "Both are fine."
