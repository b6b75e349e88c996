"""A benchmark's page lists its models with their response counts without reading every response on each
view (0.49 s a view with 240,000 responses on SQLite at ten million judgments): the counts are kept until a
response is added or deleted, and are then counted again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.models import Benchmark, LanguageModel, Prompt, Response

pytestmark = pytest.mark.django_db


def counts_shown(client) -> tuple[dict[str, int], list[str]]:
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/benchmarks/kept/")
    assert page.status_code == 200
    grouped = [
        q["sql"]
        for q in captured.captured_queries
        if 'COUNT("catalog_response"."id") AS "n"' in q["sql"] and '"parent_id" IS NULL' in q["sql"]
    ]
    return {m["slug"]: m["n"] for m in page.context["models"]}, grouped


def test_the_models_response_counts_are_kept_until_a_response_is_added_or_deleted(
    client, viewer, login, django_capture_on_commit_callbacks
):
    benchmark = Benchmark.objects.create(slug="kept", name="Kept")
    a = LanguageModel.objects.create(slug="model-a", display_name="A")
    b = LanguageModel.objects.create(slug="model-b", display_name="B")
    prompts = [Prompt.objects.create(benchmark=benchmark, external_id=str(i), text="q") for i in range(3)]
    for prompt in prompts:
        Response.objects.create(prompt=prompt, model=a, text="a")
    Response.objects.create(prompt=prompts[0], model=b, text="b")
    parent = Response.objects.filter(model=b).first()
    Response.objects.create(prompt=prompts[0], model=b, text="b, perturbed", parent=parent, perturbation="typo")
    login(viewer)
    first, grouped = counts_shown(client)
    assert first == {"model-a": 3, "model-b": 1} and grouped, "perturbed copies are not counted"
    assert [n for _, n in client.get("/benchmarks/kept/").context["prompt_rows"]] == [3, 1, 1]
    again, grouped = counts_shown(client)
    assert again == first and not grouped, "a second view reads no response"
    Response.objects.create(prompt=prompts[1], model=b, text="b")
    assert counts_shown(client)[0] == {"model-a": 3, "model-b": 2}
    with django_capture_on_commit_callbacks(execute=True):
        Response.objects.filter(model=a, prompt=prompts[2]).delete()
    assert counts_shown(client)[0] == {"model-a": 2, "model-b": 2}


def test_the_benchmarks_list_keeps_its_counts_until_a_prompt_or_response_is_added_or_deleted(
    client, viewer, login, django_capture_on_commit_callbacks
):
    benchmark = Benchmark.objects.create(slug="kept", name="Kept")
    model = LanguageModel.objects.create(slug="model-a", display_name="A")
    prompts = [Prompt.objects.create(benchmark=benchmark, external_id=str(i), text="q") for i in range(3)]
    Response.objects.create(prompt=prompts[0], model=model, text="a")
    login(viewer)

    def listed() -> tuple[tuple[int, int], int]:
        with CaptureQueriesContext(connection) as captured:
            rows = client.get("/benchmarks/").context["rows"]
        counted = sum('COUNT("catalog_prompt"."id")' in q["sql"] for q in captured.captured_queries)
        return next((prompts, responses) for shown, prompts, responses in rows if shown.slug == "kept"), counted

    assert listed() == ((3, 1), 1)
    assert listed() == ((3, 1), 0), "a second view counts nothing"
    Prompt.objects.create(benchmark=benchmark, external_id="3", text="q")
    assert listed()[0] == (4, 1)
    with django_capture_on_commit_callbacks(execute=True):
        prompts[2].delete()  # a prompt nobody answered
    assert listed()[0] == (3, 1)
    with django_capture_on_commit_callbacks(execute=True):
        prompts[0].delete()  # and one with its response
    assert listed()[0] == (2, 0)
