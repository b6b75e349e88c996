"""The rating screen: a person scores responses one at a time under a criterion's Likert levels, as
G-Eval's and SummEval's annotators did — blind to the model, in an order drawn for them, resumed where
they stopped, by keyboard (1–5, Ctrl+Enter, s). The scores are people's scores of responses, read by
the judge lab's pointwise page beside imported ones."""

from __future__ import annotations

import hashlib
import secrets

from django import forms
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evalhub.accounts.roles import ADJUDICATOR, role_required
from evalhub.catalog.actions.ratings import RatingRejected, do_rate_response
from evalhub.catalog.models import Benchmark, Criterion, Judgment, Response
from evalhub.system.screen_errors import screen_error

SKIPPED = "rating_skipped"  # session key: {"bench|criterion": [response ids skipped, oldest first]}
# Session key: {handle: response id} of the responses this person was last shown, newest last. The forms
# post the handle, never the id: ids follow an import's file order, which can give the model away (on
# one benchmark `id mod 3` was the model), and another person's handles mean nothing here.
SHOWN = "rating_shown"
KEPT_HANDLES = 50  # enough for a few open tabs and the back button


def ratable_criteria():
    """Criteria a person can rate on: those with levels (one an import named without a 1..n scale has none)."""
    return Criterion.objects.exclude(levels={})


class RatingChoice(forms.Form):
    benchmark = forms.ModelChoiceField(Benchmark.objects.all(), to_field_name="slug")
    criterion = forms.ModelChoiceField(
        ratable_criteria(),
        to_field_name="slug",
        help_text="Criteria with levels to rate on; one an import named without a 1-to-n scale has none.",
    )


def _order_key(user_id: int, response_id: int) -> str:
    """Each person's own fixed order: no two people walk the responses in the same order, and one
    person meets them in the same order on every visit."""
    return hashlib.sha256(f"{user_id}:{response_id}".encode()).hexdigest()


def _progress(user, benchmark: Benchmark, criterion: Criterion) -> tuple[list[int], int]:
    """(the response ids still to rate, in this person's order; how many they rated)."""
    responses = Response.objects.filter(prompt__benchmark=benchmark, parent__isnull=True).values_list("pk", flat=True)
    rated = set(
        Judgment.objects.filter(
            judge_user=user, criterion=criterion, response_2__isnull=True, response__prompt__benchmark=benchmark
        ).values_list("response_id", flat=True)
    )
    todo = sorted((pk for pk in responses if pk not in rated), key=lambda pk: _order_key(user.pk, pk))
    return todo, len(rated)


def _handle(request, response_id: int) -> str:
    """This person's opaque handle for a response: the same one while it is kept (a reload shows the
    same response under the same handle), random otherwise."""
    shown: dict[str, int] = request.session.get(SHOWN, {})
    handle = next((key for key, pk in shown.items() if pk == response_id), None) or secrets.token_urlsafe(12)
    shown.pop(handle, None)
    shown[handle] = response_id
    request.session[SHOWN] = dict(list(shown.items())[-KEPT_HANDLES:])
    return handle


def _shown_response_id(request) -> int | None:
    """The response a form's handle names, if this person was shown it."""
    return request.session.get(SHOWN, {}).get(request.POST.get("response", ""))


def _screen(request, benchmark: Benchmark, criterion: Criterion, status: int = 200):
    todo, rated = _progress(request.user, benchmark, criterion)
    skipped = request.session.get(SKIPPED, {}).get(f"{benchmark.slug}|{criterion.slug}", [])
    todo = [pk for pk in todo if pk not in skipped] + [pk for pk in skipped if pk in set(todo)]  # skipped last
    response = (
        Response.objects.select_related("prompt").get(pk=todo[0]) if todo else None
    )  # the model is never read: the screen is blind
    context = {
        "benchmark": benchmark,
        "criterion": criterion,
        "levels": sorted(((int(score), text) for score, text in criterion.levels.items())),
        "response": response,
        "handle": _handle(request, response.pk) if response else "",
        "privileged": response.prompt.privileged_information() if response else {},
        "rated": rated,
        "left": len(todo),
    }
    template = "adjudication/_rate_screen.html" if request.htmx else "adjudication/rate.html"
    return render(request, template, context, status=status)


@role_required(ADJUDICATOR)
def rate_choose(request):
    # A link naming a benchmark (an import's summary, the pointwise page) opens with it chosen; the form
    # is checked once both choices are made, so half a choice is no error.
    chosen_both = all(request.GET.get(name) for name in RatingChoice.base_fields)
    form = RatingChoice(request.GET) if chosen_both else RatingChoice(initial=request.GET.dict())
    if chosen_both and form.is_valid():
        chosen = form.cleaned_data
        return redirect("rate_screen", benchmark=chosen["benchmark"].slug, criterion=chosen["criterion"].slug)
    context = {"form": form, "without_levels": Criterion.objects.filter(levels={}).order_by("slug")}
    return render(request, "adjudication/rate_choose.html", context, status=400 if form.errors else 200)


@role_required(ADJUDICATOR)
def rate_screen(request, benchmark: str, criterion: str):
    return _screen(request, get_object_or_404(Benchmark, slug=benchmark), get_object_or_404(Criterion, slug=criterion))


@role_required(ADJUDICATOR)
@require_POST
def rate_submit(request, benchmark: str, criterion: str):
    bench, crit = get_object_or_404(Benchmark, slug=benchmark), get_object_or_404(Criterion, slug=criterion)
    shown = _shown_response_id(request)
    if shown is None:  # another person's handle, an id, or a tab older than the last 50 responses shown
        return screen_error("This response is no longer on your screen's list: reload the page to go on.", 410)
    # A handle shown on another benchmark's screen names none of this one's responses.
    response = get_object_or_404(Response, pk=shown, prompt__benchmark=bench)
    try:
        do_rate_response(request.user, response, crit, int(request.POST.get("score", "")))
    except (ValueError, RatingRejected) as error:
        message = str(error) if isinstance(error, RatingRejected) else "Choose a score."
        return screen_error(message)
    return _screen(request, bench, crit)


@role_required(ADJUDICATOR)
@require_POST
def rate_skip(request, benchmark: str, criterion: str):
    bench, crit = get_object_or_404(Benchmark, slug=benchmark), get_object_or_404(Criterion, slug=criterion)
    skipped = request.session.get(SKIPPED, {})
    key = f"{bench.slug}|{crit.slug}"
    if (response := _shown_response_id(request)) is not None:
        skipped[key] = [pk for pk in skipped.get(key, []) if pk != response] + [response]
        request.session[SKIPPED] = skipped
    return _screen(request, bench, crit)
