from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evalhub.accounts.roles import ADMIN, EXPERT, role_required
from evalhub.core.files.tables import to_text
from evalhub.core.prompts.surveys import TEMPLATES
from evalhub.surveys.actions import (
    InvitationClosed,
    SurveyRejected,
    check_invitation,
    check_invite_days,
    do_answer,
    do_create_blank,
    do_create_from_template,
    do_edit,
    do_invitation_for_expert,
    do_invite,
    do_publish,
    do_revoke,
    do_submit,
    version_weights,
)
from evalhub.surveys.forms import editor_forms, submitted_entries
from evalhub.surveys.models import Invitation, Survey, SurveyVersion


@role_required(ADMIN, EXPERT)
def survey_list(request):
    surveys = Survey.objects.prefetch_related("versions")
    return render(request, "surveys/list.html", {"surveys": surveys, "templates": TEMPLATES})


@role_required(ADMIN)
@require_POST
def create_from_template(request):
    key = request.POST.get("template", "")
    if key == "blank":
        try:
            return redirect(do_create_blank(request.POST.get("title", ""), request.user))
        except SurveyRejected as error:
            messages.error(request, str(error))
            return redirect("survey_list")
    if key not in TEMPLATES:
        raise PermissionDenied
    return redirect(do_create_from_template(key, request.user))


@role_required(EXPERT, ADMIN)
@require_POST
def fill_as_expert(request, slug: str, number: int):
    version = get_object_or_404(SurveyVersion, survey__slug=slug, number=number, published=True)
    return redirect(do_invitation_for_expert(version, request.user))


@role_required(ADMIN)
def manage(request, slug: str):
    survey = get_object_or_404(Survey, slug=slug)
    if request.method == "POST" and request.POST.get("action") == "edit":
        return edit(request, survey)
    if request.method == "POST":
        try:
            act_on(request, survey)
        except SurveyRejected as error:
            messages.error(request, str(error))
        return redirect(survey)
    return render(request, "surveys/manage.html", manage_context(survey, *editor_forms(survey.latest)))


def edit(request, survey: Survey):
    """Save the editor; a refused edit comes back with every row as typed and the reason."""
    metrics, issues = editor_forms(survey.latest, request.POST)
    try:
        version = do_edit(
            survey,
            request.POST.get("instructions", ""),
            submitted_entries(metrics, "metrics"),
            submitted_entries(issues, "quality issues"),
        )
    except SurveyRejected as error:
        context = {**manage_context(survey, metrics, issues), "instructions": request.POST.get("instructions", "")}
        return render(request, "surveys/manage.html", {**context, "edit_error": str(error)}, status=400)
    messages.success(request, f"Saved as version {version.number} (draft): publish it when it reads right.")
    return redirect(survey)


def act_on(request, survey: Survey) -> None:
    latest, action = survey.latest, request.POST.get("action")
    if action == "publish" and latest is not None:
        do_publish(latest)
        messages.success(request, f"Version {latest.number} is published: invite experts below.")
    elif action == "invite" and latest is not None:
        days = check_invite_days(request.POST.get("days", ""))
        invitation = do_invite(
            latest, name=request.POST.get("name", ""), email=request.POST.get("email", ""), days=days
        )
        messages.success(request, f"Invitation link: {request.build_absolute_uri(invitation.get_absolute_url())}")
    elif action == "revoke":
        invitation = request.POST.get("invitation", "")
        if not invitation.isdecimal():  # a forged id is "no such invitation", not a server error
            raise Http404("No such invitation.")
        do_revoke(get_object_or_404(Invitation, pk=int(invitation), version__survey=survey))


def manage_context(survey: Survey, metrics, issues) -> dict:
    latest = survey.latest
    return {
        "survey": survey,
        "latest": latest,
        "versions": survey.versions.all(),
        "invitations": Invitation.objects.filter(version__survey=survey).select_related("version", "user"),
        "instructions": latest.instructions if latest else "",
        "metric_rows": metrics,
        "issue_rows": issues,
    }


@role_required(ADMIN)
def results(request, slug: str, number: int):
    version = get_object_or_404(SurveyVersion.objects.select_related("survey"), survey__slug=slug, number=number)
    weights, respondents = version_weights(version)
    metric_names = {m["key"]: m["name"] for m in version.metrics}
    rows = [
        {
            "issue": issue,
            "counts": weights.counts[issue["key"]],
            "weights": weights.weights[issue["key"]],
            "uniform": issue["key"] in weights.uniform,
        }
        for issue in version.issues
    ]
    context = {
        "version": version,
        "rows": rows,
        "respondents": respondents,
        "metric_names": metric_names,
        "uniform": weights.uniform,
    }
    return render(request, "surveys/results.html", context)


@role_required(ADMIN)
def export(request, slug: str, number: int, kind: str):
    version = get_object_or_404(SurveyVersion, survey__slug=slug, number=number)
    if kind == "weights.json":
        weights, _ = version_weights(version)
        response = HttpResponse(json.dumps(weights.weights, indent=2), content_type="application/json")
    elif kind == "answers.csv":
        rows = [
            {
                "invitation": invitation.pk,
                "expert": invitation.name
                or invitation.email
                or (invitation.user.get_username() if invitation.user else ""),
                "issue": answer.issue,
                "metric": answer.metric,
                "completed_at": invitation.completed_at.isoformat() if invitation.completed_at else "",
            }
            for invitation in version.invitations.prefetch_related("answers").select_related("user")
            for answer in invitation.answers.all()
        ]
        columns = ["invitation", "expert", "issue", "metric", "completed_at"]
        response = HttpResponse(to_text(rows, "csv", columns), content_type="text/csv; charset=utf-8")
    else:
        raise PermissionDenied
    response["Content-Disposition"] = f'attachment; filename="{slug}-v{number}-{kind}"'
    return response


@login_not_required
def fill(request, token: str):
    """The expert's page, reachable with the link alone: instructions, one issue per step, review, submit."""
    try:
        invitation = check_invitation(token)
    except InvitationClosed as closed:
        status = 404 if "not valid" in closed.reason else 410
        return render(request, "surveys/closed.html", {"reason": closed.reason}, status=status)
    if invitation.user_id and invitation.user_id != getattr(request.user, "id", None):
        return render(request, "surveys/closed.html", {"reason": "This link belongs to another account."}, status=403)
    version = invitation.version
    issues = version.issues
    answers = dict(invitation.answers.values_list("issue", "metric"))
    if invitation.completed_at is not None:
        return render(
            request,
            "surveys/submitted.html",
            {"invitation": invitation, "version": version, "answers": _named(version, answers)},
        )
    if request.method == "POST":
        try:
            if request.POST.get("action") == "submit":
                do_submit(invitation)
                return redirect(invitation)
            step = int(request.POST.get("step", "0"))
            if 1 <= step <= len(issues) and request.POST.get("metric"):
                do_answer(invitation, issues[step - 1]["key"], request.POST["metric"])
            target = step - 1 if request.POST.get("go") == "back" else step + 1
        except (SurveyRejected, ValueError) as error:
            message = str(error) if isinstance(error, SurveyRejected) else "That step does not exist."
            return render(
                request, "surveys/closed.html", {"reason": message, "back": invitation.get_absolute_url()}, status=400
            )
        return redirect(f"{invitation.get_absolute_url()}?step={max(0, min(target, len(issues) + 1))}")
    if "step" in request.GET and request.GET["step"].isdigit():
        step = min(int(request.GET["step"]), len(issues) + 1)
    else:  # resume where the expert stopped
        step = next((i + 1 for i, issue in enumerate(issues) if issue["key"] not in answers), len(issues) + 1)
        step = 0 if not answers else step
    context = {
        "invitation": invitation,
        "version": version,
        "step": step,
        "total": len(issues),
        "answered": sum(issue["key"] in answers for issue in issues),  # the bar once read full at "4 of 6"
        "answers": _named(version, answers),
    }
    if 1 <= step <= len(issues):
        context["issue"] = issues[step - 1]
        context["chosen"] = answers.get(issues[step - 1]["key"])
    context["complete"] = all(issue["key"] in answers for issue in issues)
    return render(request, "surveys/fill.html", context)


def _named(version: SurveyVersion, answers: dict[str, str]) -> list[tuple[dict, str]]:
    names = {m["key"]: m["name"] for m in version.metrics}
    return [(issue, names.get(answers.get(issue["key"], ""), "")) for issue in version.issues]
