"""Maths in model output, typeset in a real browser under the content security policy: MathML from
KaTeX, the raw text one click away, and a formula that asks for a link linking nowhere."""

from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, Prompt
from tests.browser.test_content_security_policy import RECORD_VIOLATIONS
from tests.browser.test_login_and_browse import ARTIFACTS, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = (
    "Euler: $e^{i\\pi} + 1 = 0$, and as a display:\n\n"
    "$$\\int_0^1 x^2 \\, dx = \\frac{1}{3}$$\n\n"
    "In brackets \\(a^2 + b^2 = c^2\\). A formula asking for a link: $\\href{javascript:alert(1)}{click}$."
)


@pytest.fixture
def prompt_with_maths(db, settings):
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    make_user("ada", "viewer")
    benchmark = Benchmark.objects.create(slug="maths", name="maths")
    return Prompt.objects.create(benchmark=benchmark, external_id="m1", text=TEXT)


def test_formulas_are_typeset_as_mathml_under_the_policy_and_a_link_command_stays_text(
    asgi_server,
    prompt_with_maths,
    page,  # noqa: F811
):
    from playwright.sync_api import expect

    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(f"{asgi_server}/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{asgi_server}/")
    page.goto(f"{asgi_server}/benchmarks/maths/prompts/{prompt_with_maths.pk}/")
    typeset = page.locator(".md .math[data-typeset=mathml]")
    expect(typeset).to_have_count(4, timeout=10_000)
    assert page.locator(".md .math[data-typeset=mathml] math").count() == 4
    assert page.locator(".md .math math[display=block]").count() == 1, "the $$ formula is a display"
    # KaTeX's trust is off: the untrusted command shows as its own name in red, and nothing links anywhere.
    assert typeset.last.locator("mtext").text_content() == "\\href"
    assert page.locator(".md [href]").count() == 0
    assert "$e^{i\\pi} + 1 = 0$" in page.locator("pre.raw").first.text_content(), "the raw text is unchanged"
    assert page.evaluate("window.__csp") == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "maths.png"), full_page=True)
