"""An adjudicator judges blind: a user whose only role is adjudicator sees no model name on any page,
fragment or export, and no live socket outside the adjudication screens."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async as sync_to_async

from evalhub.adjudication.actions import do_open_items, do_reserve_next
from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.debates.models import DebateStatus
from tests.conftest import make_user
from tests.jobs.helpers import open_socket
from tests.site_pages import demo_pages

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db):
    do_load_demo()
    run = do_create_run(
        name="demo-thorough vs demo-terse on demo (helpfulness)",  # as run_debates names a run
        benchmark=Benchmark.objects.get(slug="demo"),
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="demo-thorough"),
        model_b=LanguageModel.objects.get(slug="demo-terse"),
        agents=["heuristic"],
    )
    do_start_run(run)
    run.refresh_from_db()
    unresolved = list(run.debates.order_by("id")[:3])
    run.debates.filter(pk__in=[d.pk for d in unresolved]).update(status=DebateStatus.UNRESOLVED)
    do_open_items(run.debates.filter(pk__in=[d.pk for d in unresolved]))
    candidates = LanguageModel.objects.filter(responses__isnull=False).distinct()
    names = {name for model in candidates for name in (model.slug, model.display_name)}
    prompt = Benchmark.objects.get(slug="demo").prompts.order_by("id").first()
    return {"run": run, "names": names, "prompt": prompt, "debate": unresolved[0]}


def every_get_url(world) -> list[str]:
    run, prompt, debate = world["run"], world["prompt"], world["debate"]
    job, item = run.job_id, debate.adjudication_item.pk
    return [
        *demo_pages(run, debate, prompt),
        *(f"/benchmarks/demo/export/{table}.{fmt}" for table in ("responses", "judgments") for fmt in ("csv", "jsonl")),
        *(f"/models/demo-thorough/{table}.csv" for table in ("record", "by_criterion", "by_scenario", "gre_bench")),
        *(
            f"/leaderboards/{table}.{fmt}"
            for table in ("ratings", "win_rates", "gre_bench", "judges")
            for fmt in ("csv", "json")
        ),
        f"/jobs/{job}/controls/",
        f"/debates/runs/{run.job_id}/results/",
        "/generation/templates/",
        "/scoring/gem/1/results/",
        "/scoring/gem/1/table.csv",
        "/scoring/discernment/1/results/",
        "/scoring/discernment/1/scores.csv",
        "/generation/1/results/",
        "/generation/1/responses.csv",
        f"/adjudicate/items/{item}/",
        f"/adjudicate/items/{item}/review/",
        *(f"/adjudicate/runs/{run.pk}/export.{fmt}" for fmt in ("csv", "jsonl")),
        "/surveys/",
    ]


def test_an_adjudicator_sees_no_model_name_on_any_page_or_export(client, world):
    adjudicator = make_user("ann", "adjudicator")
    assert do_reserve_next(adjudicator) is not None, "the adjudicator holds an item, so its screen is open to them"
    client.force_login(adjudicator)
    shown = {}
    for url in every_get_url(world):
        response = client.get(url)
        assert response.status_code < 500, url
        body = response.content.decode(errors="replace")
        named = sorted(name for name in world["names"] if name in body)
        if named:
            shown[url] = (response.status_code, named)
    assert not shown, f"model names shown to an adjudicator: {shown}"
    held = adjudicator.reservations.get().item
    assert client.get(f"/adjudicate/items/{held.pk}/").status_code == 200, "their own item is shown, blind"


def test_a_viewer_does_see_the_model_names_the_adjudicator_cannot(client, world):
    client.force_login(make_user("vic", "viewer"))
    assert "demo-thorough" in client.get("/models/").content.decode()
    body = client.get(f"/benchmarks/demo/prompts/{world['prompt'].pk}/").content.decode()
    assert any(name in body for name in world["names"])


@pytest.mark.django_db(transaction=True)
async def test_an_adjudicator_cannot_listen_to_a_debate_or_a_job(world):
    adjudicator = await sync_to_async(make_user)("ann", "adjudicator")
    for path in (f"/ws/debates/{world['debate'].pk}/", f"/ws/jobs/{world['run'].job_id}/", "/ws/debate-runs/"):
        communicator, connected = await open_socket(path, adjudicator)
        assert not connected, path
