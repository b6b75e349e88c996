"""The rating screen: people's scores of single responses, blind, in each person's own order, resumed,
kept once per person and response, and read by the judge lab's pointwise page."""

from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response
from tests.conftest import make_user

pytestmark = pytest.mark.django_db
SCREEN = "/adjudicate/rate/summ/coherence/"


@pytest.fixture
def responses(db):
    benchmark = Benchmark.objects.create(slug="summ", name="Summaries")
    Criterion.objects.update_or_create(
        slug="coherence",
        defaults={
            "name": "Coherence",
            "definition": "How well it hangs together.",
            "levels": {str(i): f"level {i}" for i in range(1, 6)},
        },
    )
    made = []
    for n in range(3):
        prompt = Prompt.objects.create(benchmark=benchmark, external_id=f"d{n}", text=f"Summarise document {n}.")
        for slug in ("secret-model-a", "secret-model-b"):
            model, _ = LanguageModel.objects.get_or_create(slug=slug, defaults={"display_name": slug.upper()})
            made.append(Response.objects.create(prompt=prompt, model=model, text=f"Summary {n} by someone."))
    return made


def shown(page: str) -> str:
    """The handle the page's forms post for the response it shows."""
    return page.split('name="response" value="')[1].split('"')[0]


def response_of(client, handle: str) -> int:
    """The response a handle stands for, read from the person's session (the page never says)."""
    from evalhub.adjudication.rating import SHOWN

    return client.session[SHOWN][handle]


def test_a_person_rates_blind_each_response_once_and_resumes_where_they_stopped(client, login, adjudicator, responses):
    login(adjudicator)
    page = client.get(SCREEN).content.decode()
    assert "secret-model" not in page.lower() and "SECRET-MODEL" not in page, "blind: no model name"
    first = shown(page)
    page = client.post(f"{SCREEN}submit/", {"response": first, "score": 4}).content.decode()
    second = shown(page)
    assert second != first and "1 rated by you, 5 to go" in page
    second_id = response_of(client, second)
    again = client.post(f"{SCREEN}submit/", {"response": first, "score": 2})  # a second click changes, never adds
    assert again.status_code == 200
    rated = [(response_of(client, first), 2.0)]
    assert list(Judgment.objects.filter(judge_user=adjudicator).values_list("response_id", "score")) == rated
    client.logout()
    login(adjudicator)
    resumed = shown(client.get(SCREEN).content.decode())
    assert response_of(client, resumed) == second_id, "resumed at the first response not rated"


def test_two_people_walk_the_responses_in_different_orders(client, login, responses):
    orders = []
    for name in ("ana", "ben", "cyd", "dee"):
        login(make_user(name, "adjudicator"))
        orders.append(shown(client.get(SCREEN).content.decode()))
    assert len(set(orders)) > 1


def test_a_skipped_response_comes_back_after_the_others(client, login, adjudicator, responses):
    login(adjudicator)
    first = shown(client.get(SCREEN).content.decode())
    seen = [shown(client.post(f"{SCREEN}skip/", {"response": first}).content.decode())]
    for _ in range(5):
        seen.append(shown(client.post(f"{SCREEN}submit/", {"response": seen[-1], "score": 3}).content.decode()))
    assert first not in seen[:-1] and seen[-1] == first


@pytest.mark.parametrize(
    ("form", "reason"),
    [
        ({"score": 7}, "Choose a score from 1 to 5."),
        ({"score": ""}, "Choose a score."),
        ({"score": "four"}, "Choose a score."),
    ],
)
def test_a_score_off_the_scale_is_refused_and_nothing_is_stored(client, login, adjudicator, responses, form, reason):
    login(adjudicator)
    response = client.post(f"{SCREEN}submit/", {"response": shown(client.get(SCREEN).content.decode()), **form})
    assert response.status_code == 400 and reason in response.content.decode()
    assert not Judgment.objects.exists()


def test_a_forged_response_of_another_benchmark_is_refused(client, login, adjudicator, responses):
    other = Benchmark.objects.create(slug="other", name="Other")
    prompt = Prompt.objects.create(benchmark=other, external_id="x", text="x")
    foreign = Response.objects.create(prompt=prompt, model=responses[0].model, text="not yours to rate here")
    login(adjudicator)
    assert client.post(f"{SCREEN}submit/", {"response": foreign.pk, "score": 3}).status_code == 410
    assert client.post(f"{SCREEN}submit/", {"response": "1 OR 1=1", "score": 3}).status_code == 410
    assert not Judgment.objects.exists()


def test_only_people_with_the_adjudicator_role_rate(client, login, viewer, responses):
    assert client.get(SCREEN).status_code == 302  # anonymous: to the login page
    login(viewer)
    assert client.get(SCREEN).status_code == 403
    assert client.post(f"{SCREEN}submit/", {"response": responses[0].pk, "score": 3}).status_code == 403


def test_the_scores_are_people_on_the_pointwise_page(client, login, adjudicator, responses):
    from evalhub.judgelab.pointwise import stored_scores

    login(adjudicator)
    page = client.get(SCREEN).content.decode()
    for _ in responses:
        handle = shown(page)
        page = client.post(f"{SCREEN}submit/", {"response": handle, "score": 3 + response_of(client, handle) % 2})
        page = page.content.decode()
    scores = stored_scores("summ")
    assert len(scores) == len(responses)
    assert {(score.rater, score.person) for score in scores} == {("person:ada-adjudicator", True)}
    done = client.get(SCREEN).content.decode()
    assert "You have rated every response" in done


def test_a_criterion_without_levels_is_not_offered_and_its_screen_says_why(client, login, adjudicator, responses):
    """An import that named a criterion without a 1-to-n scale made it with no levels: offered, its screen
    had no score to choose and every submit was refused."""
    from evalhub.catalog.models import Criterion

    Criterion.objects.create(slug="accuracy", name="Accuracy", definition="Named by an import.", levels={})
    login(adjudicator)
    choose = client.get("/adjudicate/rate/").content.decode()
    assert 'value="accuracy"' not in choose
    assert "Not offered, for want of levels to rate on: <code>accuracy</code>" in choose
    assert client.get("/adjudicate/rate/", {"benchmark": "summ", "criterion": "accuracy"}).status_code == 400
    screen = client.get("/adjudicate/rate/summ/accuracy/")
    assert screen.status_code == 200
    assert "Accuracy has no levels to rate on" in screen.content.decode()


def test_the_screen_names_no_response_id_and_a_handle_is_the_persons_own(client, login, responses):
    """Ids follow an import's file order, which can give the model away (on one benchmark `id mod 3` was
    the model): the page carries an opaque handle instead, and another person's handle is refused."""
    ana, ben = make_user("ana", "adjudicator"), make_user("ben", "adjudicator")
    login(ana)
    page = client.get(SCREEN).content.decode()
    handle = shown(page)
    shown_id = response_of(client, handle)
    assert not handle.isdigit() and f'name="response" value="{handle}"' in page
    assert f'name="response" value="{shown_id}"' not in page and f'data-response="{shown_id}"' not in page
    assert client.get(SCREEN).content.decode().count(handle) == 3, "a reload shows it under the same handle"
    login(ben)
    refused = client.post(f"{SCREEN}submit/", {"response": handle, "score": 3})
    assert refused.status_code == 410 and "reload the page to go on" in refused.content.decode(), "said on the screen"
    assert client.post(f"{SCREEN}submit/", {"response": shown_id, "score": 3}).status_code == 410
    assert not Judgment.objects.exists()
