from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from evalhub.accounts.roles import ADJUDICATOR, ADMIN, role_required
from evalhub.adjudication.actions import (
    MAX_EXTRA_VERDICTS,
    AdjudicationRejected,
    do_extend,
    do_override,
    do_reserve_next,
    do_skip,
    do_submit,
    do_submit_blind,
    is_blind_first,
    queue_counts,
    runs_with_open_items,
)
from evalhub.adjudication.models import AdjudicationItem, BlindVerdict, ItemStatus, Reservation
from evalhub.adjudication.reports import agreement_report, aid_effect_report, export_rows, export_verdict_rows
from evalhub.core.files.tables import to_text
from evalhub.core.scaleeval.aids import AID_NAMES, CRITIQUE, DEBATE, critic_of
from evalhub.core.statistics.agreement import unswap
from evalhub.debates.models import DebateRun
from evalhub.debates.visibility import turns_withheld, withheld_debates
from evalhub.llm.stand_ins import stand_ins
from evalhub.system.screen_errors import screen_error

# What the screen shows, read in one query (with the turns in a second): each submit renders the next
# item, and under load every query of that render is paid by every person waiting behind it.
SCREEN_RELATIONS = ("debate__run__criterion", "debate__prompt", "debate__response_a", "debate__response_b")


BLIND, REVEAL, ONE_STAGE = "blind", "reveal", "one_stage"  # the screen's steps


def _screen_context(reservation: Reservation) -> dict:
    item = AdjudicationItem.objects.select_related(*SCREEN_RELATIONS).get(pk=reservation.item_id)
    debate = item.debate
    first, second = debate.shown
    if reservation.swapped:  # each person sees their own random order
        first, second = second, first
    context = {
        "item": item,
        "debate": debate,
        "run": debate.run,
        "first": first,
        "second": second,
        "reservation": reservation,
        "privileged": debate.prompt.privileged_information(),
        "seconds_left": max(0, int((reservation.expires_at - timezone.now()).total_seconds())),
        "step": ONE_STAGE,
        "turns": [],
    }
    shown_turns = list(debate.turns.all())
    if is_blind_first(debate.run):
        # The aid is read only once the blind verdict is stored: before that it is in no response.
        blind = BlindVerdict.objects.filter(item=item, user=reservation.user_id).first()
        context["step"] = BLIND if blind is None else REVEAL
        if blind is None:
            return context
        context |= {"blind": unswap(blind.verdict) if reservation.swapped else blind.verdict, "aid": blind.aid}
        context["aid_name"] = AID_NAMES.get(blind.aid, blind.aid)
        if blind.aid == CRITIQUE:
            last = max((turn.round for turn in shown_turns), default=0)
            speakers = [turn.speaker for turn in shown_turns if turn.round == last]
            critic = critic_of(debate.run.seed, item.pk, speakers) if speakers else None
            shown_turns = [turn for turn in shown_turns if turn.round == last and turn.speaker == critic]
        elif blind.aid != DEBATE:
            shown_turns = []
    # Agents' verdicts, in the order this person sees (their texts keep the agents' numbering).
    context["turns"] = [(turn, unswap(turn.verdict) if reservation.swapped else turn.verdict) for turn in shown_turns]
    return context


# Session key: the run this person chose to prioritise on the queue page. Kept for the whole sitting, not
# the first item only: every next item (after a verdict, a skip, a settled item) comes from it while it has any.
PRIORITISED_RUN = "adjudication_prioritised_run"


def _next_or_done(request):
    reservation = do_reserve_next(request.user, request.session.get(PRIORITISED_RUN))
    if reservation is None:
        template = "adjudication/_done.html" if request.htmx else "adjudication/done.html"
        return render(request, template, {"counts": queue_counts(request.user)})
    if request.htmx:
        return render(request, "adjudication/_screen.html", _screen_context(reservation))
    return redirect("adjudication_screen", pk=reservation.item_id)


@role_required(ADJUDICATOR)
def queue(request):
    context = {
        "counts": queue_counts(request.user),
        "runs": runs_with_open_items(),
        "max_extra": MAX_EXTRA_VERDICTS,
        "prioritised": request.session.get(PRIORITISED_RUN),
    }
    return render(request, "adjudication/queue.html", context)


@role_required(ADJUDICATOR)
@require_POST
def start(request):
    run = request.POST.get("run", "")
    request.session[PRIORITISED_RUN] = int(run) if run.isdigit() else None  # "Oldest first" forgets a choice
    return _next_or_done(request)


@role_required(ADJUDICATOR)
def screen(request, pk: int):
    # Only the person holding the item sees it: others get a 404 that says nothing about it.
    reservation = Reservation.objects.filter(item_id=pk, user=request.user).first()
    if reservation is None:
        raise Http404("No reservation of yours for this item.")
    return render(request, "adjudication/screen.html", _screen_context(reservation))


@role_required(ADJUDICATOR)
@require_POST
def submit(request, pk: int):
    step = request.POST.get("step", ONE_STAGE)
    try:
        verdict = int(request.POST.get("verdict", ""))
        if step == BLIND:  # the blind verdict: the same item again, now with its aid
            do_submit_blind(request.user, pk, verdict)
            return _this_item(request, pk)
        raw_confidence = request.POST.get("confidence", "")
        confidence = int(raw_confidence) if raw_confidence else None
        do_submit(request.user, pk, verdict, confidence=confidence, notes=request.POST.get("notes", ""))
    except (ValueError, AdjudicationItem.DoesNotExist) as error:
        message = str(error) if isinstance(error, AdjudicationRejected) else "Choose 1, 2 or 0 (and confidence 1–3)."
        if request.htmx:
            return screen_error(message)
        messages.error(request, message)
        return redirect("adjudication_queue")
    return _next_or_done(request)


def _this_item(request, pk: int):
    reservation = Reservation.objects.filter(item_id=pk, user=request.user).first()
    if reservation is None:  # settled or taken meanwhile: on to the next
        return _next_or_done(request)
    if request.htmx:
        return render(request, "adjudication/_screen.html", _screen_context(reservation))
    return redirect("adjudication_screen", pk=pk)


@role_required(ADJUDICATOR)
@require_POST
def extend(request, pk: int):
    """The screen's heartbeat: 204 while the reservation lives, 410 once it has expired."""
    return HttpResponse(status=204 if do_extend(request.user, pk) else 410)


@role_required(ADJUDICATOR)
@require_POST
def skip(request, pk: int):
    reservation = Reservation.objects.filter(item_id=pk, user=request.user).first()
    if reservation is not None:
        do_skip(reservation)
    # The next item in place (the skipped one comes back only after every other).
    return _next_or_done(request)


@role_required(ADMIN)
def review(request, pk: int):
    item = get_object_or_404(AdjudicationItem.objects.select_related("debate__run", "debate__prompt"), pk=pk)
    if reason := turns_withheld(request.user, item.debate_id):  # an admin holding it judges it blind first
        return render(request, "debates/withheld.html", {"reason": reason}, status=403)
    if request.method == "POST":
        try:
            do_override(request.user, item.pk, int(request.POST.get("verdict", "-1")), request.POST.get("reason", ""))
        except (ValueError, AdjudicationRejected) as error:
            messages.error(request, str(error) if isinstance(error, AdjudicationRejected) else "Choose a verdict.")
        else:
            messages.success(request, "Override recorded.")
        return redirect("adjudication_review", pk=item.pk)
    context = {
        "item": item,
        "verdicts": item.adjudications.select_related("user"),
        "events": item.events.select_related("user"),
        "first": item.debate.shown[0],
        "second": item.debate.shown[1],
    }
    return render(request, "adjudication/review.html", context)


@role_required(ADMIN)
def overview(request):
    items = AdjudicationItem.objects.select_related("debate__run", "debate__prompt").order_by("-id")
    if request.GET.get("status") in ItemStatus.values:
        items = items.filter(status=request.GET["status"])
    items = items[:200]
    return render(request, "adjudication/overview.html", {"items": items})


@role_required(ADMIN, "viewer")
def agreement(request, run_pk: int):
    run = get_object_or_404(DebateRun, pk=run_pk)
    withheld = withheld_debates(request.user)
    context = {
        "run": run,
        "report": agreement_report(run, withheld),
        "blind_first": is_blind_first(run),
        "effects": [(effect, AID_NAMES.get(effect.aid, effect.aid)) for effect in aid_effect_report(run, withheld)],
        "stand_ins": stand_ins(run.agents),
        "withheld": _withheld_items(run, withheld),
    }
    return render(request, "adjudication/agreement.html", context)


@role_required(ADMIN, "viewer")
def export(request, run_pk: int, fmt: str):
    run = get_object_or_404(DebateRun, pk=run_pk)
    if fmt not in ("jsonl", "csv"):
        raise Http404
    withheld = withheld_debates(request.user)
    if fmt == "csv":
        body, content_type = to_text(list(export_verdict_rows(run, withheld)), "csv"), "text/csv"
    else:  # one line per item, its verdicts nested
        body, content_type = to_text(list(export_rows(run, withheld)), "jsonl"), "application/x-ndjson"
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="adjudications-run-{run.pk}.{fmt}"'
    # The file leaves out the items the reader holds before their blind verdict, and says how many.
    response[WITHHELD_HEADER] = str(_withheld_items(run, withheld))
    return response


WITHHELD_HEADER = "X-Evalhub-Withheld-Items"


def _withheld_items(run: DebateRun, withheld: frozenset[int]) -> int:
    return run.debates.filter(pk__in=withheld).count() if withheld else 0
