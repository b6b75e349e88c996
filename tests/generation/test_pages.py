from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from evalhub.core.privileged.hints import RULE_BASED
from evalhub.generation.models import GenerationRun, PromptHints, PromptTemplate
from tests.generation.conftest import spec
from tests.generation.test_runs import run_here


def form(maths, server, **overrides):
    data = {
        "benchmark": maths["benchmark"].pk,
        "new_candidates": spec(server, "strong"),
        "template": PromptTemplate.objects.get(slug="answer").pk,
        "tiers": "0, 1",
        "hint_count": 1,
        "hint_maker": RULE_BASED,
        "samples": 1,
        "temperature": 0,
        "max_tokens": 256,
        "seed": 0,
        "answer_match": "symbolic",
    }
    data.update(overrides)
    return data


def test_an_admin_starts_a_run_from_the_form_and_its_chunks_go_to_the_default_queue(
    client, login, admin_user, maths, server, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr("evalhub.jobs.tasks.chunk_task.apply_async", lambda args, queue: sent.append(queue))
    login(admin_user)
    assert client.get(reverse("generation_create")).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("generation_create"), form(maths, server))
    run = GenerationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == run.job.get_absolute_url()
    assert [m.model_id for m in run.candidates.all()] == [f"{server.url}/v1|strong"]
    assert run.tiers == [0, 1]
    assert sent == ["default"]


def test_the_form_names_every_problem_and_creates_nothing(client, login, admin_user, maths, server):
    login(admin_user)
    response = client.post(reverse("generation_create"), form(maths, server, tiers="0, 2", hint_maker=""))
    body = response.content.decode()
    assert response.status_code == 400
    assert "Tier 2 needs 2 hints" in body
    assert "Hint tiers need a hint maker" in body
    response = client.post(reverse("generation_create"), form(maths, server, new_candidates="opena:gpt-4o"))
    assert response.status_code == 400
    assert "Did you mean &#x27;openai&#x27;?" in response.content.decode()
    response = client.post(reverse("generation_create"), form(maths, server, tiers="zero"))
    assert response.status_code == 400
    assert "whole numbers" in response.content.decode()
    assert not GenerationRun.objects.exists()


@pytest.mark.parametrize("persona", ["viewer", "adjudicator", "outsider"])
def test_only_admins_start_runs_edit_templates_and_see_hints(client, login, request, persona, maths, server):
    login(request.getfixturevalue(persona))
    assert client.post(reverse("generation_create"), form(maths, server)).status_code == 403
    assert (
        client.post(reverse("generation_templates"), {"slug": "x", "name": "x", "user": "{prompt}"}).status_code == 403
    )
    assert client.get(reverse("generation_hints", args=["maths"])).status_code == 403


def test_a_template_with_an_unknown_placeholder_is_refused_by_the_page(client, login, admin_user):
    login(admin_user)
    response = client.post(reverse("generation_templates"), {"slug": "cot", "name": "CoT", "user": "{question}"})
    assert response.status_code == 400
    assert "unknown placeholder {question}" in response.content.decode()
    response = client.post(
        reverse("generation_templates"), {"slug": "cot", "name": "CoT", "user": "{prompt}\nThink step by step."}
    )
    assert response.status_code == 302
    assert PromptTemplate.objects.get(slug="cot").created_by == admin_user


def test_the_results_show_counts_and_tier_tables_and_exports_carry_template_and_tier(
    client, login, viewer, maths, server, candidates, answer_template
):
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates,
        template=answer_template,
        tiers=[0, 1],
        hint_maker=RULE_BASED,
        hint_count=1,
        anchor=candidates[1],
    )
    login(viewer)
    assert reverse("generation_results", args=[run.job_id]) in client.get(run.job.get_absolute_url()).content.decode()
    page = client.get(reverse("generation_results", args=[run.job_id])).content.decode()
    assert "Accuracy per hint tier" in page
    assert "No hint" in page
    assert "1 hint" in page
    assert "No decided pair yet" in page
    assert "answer:0h" in page
    assert "No reference solution" in page  # the essay's row issue

    body = client.get(reverse("generation_export", args=[run.job_id, "responses", "csv"])).content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == run.made == 10
    assert {(r["template"], r["hint_tier"]) for r in rows} == {("answer", "0"), ("answer", "1")}
    tiers = client.get(reverse("generation_export", args=[run.job_id, "tiers", "json"])).json()
    assert {(r["measure"], r["template"], r["tier"]) for r in tiers} >= {("accuracy", "answer", "1 hint")}


def test_an_admin_edits_a_flagged_hint_and_the_flag_clears(client, login, admin_user, maths):
    record = PromptHints.objects.create(
        prompt=maths["prompts"]["sum"],
        maker="x",
        prompt_version="v",
        hints=["Add.", "It is 42."],
        final_answer="42",
        leaks=[2],
    )
    login(admin_user)
    listing = client.get(reverse("generation_hints", args=["maths"])).content.decode()
    assert "flagged: not used" in listing
    assert "contains the answer" in listing
    url = reverse("generation_hints_edit", args=[record.pk])
    assert client.post(url, {"hint_1": "Add.", "hint_2": "Add the units."}).status_code == 302
    record.refresh_from_db()
    assert record.hints == ["Add.", "Add the units."]
    assert record.leaks == []
    assert record.edited_by == admin_user
    assert client.post(url, {"hint_1": "Add.", "hint_2": ""}).status_code == 400


def test_the_model_page_shows_its_accuracy_per_hint_tier(
    client, login, viewer, maths, server, candidates, answer_template
):
    run_here(
        benchmark=maths["benchmark"],
        candidates=candidates,
        template=answer_template,
        tiers=[0, 1],
        hint_maker=RULE_BASED,
        hint_count=1,
    )
    login(viewer)
    page = client.get(reverse("model_detail", args=[candidates[0].slug])).content.decode()
    section = page.split("<h3>Hint tiers</h3>", 1)[1].split('<h2 id="as-a-judge">As a judge</h2>', 1)[0]
    assert "Maths" in section
    assert "<td>Accuracy</td>" in section
    assert "0%" in section
    assert "100%" in section  # strong: wrong without a hint, right with one


def test_a_template_used_by_a_run_keeps_its_text_and_a_new_slug_takes_the_change(
    client, login, admin_user, maths, server, candidates
):
    from evalhub.generation.actions import do_save_template

    template = do_save_template(slug="cot", name="CoT", system="", user="{prompt}\\nThink step by step.")
    assert do_save_template(slug="cot", name="CoT", system="", user="{prompt}\\nThink.").user == "{prompt}\\nThink."
    run_here(benchmark=maths["benchmark"], candidates=candidates[:1], template=template, tiers=[0])
    login(admin_user)
    response = client.post(reverse("generation_templates"), {"slug": "cot", "name": "CoT", "user": "{prompt} Go."})
    assert response.status_code == 400
    assert "was used by 1 generation run(s)" in response.content.decode()
    assert (
        client.post(reverse("generation_templates"), {"slug": "answer", "name": "A", "user": "{prompt}"}).status_code
        == 400
    )
    assert PromptTemplate.objects.get(slug="cot").user == "{prompt}\\nThink."


def test_the_heuristic_judge_is_refused_as_a_candidate(client, login, admin_user, maths, server):
    login(admin_user)
    response = client.post(reverse("generation_create"), form(maths, server, new_candidates="heuristic"))
    assert response.status_code == 400
    assert "it writes no responses" in response.content.decode()


@pytest.mark.django_db(transaction=True)  # the judge runner writes from its own database thread
def test_an_admin_judges_every_tier_against_the_anchor_in_one_step_and_win_rates_fill_in(
    client, login, admin_user, maths, server, candidates, answer_template
):
    from evalhub.catalog.demo import do_load_builtin_criteria
    from evalhub.catalog.models import Criterion
    from evalhub.debates.models import DebateRun, JudgeRun

    do_load_builtin_criteria()
    strong, weak = candidates
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates,
        template=answer_template,
        tiers=[0, 1],
        hint_maker=RULE_BASED,
        hint_count=1,
        anchor=weak,
    )
    login(admin_user)
    assert (
        "Judge every tier against weak" in client.get(reverse("generation_results", args=[run.job_id])).content.decode()
    )
    form = {
        "criterion": Criterion.objects.get(slug="helpfulness").pk,
        "judge": "heuristic:reference",
        "criteria_variant": "original",
        "privileged_sources": ["reference_answer"],
        "samples": 1,
        "temperature": 0,
        "max_tokens": 256,
        "seed": 0,
    }
    response = client.post(reverse("generation_compare", args=[run.job_id]), form, follow=True)  # judges run eagerly
    assert "Started 2 judge runs against weak" in response.content.decode()
    pairs = DebateRun.objects.order_by("variant")
    assert [(p.model_a, p.model_b, p.variant, p.debates.count()) for p in pairs] == [
        (strong, weak, "answer:0h", 3),
        (strong, weak, "answer:1h", 2),  # the essay has no hints, so no tier-1 pair
    ]
    assert all(j.privileged_sources == ["reference_answer"] and j.verdicts.exists() for j in JudgeRun.objects.all())
    analysis = tier_analysis_of(run)
    [row] = analysis["win_rate"]["rows"]
    assert row["model"] == "strong"
    assert [c.n for c in row["cells"]] == [3, 2]
    assert analysis["battles"] == {"single_judge": 5}
    again = client.post(reverse("generation_compare", args=[run.job_id]), form, follow=True).content.decode()
    assert "Started 0 judge runs" in again
    assert again.count("already judged by heuristic:reference") == 2
    assert JudgeRun.objects.count() == 2
    assert DebateRun.objects.count() == 2


def tier_analysis_of(run):
    from evalhub.generation.analysis import tier_analysis

    return tier_analysis(run)


def test_comparing_needs_an_anchor_and_only_admins_may(
    client, login, admin_user, viewer, maths, server, candidates, answer_template
):
    run = run_here(benchmark=maths["benchmark"], candidates=candidates, template=answer_template, tiers=[0])
    login(viewer)
    assert client.post(reverse("generation_compare", args=[run.job_id]), {}).status_code == 403
    login(admin_user)
    url = reverse("generation_compare", args=[run.job_id])
    response = client.post(url, {"judge": "heuristic"}, follow=True)
    assert "Nothing started: criterion: This field is required." in response.content.decode()
    from evalhub.catalog.demo import do_load_builtin_criteria
    from evalhub.catalog.models import Criterion
    from evalhub.debates.models import DebateRun

    do_load_builtin_criteria()
    form = {
        "criterion": Criterion.objects.get(slug="helpfulness").pk,
        "judge": "heuristic",
        "criteria_variant": "original",
        "samples": 1,
        "temperature": 0,
        "max_tokens": 256,
        "seed": 0,
    }
    response = client.post(url, form, follow=True)
    assert "Choose an anchor model for this run first" in response.content.decode()
    assert not DebateRun.objects.exists()


def test_the_results_page_makes_as_many_queries_for_many_prompts_and_issues_as_for_few(
    client, login, viewer, maths, server, candidates, answer_template, queries_for
):
    from django.core.cache import cache

    from evalhub.catalog.models import Prompt

    def cold(run) -> int:
        cache.clear()
        return queries_for(client, reverse("generation_results", args=[run.job_id]))

    login(viewer)
    fields = {
        "candidates": candidates,
        "template": answer_template,
        "tiers": [0, 1],
        "hint_maker": RULE_BASED,
        "hint_count": 1,
        "anchor": candidates[1],
    }
    few = cold(run_here(benchmark=maths["benchmark"], **fields))
    for n in range(12):  # more prompts, half of them without a reference (more reported rows)
        solution = "" if n % 2 else f"Add. Then add more. Then check. $\\boxed{{{n + 2}}}$."
        Prompt.objects.create(
            benchmark=maths["benchmark"], external_id=f"more-{n}", text=f"What is {n} + 2?", reference_answer=solution
        )
    many = cold(run_here(benchmark=maths["benchmark"], **fields))
    assert many == few


def test_the_form_takes_a_subset_of_prompts_and_refuses_unknown_ones(
    client, login, admin_user, maths, server, monkeypatch
):
    monkeypatch.setattr("evalhub.jobs.tasks.chunk_task.apply_async", lambda args, queue: None)
    login(admin_user)
    response = client.post(reverse("generation_create"), form(maths, server, prompts="sum, missing"))
    assert response.status_code == 400
    assert "Maths has no prompt missing." in response.content.decode()
    assert client.post(reverse("generation_create"), form(maths, server, prompts="sum")).status_code == 302
    assert GenerationRun.objects.get().prompt_ids == [maths["prompts"]["sum"].pk]


def test_the_home_page_leads_to_generation(client, login, viewer, admin_user):
    login(viewer)
    page = client.get(reverse("home")).content.decode()
    assert reverse("generation_index") in page
    assert reverse("generation_create") not in page
    login(admin_user)
    assert reverse("generation_create") in client.get(reverse("home")).content.decode()


def test_a_forged_verdict_source_is_a_400_with_the_reason(
    client, login, viewer, maths, server, candidates, answer_template
):
    run = run_here(
        benchmark=maths["benchmark"], candidates=candidates, template=answer_template, tiers=[0], anchor=candidates[1]
    )
    login(viewer)
    for url in (
        reverse("generation_results", args=[run.job_id]),
        reverse("generation_export", args=[run.job_id, "tiers", "csv"]),
    ):
        response = client.get(url, {"source": "rumour"})
        assert response.status_code == 400
        assert "These sources cannot be used: source:" in response.content.decode()
        assert client.get(url, {"source": "human"}).status_code == 200


def test_a_model_page_takes_the_data_fingerprint_once_however_many_generation_runs_it_shows(
    client, login, viewer, maths, server, candidates, answer_template, monkeypatch
):
    import evalhub.dashboards.views
    import evalhub.generation.analysis

    for tiers in ([0], [0, 1], [0, 1, 2]):
        run_here(
            benchmark=maths["benchmark"],
            candidates=candidates,
            template=answer_template,
            tiers=tiers,
            hint_maker=RULE_BASED,
            hint_count=2,
        )
    taken = []
    real = evalhub.dashboards.views.fingerprint
    monkeypatch.setattr(evalhub.dashboards.views, "fingerprint", lambda: taken.append(1) or real())
    monkeypatch.setattr(evalhub.generation.analysis, "fingerprint", lambda: taken.append(1) or real())
    login(viewer)
    page = client.get(reverse("model_detail", args=[candidates[0].slug])).content.decode()
    assert page.count("<td>Accuracy</td>") == 3
    assert len(taken) == 1


def test_the_judge_every_tier_form_defaults_to_the_criterion_of_the_benchmarks_task_type(
    client, login, admin_user, maths, server, candidates, answer_template
):
    from evalhub.catalog.demo import do_load_builtin_criteria
    from evalhub.catalog.models import Criterion

    do_load_builtin_criteria()  # Creativity sorts first: it was the default for a maths benchmark
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates,
        template=answer_template,
        tiers=[0],
        hint_maker=RULE_BASED,
        hint_count=1,
        anchor=candidates[1],
    )
    login(admin_user)
    page = client.get(reverse("generation_results", args=[run.job_id])).content.decode()
    reasoning = Criterion.objects.get(slug="reasoning").pk
    assert re.search(rf'<option value="{reasoning}" selected>Reasoning</option>', page)
    assert ">Creativity</option>" in page
    assert " selected>Creativity" not in page
