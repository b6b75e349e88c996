"""Pages every visitor sees, whatever their role."""

from __future__ import annotations

import pytest

from tests.conftest import make_user


def test_every_page_names_a_favicon_that_is_served(client):
    from django.contrib.staticfiles import finders

    body = client.get("/login/").content.decode()
    assert '<link rel="icon" type="image/svg+xml" href="/static/favicon.svg">' in body
    assert finders.find("favicon.svg") is not None


@pytest.mark.django_db
def test_an_empty_instance_shows_the_first_hours_path_with_nothing_done(client):
    client.force_login(make_user("ada", "admin"))
    page = client.get("/").content.decode()
    for step in ("Import a benchmark", "Start a debate run", "Adjudicate", "Score without a gold standard", "Read"):
        assert step in page
    assert page.count('<span class="badge succeeded">done</span>') == 0


@pytest.mark.django_db
def test_the_first_hours_path_is_for_admins_whose_pages_it_links(client):
    client.force_login(make_user("vera", "viewer"))
    assert "What to do next" not in client.get("/").content.decode()
