"""Expert-weight surveys: versions, links, filling, tampering, weights."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from evalhub.core.dhp.expert_weights import check_weights
from evalhub.surveys.actions import do_create_from_template, do_edit, do_invite, do_publish, do_submit, version_weights
from evalhub.surveys.models import Invitation, SurveyAnswer, SurveyVersion
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(db):
    return do_publish(do_create_from_template("dhp-translation").latest)


def link(invitation) -> str:
    return f"/surveys/{invitation.token}/"


def answer_all(client: Client, invitation, choose=lambda index, metrics: metrics[0]["key"]) -> None:
    version = invitation.version
    for index, _ in enumerate(version.issues, start=1):
        response = client.post(
            link(invitation), {"step": index, "metric": choose(index, version.metrics), "go": "next"}
        )
        assert response.status_code == 302


def test_a_link_alone_lets_an_expert_answer_every_step_and_submit(version):
    invitation = do_invite(version, name="Dr. Who")
    client = Client()
    assert "Instructions" in client.get(link(invitation)).content.decode()
    first = client.get(f"{link(invitation)}?step=1").content.decode()
    assert "Quality issue 1 of 5" in first
    assert "Accuracy" in first
    assert "Fluency" in first
    answer_all(client, invitation)
    assert client.post(link(invitation), {"action": "submit"}).status_code == 302
    invitation.refresh_from_db()
    assert invitation.completed_at is not None
    assert invitation.answers.count() == 5


def test_closing_the_tab_and_coming_back_resumes_at_the_first_unanswered_step(version):
    invitation = do_invite(version)
    client = Client()
    for step in (1, 2):
        client.post(link(invitation), {"step": step, "metric": "fluency", "go": "next"})
    body = Client().get(link(invitation)).content.decode()
    assert "Quality issue 3 of 5" in body


def test_the_progress_bar_counts_the_answers_given_not_the_steps_there_are(version):
    invitation = do_invite(version)
    client = Client()
    for step in (1, 2):
        client.post(link(invitation), {"step": step, "metric": "fluency", "go": "next"})
    body = client.get(f"{link(invitation)}?step=4").content.decode()
    assert '<progress max="5" value="2">2 of 5 answered</progress>' in body
    assert "Quality issue 4 of 5" in body


def test_back_keeps_the_answer_and_shows_it_chosen(version):
    invitation = do_invite(version)
    client = Client()
    client.post(link(invitation), {"step": 1, "metric": "fluency", "go": "next"})
    response = client.post(link(invitation), {"step": 2, "go": "back"})
    assert response.url.endswith("?step=1")
    assert 'value="fluency" required checked' in client.get(response.url).content.decode()


@pytest.mark.parametrize(
    ("form", "status"),
    [({"step": 1, "metric": "taste"}, 400), ({"step": "x"}, 400), ({"step": 99, "metric": "fluency"}, 302)],
)
def test_tampered_values_are_refused_and_nothing_is_stored(version, form, status):
    invitation = do_invite(version)
    response = Client().post(link(invitation), {**form, "go": "next"})
    assert response.status_code == status
    assert not SurveyAnswer.objects.exists()


def test_another_issue_id_cannot_be_slipped_in(version):
    invitation = do_invite(version)
    from evalhub.surveys.actions import SurveyRejected, do_answer

    with pytest.raises(SurveyRejected):
        do_answer(invitation, "reordering", "fluency")  # a summarization issue, not in this survey


def test_submitting_twice_duplicates_nothing_and_shows_the_answers(version):
    invitation = do_invite(version)
    client = Client()
    answer_all(client, invitation)
    client.post(link(invitation), {"action": "submit"})
    client.post(link(invitation), {"action": "submit"})
    client.post(link(invitation), {"step": 1, "metric": "fluency", "go": "next"})  # too late to change
    assert SurveyAnswer.objects.count() == 5
    assert SurveyAnswer.objects.filter(metric="fluency").count() == 0
    assert "your answers are in" in client.get(link(invitation)).content.decode()
    assert do_submit(invitation) is False


@pytest.mark.parametrize(
    ("change", "status", "text"),
    [
        ({"revoked": True}, 410, "withdrawn"),
        ({"expires_at": timezone.now() - timedelta(minutes=1)}, 410, "expired"),
    ],
)
def test_revoked_and_expired_links_show_a_clear_page_and_no_data(version, change, status, text):
    invitation = do_invite(version)
    Invitation.objects.filter(pk=invitation.pk).update(**change)
    response = Client().get(link(invitation))
    body = response.content.decode()
    assert response.status_code == status
    assert text in body
    assert "Accuracy" not in body


def test_an_unknown_link_is_a_404_that_reveals_nothing():
    response = Client().get("/surveys/not-a-real-token/")
    assert response.status_code == 404
    assert "not valid" in response.content.decode()


def test_editing_a_published_version_creates_the_next_one_and_answers_stay_with_theirs(version):
    invitation = do_invite(version)
    answer_all(Client(), invitation)
    do_submit(invitation)
    metrics = [*version.metrics, {"key": "style", "name": "Style", "definition": "Reads well."}]
    new = do_edit(version.survey, "New text", metrics, version.issues)
    assert (new.number, new.published, SurveyVersion.objects.count()) == (2, False, 2)
    assert do_edit(version.survey, "Newer text", metrics, version.issues).pk == new.pk, "a draft is edited in place"
    version.refresh_from_db()
    assert version.metric_keys() == ["accuracy", "fluency"]
    assert invitation.answers.count() == 5
    with pytest.raises(ValueError, match="publish"):
        do_invite(new)
    do_publish(new)
    assert do_invite(new).version == new


def test_weights_are_the_shares_of_finished_experts_by_hand(version):
    picks = [  # three experts, per issue: accuracy or fluency
        ["accuracy", "fluency", "accuracy", "accuracy", "fluency"],
        ["accuracy", "fluency", "fluency", "accuracy", "fluency"],
        ["fluency", "fluency", "accuracy", "accuracy", "fluency"],
    ]
    for expert in picks:
        invitation = do_invite(version)
        answer_all(Client(), invitation, choose=lambda index, metrics, expert=expert: expert[index - 1])
        do_submit(invitation)
    unfinished = do_invite(version)
    Client().post(link(unfinished), {"step": 1, "metric": "fluency", "go": "next"})
    weights, respondents = version_weights(version)
    assert respondents == 3
    assert weights.weights["random_deletions"] == pytest.approx({"accuracy": 2 / 3, "fluency": 1 / 3})
    assert weights.weights["random_typos"] == {"accuracy": 0.0, "fluency": 1.0}
    assert weights.uniform == []


def test_the_weights_export_is_a_valid_weights_document(login, admin_user, version):
    invitation = do_invite(version)
    answer_all(Client(), invitation)
    do_submit(invitation)
    body = login(admin_user).get(f"/surveys/manage/{version.survey.slug}/v1/weights.json").content
    weights = check_weights(json.loads(body))
    assert set(weights) == set(version.issue_keys())
    assert weights["random_typos"] == {"accuracy": 1.0, "fluency": 0.0}
    csv_body = login(admin_user).get(f"/surveys/manage/{version.survey.slug}/v1/answers.csv").content.decode()
    assert csv_body.count("\n") == 6
    assert "random_typos,accuracy" in csv_body


def test_uniform_weights_are_said_when_nobody_answered(login, admin_user, version):
    body = login(admin_user).get(f"/surveys/manage/{version.survey.slug}/v1/").content.decode()
    assert "get uniform weights" in body
    assert "0 respondents" in body


def test_a_logged_in_expert_fills_one_set_per_version_and_cannot_see_results(login, version):
    expert = make_user("erin", "expert")
    client = login(expert)
    url = f"/surveys/fill/{version.survey.slug}/v1/"
    first, second = client.post(url), client.post(url)
    assert first.url == second.url
    assert Invitation.objects.filter(user=expert).count() == 1
    assert client.get(first.url).status_code == 200
    assert client.get(f"/surveys/manage/{version.survey.slug}/v1/").status_code == 403
    other = make_user("olly", "expert")
    assert login(other).get(first.url).status_code == 403, "an account's link is not for another account"


def test_viewers_and_adjudicators_cannot_open_surveys(login, viewer, adjudicator, version):
    assert login(viewer).get("/surveys/").status_code == 403
    assert login(adjudicator).post(f"/surveys/fill/{version.survey.slug}/v1/").status_code == 403


def editor_post(instructions: str, metrics: list[dict], issues: list[dict], **extra) -> dict:
    """What the editor's rows submit: a formset per list, with its management form."""
    data = {"action": "edit", "instructions": instructions}
    for prefix, rows in (("metrics", metrics), ("issues", issues)):
        data |= {f"{prefix}-TOTAL_FORMS": str(len(rows)), f"{prefix}-INITIAL_FORMS": "0"}
        for index, row in enumerate(rows):
            data |= {f"{prefix}-{index}-{field}": value for field, value in row.items()}
    return data | extra


METRICS = [
    {"key": "engagement", "name": "Engagement", "definition": "Keeps the user engaged."},
    {"key": "safety", "name": "Safety", "definition": "Says nothing harmful."},
]
ISSUES = [{"key": "rude_reply", "description": "The reply is rude."}]


def test_a_survey_made_from_a_template_starts_as_a_draft_that_nobody_can_be_invited_to(login, admin_user):
    client = login(admin_user)
    survey_url = client.post("/surveys/new/", {"template": "yescieval"}).url
    version = SurveyVersion.objects.get()
    assert not version.published
    page = client.post(survey_url, {"action": "invite", "name": "Ann"}, follow=True).content.decode()
    assert "publish this version before inviting experts" in page
    assert not Invitation.objects.exists()
    assert "Fill it in" not in client.get("/surveys/").content.decode(), "a draft is not offered to experts"
    client.post(survey_url, {"action": "publish"})
    assert SurveyVersion.objects.get().published


def test_an_admin_creates_publishes_invites_and_revokes_in_the_browser_forms(login, admin_user):
    client = login(admin_user)
    response = client.post("/surveys/new/", {"template": "yescieval"})
    assert response.status_code == 302
    client.post(response.url, {"action": "publish"})
    client.post(response.url, {"action": "invite", "name": "Ann", "days": "7"})
    invitation = Invitation.objects.get(name="Ann")
    assert invitation.expires_at > timezone.now() + timedelta(days=6)
    for forged in ("abc", "", "1e3", str(invitation.pk + 1000)):
        assert client.post(response.url, {"action": "revoke", "invitation": forged}).status_code == 404, forged
    client.post(response.url, {"action": "revoke", "invitation": invitation.pk})
    invitation.refresh_from_db()
    assert invitation.revoked


def test_the_editor_shows_one_row_per_metric_and_issue_not_json(login, admin_user):
    client = login(admin_user)
    survey_url = client.post("/surveys/new/", {"template": "dhp-translation"}).url
    page = client.get(survey_url).content.decode()
    version = SurveyVersion.objects.get()
    for index, metric in enumerate(version.metrics):
        assert f'name="metrics-{index}-key" value="{metric["key"]}"' in page
    for index, issue in enumerate(version.issues):
        assert f'name="issues-{index}-key" value="{issue["key"]}"' in page
    assert f'name="metrics-{len(version.metrics)}-key"' in page, "blank rows to add more"
    assert '"definition":' not in page


def test_an_admin_writes_a_survey_of_their_own_task_type_in_rows(login, admin_user):
    client = login(admin_user)
    response = client.post("/surveys/new/", {"template": "blank", "title": "Dialogue quality"})
    assert response.url == "/surveys/manage/dialogue-quality/"
    blank = {"key": "", "name": "", "definition": ""}
    client.post(response.url, editor_post("Pick one.", [*METRICS, blank], [*ISSUES, {"key": "", "description": ""}]))
    client.post(response.url, {"action": "publish"})
    version = SurveyVersion.objects.get(survey__slug="dialogue-quality")
    assert version.published
    assert version.metrics == METRICS, "blank rows are skipped"
    assert version.issue_keys() == ["rude_reply"]


def test_a_ticked_remove_drops_the_row_from_the_next_version(login, admin_user, version):
    client = login(admin_user)
    metrics = [*version.metrics, {"key": "style", "name": "Style", "definition": "Reads well."}]
    client.post(
        f"/surveys/manage/{version.survey.slug}/",
        editor_post("x", metrics, version.issues, **{"metrics-0-DELETE": "on"}),
    )
    new = SurveyVersion.objects.get(number=2)
    assert new.metric_keys() == [*version.metric_keys()[1:], "style"]


def test_a_refused_edit_keeps_every_row_as_typed_and_says_why(login, admin_user):
    client = login(admin_user)
    survey_url = client.post("/surveys/new/", {"template": "blank", "title": "Dialogue quality"}).url
    response = client.post(survey_url, editor_post("Pick one, carefully.", METRICS[:1], ISSUES))
    page = response.content.decode()
    assert response.status_code == 400
    assert "Nothing saved: a survey needs at least two metrics" in page
    assert 'value="engagement"' in page
    assert "Keeps the user engaged." in page
    assert "Pick one, carefully." in page
    assert not SurveyVersion.objects.exists()


@pytest.mark.parametrize(
    "forged",
    [
        {"metrics-TOTAL_FORMS": "1000000000"},
        {"metrics-TOTAL_FORMS": "many"},
        {"metrics-0-key": "k" * 5000},
    ],
    ids=["a billion rows", "a row count that is not a number", "a key longer than any field"],
)
def test_forged_editor_rows_are_a_form_error_not_a_server_error(login, admin_user, forged):
    client = login(admin_user)
    survey_url = client.post("/surveys/new/", {"template": "blank", "title": "Dialogue quality"}).url
    response = client.post(survey_url, editor_post("x", METRICS, ISSUES) | forged)
    assert response.status_code == 400
    assert "Nothing saved" in response.content.decode()
    assert not SurveyVersion.objects.exists()


def test_an_answer_arriving_just_after_the_submit_is_refused_and_changes_nothing(version):
    """The answer's request loaded the invitation before the submit committed (36 ms once sufficed)."""
    from evalhub.surveys.actions import SurveyRejected, do_answer

    invitation = do_invite(version)
    issues, metrics = version.issue_keys(), version.metric_keys()
    for issue in issues:
        do_answer(invitation, issue, metrics[0])
    loaded_by_the_late_request = Invitation.objects.get(pk=invitation.pk)
    assert do_submit(invitation)
    with pytest.raises(SurveyRejected, match="already submitted"):
        do_answer(loaded_by_the_late_request, issues[0], metrics[1])
    assert set(invitation.answers.values_list("metric", flat=True)) == {metrics[0]}


def test_an_answer_on_a_link_revoked_meanwhile_is_refused(version):
    from evalhub.surveys.actions import SurveyRejected, do_answer, do_revoke

    invitation = do_invite(version)
    loaded_by_the_late_request = Invitation.objects.get(pk=invitation.pk)
    do_revoke(invitation)
    with pytest.raises(SurveyRejected, match="withdrawn"):
        do_answer(loaded_by_the_late_request, version.issue_keys()[0], version.metric_keys()[0])
    assert not invitation.answers.exists()


def test_the_answers_export_writes_an_experts_formula_like_name_as_text(login, admin_user, version):
    invitation = do_invite(version, name='=HYPERLINK("http://evil.example")')
    answer_all(Client(), invitation)
    body = login(admin_user).get(f"/surveys/manage/{version.survey.slug}/v1/answers.csv").content.decode()
    assert "'=HYPERLINK" in body
    assert ",=HYPERLINK" not in body.replace('"', "")
    empty = do_invite(version)  # noqa: F841  (an expert with no answer adds no row)
    header = body.splitlines()[0]
    assert header == "invitation,expert,issue,metric,completed_at"


@pytest.mark.parametrize(
    ("days", "message"),
    [
        ("999999999", "between 1 and 3650 days"),
        ("-5", "between 1 and 3650 days"),
        ("soon", "a whole number of days"),
        ("1e9", "a whole number of days"),
    ],
)
def test_an_invitation_lifetime_out_of_range_is_a_form_error_not_a_server_error(login, admin_user, days, message):
    client = login(admin_user)
    survey_url = client.post("/surveys/new/", {"template": "yescieval"}).url
    response = client.post(survey_url, {"action": "invite", "name": "Ann", "days": days}, follow=True)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Invitation.objects.exists()


def test_the_survey_list_counts_one_issue_in_the_singular(login, admin_user):
    survey = do_create_from_template("yescieval")
    do_edit(survey, "Rate each.", METRICS[:2], ISSUES)
    page = login(admin_user).get("/surveys/").content.decode()
    assert "1 issue · 2 metrics<" in page, "it said 1 issues"
