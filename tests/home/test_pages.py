"""Pages every visitor sees, whatever their role."""

from __future__ import annotations


def test_every_page_names_a_favicon_that_is_served(client):
    from django.contrib.staticfiles import finders

    body = client.get("/login/").content.decode()
    assert '<link rel="icon" type="image/svg+xml" href="/static/favicon.svg">' in body
    assert finders.find("favicon.svg") is not None
