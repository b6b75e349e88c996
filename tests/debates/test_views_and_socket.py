"""Debate pages and the live transcript socket."""

from __future__ import annotations

import asyncio
import html

import channels.consumer
import pytest
from channels.db import database_sync_to_async as sync_to_async
from django.db import connections

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.scaleeval.debate import Turn
from evalhub.debates.actions import do_record_turns, do_start_run
from evalhub.debates.models import DebateRun, DebateStatus
from evalhub.debates.runner import run_debate
from evalhub.llm.testing import FakeLLMServer
from tests.conftest import make_user
from tests.jobs.helpers import open_socket


def like_a_worker(debate_id: int) -> str:
    """Run a debate the way a Celery worker thread does, closing the thread's connections after."""
    try:
        return run_debate(debate_id)
    finally:
        connections.close_all()


@pytest.mark.django_db
def test_viewers_read_debates_but_only_admins_create_and_control_runs(login, viewer, admin_user, make_run):
    run = make_run()
    debate = run.debates.first()
    client = login(viewer)
    for url in ("/debates/", f"/debates/runs/{run.pk}/", f"/debates/{debate.pk}/"):
        assert client.get(url).status_code == 200
    assert client.get("/debates/new/").status_code == 403
    assert client.post(f"/debates/runs/{run.pk}/pause/").status_code == 403
    assert login(admin_user).get("/debates/new/").status_code == 200


@pytest.mark.django_db
def test_an_admin_creates_a_run_from_the_form_and_its_debates_run(login, admin_user, demo):
    form = {
        "name": "form run",
        "benchmark": Benchmark.objects.get(slug="demo").pk,
        "criterion": Criterion.objects.get(slug="helpfulness").pk,
        "model_a": LanguageModel.objects.get(slug="demo-thorough").pk,
        "model_b": LanguageModel.objects.get(slug="demo-sloppy").pk,
        "agents": "heuristic\nheuristic:reference\nheuristic:detail",
        "rounds": 3,
        "consensus_rule": "unanimous",
        "history": "all",
        "privileged_sources": ["reference_answer"],
        "temperature": 0,
        "max_tokens": 256,
        "seed": 1,
        "human_verdicts": 2,
        "tie_policy": "admin",
        "adjudication_flow": "blind_first",
        "aids": ["debate", "none"],
        "start": "on",
    }
    response = login(admin_user).post("/debates/new/", form)
    run = DebateRun.objects.get(name="form run")
    assert response.status_code == 302
    assert response.url == f"/debates/runs/{run.pk}/"
    assert (run.adjudication_flow, run.aids) == ("blind_first", ["debate", "none"])
    assert (run.privileged_sources, run.agents[1]) == (["reference_answer"], "heuristic:reference")
    assert run.job is not None, "started as a job"
    assert run.job.kind == "debate", "started as a job"
    assert run.debates.count() == 12
    assert (run.human_verdicts, run.tie_policy) == (2, "admin")


@pytest.mark.django_db
def test_a_forged_form_is_rejected_with_reasons_and_creates_nothing(login, admin_user, demo):
    model = LanguageModel.objects.get(slug="demo-thorough").pk
    form = {
        "name": "bad",
        "benchmark": 999,
        "criterion": Criterion.objects.get(slug="helpfulness").pk,
        "model_a": model,
        "model_b": model,
        "agents": "opneai:gpt-4o",
        "rounds": 0,
        "consensus_rule": "most",
        "history": "all",
        "temperature": 0,
        "max_tokens": 256,
        "seed": 0,
    }
    response = login(admin_user).post("/debates/new/", form)
    body = response.content.decode()
    assert response.status_code == 400
    assert not DebateRun.objects.exists()
    assert "Did you mean &#x27;openai&#x27;" in body
    assert "Model B must differ" in body


def test_the_new_debate_form_offers_as_models_only_what_wrote_responses(login, admin_user, demo):
    """It offered every judge an import named (Arena's voters, people, scorers such as match) as Model A/B."""
    LanguageModel.objects.create(slug="human-voter-7", display_name="voter 7", is_human=True)
    LanguageModel.objects.create(slug="match", display_name="match")
    page = login(admin_user).get("/debates/new/").content.decode()
    model_a = page[page.index('name="model_a"') : page.index("</select>", page.index('name="model_a"'))]
    assert "Demo system: thorough" in model_a
    assert "voter 7" not in model_a and ">match<" not in model_a
    voter = LanguageModel.objects.get(slug="human-voter-7").pk
    form = {"model_a": voter}
    answer = login(admin_user).post("/debates/new/", form).content.decode()
    assert "Select a valid choice" in answer, "nor can a forged form choose one"


@pytest.mark.django_db
def test_model_identities_are_shown_to_admins_only(login, viewer, admin_user, make_run):
    debate = make_run().debates.first()
    assert "Demo system: thorough" not in login(viewer).get(f"/debates/{debate.pk}/").content.decode()
    assert "Demo system: thorough" in login(admin_user).get(f"/debates/{debate.pk}/").content.decode()


@pytest.mark.django_db
def test_a_submission_with_a_script_is_shown_as_text(login, viewer, make_run):
    debate = make_run().debates.first()
    debate.response_a.text = "<script>alert(1)</script>"
    debate.response_a.save()
    body = login(viewer).get(f"/debates/{debate.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


@pytest.mark.django_db(transaction=True)
async def test_a_viewer_receives_the_transcript_then_new_turns_in_order(make_run):
    run = await sync_to_async(make_run)()
    debate = await sync_to_async(run.debates.first)()
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, connected = await open_socket(f"/ws/debates/{debate.pk}/", viewer)
    assert connected
    assert 'id="debate-live"' in await communicator.receive_from(timeout=5)
    for agent in range(3):
        await sync_to_async(do_record_turns)([(debate.pk, Turn(agent, 0, f"speaker {agent} says\n1", 1), "heuristic")])
    received = [await communicator.receive_from(timeout=5) for _ in range(3)]
    assert [f'id="turn-0-{a}"' in html for a, html in enumerate(received)] == [True] * 3
    assert "speaker 2 says" in received[2]
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_run_pages_socket_brings_the_page_up_to_date_when_it_connects(make_run):
    """A run's debates can finish between its page's render and the page's socket joining the run's
    group (answers served from the response cache take milliseconds); the page then stayed on
    "running", as a browser test caught once. On connecting, the socket sends the run's summary and
    the rows of the page the browser shows, as they are now."""
    run = await sync_to_async(make_run)()
    debates = await sync_to_async(lambda: list(run.debates.order_by("id")))()
    await sync_to_async(lambda: run.debates.update(status=DebateStatus.CONSENSUS, verdict=1, winner="a"))()
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, connected = await open_socket(f"/ws/debate-runs/{run.pk}/?page=1", viewer)
    assert connected
    summary = await communicator.receive_from(timeout=5)
    rows = await communicator.receive_from(timeout=5)
    assert f'id="run-summary-{run.pk}"' in summary and 'hx-swap-oob="true"' in summary
    assert f"{len(debates)} of {len(debates)} debates finished" in summary
    assert rows.startswith("<tr"), "a message that opens with a row is parsed as table rows"
    assert [f'id="debate-row-{debate.pk}"' in rows for debate in debates] == [True] * len(debates)
    assert rows.count('class="badge consensus"') == len(debates)
    await communicator.disconnect()
    # The debates page: the summaries of the runs it lists, as they are now.
    communicator, connected = await open_socket("/ws/debate-runs/", viewer)
    assert connected
    listed = await communicator.receive_from(timeout=5)
    assert f'id="run-summary-{run.pk}"' in listed
    assert f"{len(debates)} of {len(debates)} debates finished" in listed
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_fragments_are_relayed_without_a_hop_to_a_database_thread(make_run, monkeypatch):
    hops = []

    async def close_old_connections():
        hops.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", close_old_connections)
    run = await sync_to_async(make_run)()
    debate = await sync_to_async(run.debates.first)()
    communicator, _ = await open_socket(f"/ws/debates/{debate.pk}/", await sync_to_async(make_user)("v", "viewer"))
    await communicator.receive_from(timeout=5)
    for agent in range(3):
        await sync_to_async(do_record_turns)([(debate.pk, Turn(agent, 0, f"speaker {agent}\n1", 1), "heuristic")])
        assert f'id="turn-0-{agent}"' in await communicator.receive_from(timeout=5)
    assert hops == [1], "the connect reads the database; the three fragments do not"
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("who", ["anonymous", "outsider"])
async def test_anonymous_and_outsider_sockets_are_refused(make_run, who):
    run = await sync_to_async(make_run)()
    debate = await sync_to_async(run.debates.first)()
    user = None if who == "anonymous" else await sync_to_async(make_user)("o")
    _, connected = await open_socket(f"/ws/debates/{debate.pk}/", user)
    assert not connected


@pytest.mark.django_db(transaction=True)
async def test_turns_stream_to_the_browser_chunk_by_chunk_from_a_real_openai_compatible_server(make_run):
    answer = "The first is more complete .\n1"
    # 60 ms between words: longer than the 40 ms flush interval, so the words arrive as separate fragments.
    with FakeLLMServer(reply=lambda messages: answer, api_key="not-needed", chunk_delay_s=0.06) as server:
        spec = f"openai-compatible:{server.url}/v1|fake-judge"
        run = await sync_to_async(make_run)(agents=[spec], rounds=1)
        await sync_to_async(do_start_run)(run, enqueue=False)
        debate = await sync_to_async(run.debates.first)()
        viewer = await sync_to_async(make_user)("v", "viewer")
        communicator, connected = await open_socket(f"/ws/debates/{debate.pk}/", viewer)
        assert connected
        await communicator.receive_from(timeout=5)  # the transcript as it is
        status = await asyncio.to_thread(like_a_worker, debate.pk)
        assert status == DebateStatus.CONSENSUS
        messages = []
        while not await communicator.receive_nothing(timeout=0.3):
            messages.append(await communicator.receive_from())
    frames = [m for m in messages if 'id="turn-slot-0-0"' in m and "thinking…" in m]
    assert len(frames) >= 5, "the answer arrives piece by piece"
    texts = [streamed_text(frame) for frame in frames]
    # Each frame carries the whole text so far: a page opened mid-turn is complete at the next one.
    assert texts[0] == ""
    assert all(later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False))
    assert html.unescape(texts[-1]) == answer
    finished = next(i for i, m in enumerate(messages) if 'id="turn-0-0" class="turn"' in m)
    assert 'id="turn-slot-0-0"' in messages[finished], "the stored turn replaces the card in its slot"
    assert messages.index(frames[-1]) < finished
    assert any("The agents agree" in m for m in messages[finished:])


def streamed_text(frame: str) -> str:
    return frame.split('class="text streaming">', 1)[1].split("</div>", 1)[0]


@pytest.mark.django_db(transaction=True)
async def test_a_debate_opened_mid_turn_shows_the_turn_so_far_and_its_words_keep_growing(make_run):
    answer = " ".join(f"word{i}" for i in range(40)) + "\n1"
    with FakeLLMServer(reply=lambda messages: answer, api_key="not-needed", chunk_delay_s=0.05) as server:
        spec = f"openai-compatible:{server.url}/v1|fake-judge"
        run = await sync_to_async(make_run)(agents=[spec], rounds=1)
        await sync_to_async(do_start_run)(run, enqueue=False)
        debate = await sync_to_async(run.debates.first)()
        viewer = await sync_to_async(make_user)("v", "viewer")
        worker = asyncio.ensure_future(asyncio.to_thread(like_a_worker, debate.pk))
        await asyncio.sleep(1.3)  # the turn is under way: about 26 of its 41 words streamed
        communicator, connected = await open_socket(f"/ws/debates/{debate.pk}/", viewer)
        assert connected
        snapshot = await communicator.receive_from(timeout=5)
        assert 'id="turn-slot-0-0"' in snapshot
        assert "thinking…" in snapshot, "the page opened mid-turn has the turn's card"
        so_far = streamed_text(snapshot)
        assert so_far.startswith("word0 word1")
        next_frame = await communicator.receive_from(timeout=5)
        assert len(streamed_text(next_frame)) > len(so_far), "and its words keep growing"
        assert await worker == DebateStatus.CONSENSUS
        await communicator.disconnect()


@pytest.mark.django_db
def test_the_debates_list_makes_the_same_number_of_queries_for_many_runs(login, viewer, make_run, queries_for):
    make_run(name="first")
    client = login(viewer)
    client.get("/debates/")
    one = queries_for(client, "/debates/")
    for index in range(8):
        make_run(name=f"run {index}")
    body = client.get("/debates/").content.decode()
    assert queries_for(client, "/debates/") == one
    assert body.count("run-summary-") == 9
    assert "3 of 3 debates finished" not in body
    assert "0 of 3 debates finished" in body
