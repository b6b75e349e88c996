"""Every page that shows model output renders it through the Markdown sanitiser (issue 22)."""

from __future__ import annotations

import pytest

from evalhub.adjudication.models import AdjudicationItem
from evalhub.catalog.models import Criterion, Judgment
from evalhub.debates import live
from evalhub.debates.models import DebateStatus, DebateTurn
from evalhub.generation.models import PromptHints
from tests.debates.conftest import demo, make_run  # noqa: F401  (fixtures)
from tests.hostile_markdown import HOSTILE, active_markup


@pytest.fixture
def hostile_debate(make_run):  # noqa: F811
    """A debate whose question, submissions, privileged information, turns and rationales are all hostile."""
    debate = make_run().debates.select_related("prompt", "response_a", "response_b").first()
    prompt = debate.prompt
    prompt.text = prompt.reference_answer = prompt.rating_guidelines = HOSTILE
    prompt.save()
    for response in (debate.response_a, debate.response_b):
        response.text = HOSTILE
        response.save()
    DebateTurn.objects.create(debate=debate, round=0, agent=0, agent_spec="heuristic", text=HOSTILE, verdict=1)
    Judgment.objects.create(
        criterion=Criterion.objects.get(slug="helpfulness"),
        judge_model=debate.response_b.model,
        response=debate.response_a,
        score=4,
        rationale=HOSTILE,
        source="single_judge",
    )
    Judgment.objects.create(
        criterion=Criterion.objects.get(slug="helpfulness"),
        judge_model=debate.response_b.model,
        response=debate.response_a,
        response_2=debate.response_b,
        verdict=1,
        rationale=HOSTILE,
        source="single_judge",
    )
    return debate


def assert_safe(page: str, at_least: int) -> None:
    boxes, problems = active_markup(page)
    assert boxes >= at_least, "the texts are rendered as Markdown boxes"
    assert problems == []


def test_the_debate_page_renders_hostile_markdown_with_nothing_that_can_act(login, admin_user, hostile_debate):
    page = login(admin_user).get(f"/debates/{hostile_debate.pk}/").content.decode()
    assert_safe(page, at_least=5)  # question, two submissions, two privileged fields, the turn
    assert "<h1>Heading</h1>" in page, "Markdown is rendered, not shown raw"


def test_the_prompt_page_renders_responses_and_rationales_safely(login, admin_user, hostile_debate):
    prompt = hostile_debate.prompt
    page = login(admin_user).get(f"/benchmarks/{prompt.benchmark.slug}/prompts/{prompt.pk}/").content.decode()
    assert_safe(page, at_least=7)  # prompt, two privileged fields, two responses, two rationales
    assert page.count("single_judge") == 2


def test_the_adjudication_screen_renders_hostile_markdown_safely(login, adjudicator, hostile_debate):
    hostile_debate.status = DebateStatus.UNRESOLVED
    hostile_debate.save()
    AdjudicationItem.objects.create(debate=hostile_debate, required_verdicts=1)
    client = login(adjudicator)
    page = client.get(client.post("/adjudicate/start/").url).content.decode()
    assert_safe(page, at_least=4)  # question, two submissions, the turn


def test_a_streamed_turn_renders_when_it_completes_and_its_words_stream_as_text(hostile_debate):
    completed = live.turn(hostile_debate.turns.get())
    assert_safe(completed, at_least=1)
    assert "<h1>Heading</h1>" in completed
    streamed = live.turn_in_flight(0, 0, HOSTILE)
    assert "<script>" not in streamed
    assert "<img" not in streamed
    assert "&lt;script&gt;" in streamed


def test_the_hints_pages_render_hints_and_references_safely(login, admin_user, hostile_debate):
    record = PromptHints.objects.create(
        prompt=hostile_debate.prompt, maker="reference-prefix", prompt_version="1", hints=[HOSTILE, HOSTILE]
    )
    client = login(admin_user)
    assert_safe(client.get(f"/generation/hints/{hostile_debate.prompt.benchmark.slug}/").content.decode(), at_least=2)
    assert_safe(client.get(f"/generation/hints/edit/{record.pk}/").content.decode(), at_least=2)


def test_the_raw_text_stays_one_click_away(login, admin_user, hostile_debate):
    page = login(admin_user).get(f"/debates/{hostile_debate.pk}/").content.decode()
    assert page.count('class="raw-switch"') == page.count('class="md"')
    assert "&lt;script&gt;alert(&#x27;script&#x27;)&lt;/script&gt;" in page, "the raw text, escaped"
