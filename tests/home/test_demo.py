"""The quickstart's demo runs fill every kind of page, offline, through the real jobs (issue 22)."""

from __future__ import annotations

import re

import pytest

from evalhub.adjudication.demo import DEMO_BLIND_RUN_NAME
from evalhub.adjudication.models import AdjudicationItem, BlindVerdict
from evalhub.catalog.demo import do_load_demo
from evalhub.debates.demo import DEMO_RUN_NAME
from evalhub.debates.models import DebateRun, JudgeRun
from evalhub.generation.analysis import accuracy_observations
from evalhub.generation.models import GenerationRun
from evalhub.home.demo import do_start_demo_runs
from evalhub.jobs.kinds import results_url, run_of
from evalhub.jobs.models import Job, JobStatus
from evalhub.scoring.models import DiscernmentRun, GemRun
from tests.conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)  # debate batches write from their own thread


@pytest.fixture
def demo_runs(tmp_path):
    do_load_demo()
    return do_start_demo_runs(tmp_path / "tiny-model")  # the chunks run eagerly in tests, as each commits


def test_every_demo_run_succeeds_offline(demo_runs):
    assert demo_runs == [
        "debates",
        "a single judge",
        "a YESciEval pairwise rubric judge",
        "a blind-first adjudication by two simulated people",
        "a judge improved with few-shot examples, scored on held-out labels",
        "GEM with a tiny random model",
        "DHP",
        "YESciEval",
        "generation at four hint tiers",
        "a survey invitation",
    ]
    jobs = {job.kind: (job.status, job.message) for job in Job.objects.all()}
    assert all(status == JobStatus.SUCCEEDED for status, _ in jobs.values()), jobs
    assert AdjudicationItem.objects.exists(), "some debates wait for people"


def test_starting_the_demo_runs_again_starts_nothing(demo_runs, tmp_path):
    assert do_start_demo_runs(tmp_path / "tiny-model") == []


def test_the_demo_calculator_gets_more_right_with_each_hint_tier(demo_runs):
    correct: dict[int, list[float]] = {}
    for _model, tier, _prompt, value in accuracy_observations(GenerationRun.objects.get()):
        correct.setdefault(tier, []).append(value)
    assert {tier: sum(values) / len(values) for tier, values in correct.items()} == {0: 1 / 6, 1: 2 / 6, 2: 4 / 6, 3: 1}


@pytest.fixture
def admin_client(client, demo_runs):
    client.force_login(make_user("ada", "admin"))
    return client


def test_every_demo_page_shows_data_and_says_its_numbers_come_from_stand_ins(admin_client):
    gem = GemRun.objects.get()
    dhp, yescieval = DiscernmentRun.objects.get(family="dhp"), DiscernmentRun.objects.get(family="yescieval")
    generation = GenerationRun.objects.get()
    pages = {
        "/leaderboards/": ["Demo system: thorough", "GRE-bench", "heuristic:concise"],
        "/judges/": ["heuristic:concise", "heuristic:concise · yescieval:method_coverage"],
        f"/scoring/gem/{gem.job_id}/results/": ["Demo system: sloppy"],
        f"/scoring/discernment/{dhp.job_id}/results/": ["heuristic:detail"],
        f"/scoring/discernment/{yescieval.job_id}/results/": ["relevancy", "method_coverage"],
        f"/generation/{generation.job_id}/results/": ["Accuracy per hint tier"],
    }
    for url, expected in pages.items():
        page = admin_client.get(url).content.decode()
        assert "Workflow demo:" in page, url
        for text in expected:
            assert text in page, (url, text)


def test_a_page_on_a_real_provider_carries_no_workflow_demo_notice(admin_client):
    DebateRun.objects.update(agents=["openai:gpt-4o", "anthropic:claude-3-5-sonnet-latest"])
    JudgeRun.objects.update(judge="openai:gpt-4o-mini")
    run = DebateRun.objects.get(name=DEMO_RUN_NAME)
    assert "Workflow demo:" not in admin_client.get(f"/debates/runs/{run.pk}/").content.decode()
    assert "Workflow demo:" not in admin_client.get("/judges/").content.decode()


def test_after_the_demo_the_home_page_leaves_adjudication_as_the_next_step(admin_client):
    page = admin_client.get("/").content.decode()
    assert page.count('<span class="badge succeeded">done</span>') == 3, "import, debate and score"
    # An admin who does not adjudicate is told which role the step needs, not given a link to a 403.
    assert '<li class="">Adjudicate what the agents did not settle' in page
    assert "It needs the adjudicator role" in page
    assert 'href="/adjudicate/"' not in page
    admin_client.force_login(make_user("ada-adjudicates", "admin", "adjudicator"))
    page = admin_client.get("/").content.decode()
    assert '<li class=""><a href="/adjudicate/">Adjudicate' in page
    assert "waiting; keys 1, 2, 0 and s." in page


def test_the_demo_leaves_no_debate_run_a_draft_on_the_home_page(admin_client):
    page = admin_client.get("/").content.decode()
    assert 'data-status="succeeded"' in page
    assert 'data-status="draft"' not in page, "the judge versions' pairs are debated too"


def test_a_failed_scoring_run_or_a_draft_debate_run_marks_no_step_done(admin_client):
    Job.objects.update(status=JobStatus.FAILED)
    DebateRun.objects.update(job=None)
    page = admin_client.get("/").content.decode()
    assert page.count('<span class="badge succeeded">done</span>') == 1, "only the import"


def test_every_job_page_addresses_its_results_and_exports_by_the_job_id_it_shows(admin_client):
    jobs = list(Job.objects.all())
    kinds_whose_run_id_differs = {job.kind for job in jobs if run_of(job)[1].pk != job.pk}
    assert len(kinds_whose_run_id_differs) >= 3, "the demo's run ids and job ids must differ for this to test anything"
    for job in jobs:
        page = admin_client.get(f"/jobs/{job.pk}/").content.decode()
        url = results_url(job)
        assert f"/{job.pk}/results/" in url, job.kind
        assert url in page, job.kind
        results = admin_client.get(url)
        assert results.status_code == 200, job.kind
        for export in re.findall(r'href="([^"]+\.(?:csv|json|jsonl))"', results.content.decode()):
            assert f"/{job.pk}/" in export, (job.kind, export)
            assert admin_client.get(export).status_code == 200, export


def test_the_gre_bench_exports_name_the_job_the_pages_show(admin_client):
    gem = GemRun.objects.get()
    rows = admin_client.get("/leaderboards/gre_bench.json").json()
    assert rows
    assert {row["job"] for row in rows} == {gem.job_id}
    assert "gem_run" not in rows[0]


def test_favicon_ico_leads_to_the_sites_icon_without_a_login(client):
    """Browsers ask for /favicon.ico whatever the page says (a download, a plain-text answer): it was 404."""
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301
    assert answer["Location"].endswith("/favicon.svg")


def test_the_demo_shows_how_much_each_aid_moved_its_simulated_people(admin_client):
    run = DebateRun.objects.get(name=DEMO_BLIND_RUN_NAME)
    assert run.adjudication_flow == "blind_first"
    assert BlindVerdict.objects.filter(item__debate__run=run).count() >= 2
    page = admin_client.get(f"/adjudicate/runs/{run.pk}/agreement/").content.decode()
    assert "Workflow demo:" in page
    assert "How much the aid moved people" in page and "No verdict after a reveal yet" not in page
    assert AdjudicationItem.objects.filter(debate__run=run, status="resolved").exists()


@pytest.mark.parametrize("users_before", [0, 1, 4])
def test_the_demos_simulated_people_settle_the_same_pairs_wherever_the_databases_ids_start(users_before, tmp_path):
    """The pairs both simulated people gave the same blind verdict are resolved on it (an aid may bring
    others together too), and there are some, however many users (whose ids choose each person's aids)
    or items came before: CI's order of tests once left every item of the run tied."""
    for number in range(users_before):
        make_user(f"earlier-{number}", "adjudicator")
    do_load_demo()
    do_start_demo_runs(tmp_path / "tiny-model")
    items = AdjudicationItem.objects.filter(debate__run__name=DEMO_BLIND_RUN_NAME)
    agreed = set()
    for item in items:
        blind = set(item.blind_verdicts.values_list("verdict", flat=True))
        if len(blind) == 1:
            agreed.add(item.debate.prompt.external_id)
            assert (item.status, item.final_verdict) == ("resolved", blind.pop())
    assert agreed, "no pair settled"


def test_the_demo_improves_a_judge_and_shows_it_against_its_parent_on_held_out_labels(admin_client):
    from evalhub.alignment.demo import DEMO_JUDGE_NAME
    from evalhub.alignment.models import JudgeVersion

    second = JudgeVersion.objects.get(name=DEMO_JUDGE_NAME, number=2)
    assert second.judge.examples
    assert second.runs.get().judge_run.job.status == JobStatus.SUCCEEDED
    page = admin_client.get(f"/judge-versions/{DEMO_JUDGE_NAME}/").content.decode()
    assert "Workflow demo:" in page
    assert f"Against {DEMO_JUDGE_NAME} v1 on" in page
    assert "held-out pairs only" in page
    exported = admin_client.get(f"/judge-versions/{DEMO_JUDGE_NAME}.json").json()
    (comparison,) = exported["versions"][1]["against_parent"]
    agreement = comparison["differences"]["agreement"]
    assert agreement["after"] > agreement["before"]
    assert agreement["low"] is not None, "12 held-out prompts: an interval is drawn"


def test_the_readme_and_getting_started_count_the_demo_benchmarks_the_quickstart_makes(demo_runs):
    """The front door says how many demo benchmarks a first look has (it once said two of three)."""
    from pathlib import Path

    from evalhub.catalog.models import Benchmark

    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    made = words[Benchmark.objects.count()]
    for page in ("README.md", "docs/getting-started.md"):
        said = re.search(r"loads (\w+) small demo benchmarks", Path(page).read_text())
        assert said is not None and said[1] == made, page
