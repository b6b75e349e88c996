"""Every page under the Content-Security-Policy, in a real browser on the real ASGI server: nothing is
refused, htmx still swaps, and the live socket still streams."""

from __future__ import annotations

import pytest

from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.jobs.actions import broadcast_job, do_create_job
from evalhub.jobs.models import Job
from evalhub.surveys.actions import do_create_from_template, do_invite, do_publish
from tests.browser.test_login_and_browse import ARTIFACTS, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium
from tests.site_pages import demo_pages
from tests.worker_threads import WorkerThreads

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Recorded in every page before its own scripts run: what the policy refused, and why.
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  e.violatedDirective + ' refused ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber));
"""


@pytest.fixture
def site(db, settings):
    """Every kind of page has something to show; made before the browser starts (Playwright's loop
    makes Django refuse ORM calls in this thread)."""
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    do_load_demo()
    person = make_user("ada", "admin", "adjudicator", "viewer", "expert", superuser=True)
    run = do_create_run(
        name="CSP run",
        benchmark=Benchmark.objects.get(slug="demo"),
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="demo-thorough"),
        model_b=LanguageModel.objects.get(slug="demo-terse"),
        agents=["heuristic"],
    )
    do_start_run(run)  # eager in tests: finished before the browser opens
    survey = do_create_from_template("dhp-translation")
    version = do_publish(survey.latest)
    invitation = do_invite(version, name="Expert")
    live_job = do_create_job("worker_check", "Live job", total=3)
    run.refresh_from_db()
    return {
        "run": run,
        "debate": run.debates.order_by("id").first(),
        "survey": survey,
        "invitation": invitation,
        "job": live_job,
        "prompt": Benchmark.objects.get(slug="demo").prompts.order_by("id").first(),
        "person": person,
    }


def in_another_thread(work) -> None:
    """ORM work while the browser runs (this thread belongs to Playwright's event loop)."""
    worker = WorkerThreads()
    worker.start(work)
    worker.join(30)


def test_every_page_works_under_the_policy_and_htmx_and_the_socket_still_do(asgi_server, site, page):  # noqa: F811
    page.add_init_script(RECORD_VIOLATIONS)
    refused_in_console: list[str] = []
    page.on("console", lambda m: "Content Security Policy" in m.text and refused_in_console.append(m.text))

    first = page.goto(f"{asgi_server}/login/")
    assert "script-src 'self'" in first.headers["content-security-policy"]
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{asgi_server}/")

    run, debate, survey, prompt, job = site["run"], site["debate"], site["survey"], site["prompt"], site["job"]
    pages = [
        *demo_pages(run, debate, prompt),
        "/surveys/",
        f"/surveys/manage/{survey.slug}/",
        f"/surveys/manage/{survey.slug}/v1/",
        f"/surveys/{site['invitation'].token}/?step=1",
        "/admin/",
        "/admin/axes/accessattempt/",
        "/profile/",
        "/api/v1/docs",  # the API's schema, rendered by django-ninja's Swagger UI from local files
    ]
    violations = {}
    for path in pages:
        response = page.goto(f"{asgi_server}{path}")
        assert response.status == 200, f"{path}: {response.status}"
        page.wait_for_load_state("networkidle")
        seen = page.evaluate("window.__csp")
        if seen:
            violations[path] = seen
    assert not violations, violations
    page.goto(f"{asgi_server}/api/v1/docs")  # Swagger UI drew the schema's operations, nothing refused
    page.wait_for_selector(".opblock-summary-path:has-text('/api/v1/jobs/{job_id}')", timeout=15_000)
    assert page.evaluate("window.__csp") == []

    # The live socket (connect-src) and an htmx swap (a POST that replaces the status) under the policy.
    page.goto(f"{asgi_server}/jobs/{job.pk}/")
    page.wait_for_selector("#job-status")
    page.wait_for_timeout(500)  # the socket connects after htmx initialises

    def progress() -> None:
        live = Job.objects.get(pk=job.pk)
        live.message = "streamed over the socket"
        live.save(update_fields=["message"])
        broadcast_job(live)

    in_another_thread(progress)
    page.wait_for_selector("#job-status:has-text('streamed over the socket')", timeout=10_000)
    page.on("dialog", lambda dialog: dialog.accept())  # hx-confirm
    page.click("#job-status button:has-text('Cancel')")
    page.wait_for_selector("#job-status:has-text('Cancelled')", timeout=10_000)
    assert page.evaluate("window.__csp") == []
    assert refused_in_console == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "job-under-csp.png"), full_page=True)
