"""`manage.py run_debates` runs the web path's job and chunks in-process and says what happened."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evalhub.debates.models import DebateRun
from evalhub.jobs.models import JobStatus
from tests.debates.conftest import ProviderUnavailable, ScriptedAgent

pytestmark = pytest.mark.django_db(transaction=True)
ARGS = ["--benchmark", "demo", "--criterion", "helpfulness", "--model-a", "demo-thorough", "--model-b", "demo-terse"]


def test_the_command_runs_the_run_as_a_job_and_prints_its_state(demo):
    out = StringIO()
    call_command("run_debates", *ARGS, "--category", "math", stdout=out)
    run = DebateRun.objects.get()
    assert run.job.kind == "debate"
    assert run.job.status == JobStatus.SUCCEEDED
    assert f"Run {run.pk} '{run.name}': Succeeded" in out.getvalue()
    assert run.job.usage_value.calls > 0


@pytest.fixture
def detail_agent_down(demo, monkeypatch):
    """A run_debates call whose third agent (heuristic:detail) fails every call with HTTP 500."""

    def factory(spec, meter=None):
        if str(spec) == "heuristic:detail":
            return ScriptedAgent(lambda messages: ProviderUnavailable("heuristic", "detail", "HTTP 500"), [])
        return ScriptedAgent(lambda messages: "x\n1", [])

    monkeypatch.setattr("evalhub.debates.runner.chat_client", factory)
    agents = ["--agent", "heuristic", "--agent", "heuristic:reference", "--agent", "heuristic:detail"]
    with pytest.raises(CommandError) as failed:
        call_command("run_debates", *ARGS, *agents, "--category", "math")
    return DebateRun.objects.get(), str(failed.value)


def test_an_agent_that_failed_every_call_fails_the_command_naming_it(detail_agent_down):
    run, message = detail_agent_down
    assert "Failed" in message
    assert "Agent heuristic:detail failed every call: heuristic:detail: HTTP 500" in message
    assert run.job.status == JobStatus.FAILED
    assert run.job.units_failed == run.debates.count()


def test_the_failed_debates_of_a_run_are_grouped_by_cause_on_its_job_page(detail_agent_down, client):
    from tests.conftest import make_user

    run, _ = detail_agent_down
    client.force_login(make_user("v", "viewer"))
    page = client.get(f"/debates/runs/{run.job_id}/results/").content.decode()
    assert 'id="reported-rows"' in page
    assert f'<td class="num">{run.debates.count()}</td><td>heuristic:detail: HTTP 500</td>' in page
