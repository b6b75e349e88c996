"""Who may see and do what: anonymous, outsider, viewer, adjudicator, admin."""

from __future__ import annotations

import pytest
from django.test import Client

from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Benchmark, Prompt
from evalhub.jobs.models import Job

pytestmark = pytest.mark.django_db

PAGES = ["/", "/benchmarks/", "/benchmarks/demo/", "/models/", "/jobs/", "/benchmarks/import/"]


@pytest.fixture
def demo(db):
    do_load_demo()


@pytest.mark.parametrize("url", [*PAGES, "/benchmarks/demo/export/responses.csv"])
def test_anonymous_visitors_are_sent_to_the_login_page(client, demo, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response.url.startswith("/login/?next=")


def test_the_health_check_needs_no_login(client, settings):
    answer = client.get("/healthz").json()
    assert answer == {"status": "ok", "database": "ok", "redis": "ok" if settings.REDIS_URL else "not used"}


def test_the_health_check_names_what_is_down(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "error", "database": "ok", "redis": "ConnectionError"}


@pytest.mark.parametrize("url", PAGES[1:])
def test_an_outsider_without_a_role_is_refused_everywhere(login, outsider, demo, url):
    assert login(outsider).get(url).status_code == 403


def test_an_outsider_sees_only_a_note_about_roles_on_the_home_page(login, outsider, demo):
    body = login(outsider).get("/").content.decode()
    assert "no role yet" in body
    assert "demo" not in body.lower().split("<main>")[1]


@pytest.mark.parametrize("url", PAGES[:-1])
def test_a_viewer_can_read_every_page(login, viewer, demo, url):
    assert login(viewer).get(url).status_code == 200


def test_a_viewer_cannot_open_or_post_the_import_page(login, viewer, demo):
    client = login(viewer)
    assert client.get("/benchmarks/import/").status_code == 403
    assert client.post("/benchmarks/import/", {"benchmark": "x"}).status_code == 403


def test_an_adjudicator_cannot_import_either(login, adjudicator):
    assert login(adjudicator).get("/benchmarks/import/").status_code == 403


def test_an_admin_can_open_the_import_page(login, admin_user):
    assert login(admin_user).get("/benchmarks/import/").status_code == 200


def test_a_post_without_a_csrf_token_is_rejected(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    assert client.post("/jobs/worker-check/").status_code == 403
    assert not Job.objects.exists()


def test_only_admins_start_a_worker_check(login, viewer, admin_user):
    assert login(viewer).post("/jobs/worker-check/").status_code == 403
    response = login(admin_user).post("/jobs/worker-check/")
    assert response.status_code == 302
    assert Job.objects.get().kind == "worker_check"


def test_logging_out_takes_a_post(login, viewer):
    client = login(viewer)
    assert client.get("/logout/").status_code == 405
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_model_output_is_escaped_on_the_prompt_page(login, viewer, demo):
    prompt = Prompt.objects.get(external_id="write-03")
    response = prompt.responses.first()
    response.text = "<script>alert('pwned')</script><b>bold</b>"
    response.save()
    body = login(viewer).get(f"/benchmarks/demo/prompts/{prompt.pk}/").content.decode()
    assert "<script>alert" not in body
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in body
    assert "<b>bold</b>" not in body


def test_the_prompt_page_shows_privileged_information_in_its_own_marked_section(login, viewer, demo):
    prompt = Prompt.objects.get(external_id="math-03")
    body = login(viewer).get(f"/benchmarks/demo/prompts/{prompt.pk}/").content.decode()
    section = body.split('class="card privileged"')[1].split("</details>")[0]
    assert "No: 221 = 13 × 17." in section
    assert "Try dividing by primes up to 14." in section


def test_the_benchmark_list_makes_the_same_number_of_queries_for_many_benchmarks(login, viewer, demo, queries_for):
    client = login(viewer)
    client.get("/benchmarks/")  # warm the session
    one = queries_for(client, "/benchmarks/")
    for index in range(20):
        Benchmark.objects.create(slug=f"b{index}", name=f"B{index}")
    assert queries_for(client, "/benchmarks/") == one <= 5  # session, user, roles, benchmarks, response counts
    assert client.get("/benchmarks/").content.decode().count("/benchmarks/b") >= 20


def test_a_missing_benchmark_is_a_404(login, viewer):
    assert login(viewer).get("/benchmarks/nope/").status_code == 404
