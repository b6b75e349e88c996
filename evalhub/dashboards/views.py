from __future__ import annotations

import json
import secrets

from django.contrib import messages
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from evalhub.accounts.roles import ADMIN, role_required
from evalhub.catalog.models import LanguageModel
from evalhub.core.statistics.estimators import choices as estimator_choices
from evalhub.dashboards import baseline_win_rates as baseline
from evalhub.dashboards import gre_bench, judges, label_requests, pairwise, win_rate_boards
from evalhub.dashboards.arena_battles import arena_records
from evalhub.dashboards.correction import correction_of, target_of, with_labels_needed
from evalhub.dashboards.pairwise_html import drawn_board, model_names, names_digest
from evalhub.dashboards.profiles import model_profile
from evalhub.dashboards.shapes import GroupRecord, ModelProfile, OpponentRecord
from evalhub.reads.battles import SOURCES, load_battles
from evalhub.reads.caching import cached, fingerprint
from evalhub.reads.model_sections import section_context
from evalhub.reads.provenance import stand_in_specs
from evalhub.system.downloads import download, not_ready
from evalhub.system.forms import form_reasons


def _filters(request, stamp: str):
    return pairwise.filters_of(request.GET, stamp)


def _bad_filters(form) -> HttpResponseBadRequest:
    return HttpResponseBadRequest(f"These filters cannot be used: {form_reasons(form)}", content_type="text/plain")


@role_required()
def leaderboards(request):
    stamp = fingerprint()
    form, filters = _filters(request, stamp)
    if filters is None:
        return render(request, "dashboards/leaderboards.html", {"form": form}, status=400)
    names = model_names()
    page_stamp = f"{stamp}-{names_digest(names)}"  # the other sections, drawn once per state of the data

    state = pairwise.board_state(filters, stamp)
    # The drawn board is kept per board and names (see pairwise_html); its freshness is said around it.
    board = state.board
    shown = "" if board is None else drawn_board(filters, board, state.stamp, names)
    section = {"filters": filters, "sources": SOURCES, "state": state, "board_html": mark_safe(shown)}  # noqa: S308
    section["options"] = cached("filter_options", pairwise.filter_options, stamp=stamp)
    pairwise_section = render_to_string("dashboards/_pairwise.html", section, request=request)
    if request.htmx and request.htmx.target == "pairwise":
        return HttpResponse(pairwise_section)
    gre_section = cached(
        "html:gre_bench",
        lambda: render_to_string(
            "dashboards/_gre_bench.html",
            {"gre_bench": gre_bench.with_names(gre_bench.gre_bench_board(stamp), names), "names": names},
        ),
        stamp=page_stamp,
    )
    judges_section = cached(
        "html:judges",
        lambda: render_to_string("dashboards/_judges.html", {"judges": judges.judges_board(stamp), "names": names}),
        stamp=page_stamp,
    )
    return render(
        request,
        "dashboards/leaderboards.html",
        {
            "form": form,
            "pairwise_html": pairwise_section,
            "gre_bench_html": mark_safe(gre_section),  # noqa: S308 (our own rendered template)
            "judges_html": mark_safe(judges_section),  # noqa: S308 (our own rendered template)
            "stand_ins": cached("stand_ins", stand_in_specs, stamp=stamp),  # the warm page reads no run
        },
    )


@role_required()
def leaderboard_export(request, table: str, fmt: str):
    stamp = fingerprint()
    form, filters = _filters(request, stamp)
    if filters is None:
        return _bad_filters(form)
    names = model_names()
    if table in ("ratings", "win_rates"):
        state = pairwise.board_state(filters, stamp)  # a file holds the data as it is now, or is asked again
        if not state.current or state.board is None:
            return _board_not_ready(state)
        rows = pairwise.export_rows(state.board, table, names)
    elif table == "gre_bench":
        rows = gre_bench.export_rows(gre_bench.gre_bench_board(stamp))
    else:
        rows = judges.export_rows(judges.judges_board(stamp))
    return download(rows, fmt, f"leaderboard-{table}")


def _baseline_selection(request) -> tuple[list[dict], dict | None, baseline.Selection | None]:
    """Every (benchmark, judge, criterion) judged, the one asked for (or, asked nothing, the model judge
    with the most pairs), and the selection with its baseline; None when nothing judged matches."""
    choices = win_rate_boards.kept_choices()
    wanted = {key: request.GET.get(key, "") for key in ("benchmark", "judge", "criterion", "baseline")}
    if request.GET.get("run", "").count("|") >= 2:  # the page's one select: benchmark|judge|criterion
        # Slugs hold no "|"; a judge's spec may (`openai-compatible:URL|model`): it is what lies between.
        wanted["benchmark"], rest = request.GET["run"].split("|", 1)
        wanted["judge"], wanted["criterion"] = rest.rsplit("|", 1)
    choice, selection = win_rate_boards.selection_of(choices, wanted)
    return choices, choice, selection


@role_required()
def baseline_win_rates(request):
    choices, choice, selection = _baseline_selection(request)
    correction, correction_error = correction_of(request.GET)
    state = None
    if selection is not None:
        pairs = win_rate_boards.pairs_read(choices, selection)
        state = win_rate_boards.board_state(selection, correction, pairs=pairs)
    rows = state.rows if state else []
    target, target_error = target_of(request.GET.get("target", ""))
    if target:
        rows = with_labels_needed(rows, target)
    return render(
        request,
        "dashboards/baseline_win_rates.html",
        {
            "choices": choices,
            "choices_pending": win_rate_boards.first_choices_pending() if not choices else None,
            "selection": selection,
            "models": choice["models"] if choice else [],
            "rows": rows,
            "board": state,
            "corrected": baseline.labelled_by_people(rows),
            "target": target,
            "target_error": target_error,
            "correction": correction,
            "correction_error": correction_error,
            "estimator_choices": estimator_choices(),
            "label_requests": label_requests.requests_for(selection) if selection else [],
            "names": model_names(),
            "query": request.GET.urlencode(),
        },
        status=200 if selection or not choices else 404,
    )


@role_required(ADMIN)
@require_POST
def ask_people(request):
    """Send N of a model's judged but unlabelled pairs to people's queue (the corrected columns use them)."""
    _, _, selection = _baseline_selection(request)
    model = request.POST.get("model", "")
    try:
        count = int(request.POST.get("count", ""))
    except ValueError:
        count = 0
    if selection is None or not 1 <= count <= 1000:
        return HttpResponseBadRequest(
            "Choose a judged benchmark and between 1 and 1,000 pairs.", content_type="text/plain"
        )
    try:
        run, sent = baseline.do_ask_people(
            request.user,
            selection,
            model,
            count,
            seed=secrets.randbelow(2**31),
            rule=request.POST.get("rule", "uniform"),
        )
    except ValueError as error:
        messages.error(request, str(error))
        return redirect(f"{reverse('baseline_win_rates')}?{request.GET.urlencode()}")
    how = baseline.RULES.get(request.POST.get("rule", "uniform"), "")
    messages.success(request, f"{sent} pair(s) of {model}, drawn {how}, sent to people's adjudication queue.")
    return redirect(run)


@role_required(ADMIN)
@require_POST
def ask_until(request):
    """Ask people for a model's pairs in batches until its anytime-valid corrected interval is within
    the target, or the budget is spent (evalhub.dashboards.label_requests)."""
    _, _, selection = _baseline_selection(request)
    try:
        target = float(request.POST.get("target", ""))
        budget, batch = int(request.POST.get("budget", "")), int(request.POST.get("batch", ""))
    except ValueError:
        target = budget = batch = 0
    back = f"{reverse('baseline_win_rates')}?{request.GET.urlencode()}"
    if selection is None:
        return HttpResponseBadRequest("Choose a judged benchmark.", content_type="text/plain")
    try:
        asked = label_requests.do_ask_until(
            request.user,
            selection,
            request.POST.get("model", ""),
            target=target,
            budget=budget,
            batch=batch,
            seed=secrets.randbelow(2**31),
        )
    except ValueError as error:
        messages.error(request, str(error))
        return redirect(back)
    messages.success(
        request,
        f"{asked.sent} pair(s) of {asked.model} sent to people's queue; more follow, a batch at a time, until "
        f"its interval is within ± {asked.target:g} points or {asked.budget} pairs are sent.",
    )
    return redirect(f"{back}#label-requests")


@role_required()
def baseline_win_rates_export(request, fmt: str):
    """The board as a file: the data as it is now, made in the request only when small (as the page's);
    else a worker makes it and the client is told to come back (503 with Retry-After), since a file
    must not hold an earlier board unmarked and a request must not compute judges × judgments."""
    choices, _, selection = _baseline_selection(request)
    if selection is None and (asked := win_rate_boards.first_choices_pending()) is not None:
        return not_ready("judged choices", "the list of judged choices", asked, None)
    if selection is None:
        return HttpResponseBadRequest("No judge has judged pairs matching these choices.", content_type="text/plain")
    pairs = win_rate_boards.pairs_read(choices, selection)
    state = win_rate_boards.board_state(selection, correction_of(request.GET)[0], pairs=pairs)
    if not state.current:
        return _board_not_ready(state)
    rows = state.rows
    return download(
        baseline.export_rows(rows, corrected=baseline.labelled_by_people(rows)), fmt, f"win-rates-{selection.baseline}"
    )


def _board_not_ready(state: win_rate_boards.KeptBoard | pairwise.KeptPairwise) -> HttpResponse:
    """What an export answers while a worker computes the board of the data as it is now."""
    return not_ready("board", "this board", state.asked, state.computed_at)


@role_required()
def battles_export(request, fmt: str = "jsonl"):
    """The board's battles under its filters, in LMArena's battle schema (JSON lines, or a dataset)."""
    stamp = fingerprint()
    form, filters = _filters(request, stamp)
    if filters is None:
        return _bad_filters(form)
    battles = [b for b in load_battles(stamp, filters.with_judges) if filters.keep(b)]
    if fmt == "hf":
        return download(list(arena_records(battles)), "hf", "battles", "the pairwise board's battles")
    body = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in arena_records(battles))
    response = HttpResponse(body, content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="battles.jsonl"'
    return response


@role_required()
def model_detail(request, slug: str):
    model = get_object_or_404(LanguageModel, slug=slug)
    stamp = fingerprint()
    form, filters = _filters(request, stamp)
    if filters is None:
        return render(request, "dashboards/model_detail.html", {"model": model, "form": form}, status=400)
    profile = model_profile(model.slug, filters, stamp)
    win_rates, win_rates_pending = win_rate_boards.for_model(model.slug, stamp)
    return render(
        request,
        "dashboards/model_detail.html",
        {
            "model": model,
            "form": form,
            "profile": profile,
            "win_rates": win_rates,
            "win_rates_pending": win_rates_pending,
            **section_context(model, stamp),
            "names": model_names(),
            "query": request.GET.urlencode(),
            "filters": filters,
            "sources": SOURCES,
            "options": cached("filter_options", pairwise.filter_options, stamp=stamp),
        },
    )


@role_required()
def model_export(request, slug: str, table: str, fmt: str):
    model = get_object_or_404(LanguageModel, slug=slug)
    stamp = fingerprint()
    form, filters = _filters(request, stamp)
    if filters is None:
        return _bad_filters(form)
    profile = model_profile(model.slug, filters, stamp)
    if table == "gre_bench":
        rows = [
            {"benchmark": e["benchmark"], "evaluation_lm": e["evaluation_lm"], "job": e["job"], **score}
            for e in profile["gre_bench"]
            for score in e["scores"]
        ]
    else:
        rows = [{"model": model.slug, **row} for row in _profile_table(profile, table)]
    return download(rows, fmt, f"{model.slug}-{table}")


def _profile_table(profile: ModelProfile, table: str) -> list[OpponentRecord] | list[GroupRecord]:
    """The page's record or breakdown table that an export names (the URL allows only these)."""
    if table == "record":
        return profile["record"]
    return profile["by_criterion"] if table == "by_criterion" else profile["by_scenario"]
