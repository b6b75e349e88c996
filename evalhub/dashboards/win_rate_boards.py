"""The win-rate boards as pages show them: computed by a worker and kept with when they were computed,
so that no page request does work that grows with judges × judgments (issue 79).

A board (one judge's win rates against a baseline, with people's corrections) is computed from every
judge's comparisons with that baseline, read at once (`baseline_win_rates.judged_against`: a handful of
queries whatever the number of judges). A worker computes every judge's board of one benchmark,
criterion and baseline from one such read, at most one such refresh in flight per group. A page shows
the board kept for the data as it is now; else the last one kept, marked with its age, while a worker
computes the current one; a board nobody has computed yet is computed in the request only when it is
small (under BACKGROUND_AT comparisons), else the page says a worker is computing it. The judge's own
fit (length control) is also kept by the digest of its comparisons, so a person's label costs no new
fit. A file a researcher keeps holds the data as it is: `export_winrates` waits for the current board,
and the page's exports answer 503 with Retry-After while a worker computes a large one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import msgspec
from django.core.cache import cache
from django.utils import timezone

from evalhub.catalog.models import Judgment, LanguageModel
from evalhub.celery import task_named
from evalhub.core.statistics.corrected_win_rates import CorrectedWinRate
from evalhub.core.statistics.estimators import Correction
from evalhub.core.statistics.win_rates import Comparison, WinRate, win_rates
from evalhub.dashboards.baseline_win_rates import (
    Judged,
    Selection,
    choices,
    combines_judges,
    corrected_rows,
    first_choice,
    judged_against,
)
from evalhub.reads.caching import ask_worker_once, cached_forever, fingerprint
from evalhub.system.row_counts import row_count

# A board read from this many judged pairs (every judge's against the baseline) is computed by a worker,
# not in a page's request: on AlpacaEval's 8 models (6,434 pairs) a board takes about 0.3 CPU-s.
BACKGROUND_AT = 20_000
REFRESH_TASK = "dashboards.refresh_win_rate_boards"


@dataclass(frozen=True)
class KeptBoard:
    rows: list[dict[str, Any]]
    computed_at: datetime | None  # None: no board kept yet, a worker computes the first
    seconds: float  # what computing the group's boards took
    current: bool  # computed from the data as it is now
    asked: bool = False  # not current, and a worker computes the current one (False: the broker did not answer)

    @property
    def pending(self) -> bool:
        return self.computed_at is None


def board(selection: Selection, stamp: str | None = None, correction: Correction | None = None) -> list[dict[str, Any]]:
    """The selection's current board, computed here if the kept one is not (exports, commands, tests)."""
    return board_state(selection, correction, stamp, wait=True).rows


def board_state(
    selection: Selection,
    correction: Correction | None = None,
    stamp: str | None = None,
    *,
    wait: bool = False,
    pairs: int | None = None,
) -> KeptBoard:
    """The board a page shows and how fresh it is. `pairs`: how many pairs every judge of the selection's
    benchmark, criterion and baseline judged (`pairs_read`), where a board read from so few is computed
    in the request unless the kept one is current (None: never); `wait`: computed here unless the kept
    one is current."""
    correction = correction or Correction()
    stamp = stamp or fingerprint()
    kept = cache.get(_kept_key(selection, correction))
    if kept is not None and kept["stamp"] == stamp:
        return _shown(kept, current=True)
    if wait or (pairs is not None and pairs < BACKGROUND_AT):
        return _shown(compute_and_keep(selection, correction, stamp, every_judge=False)[selection.judge], current=True)
    asked = _ask_for_refresh(selection, correction)
    kept = cache.get(_kept_key(selection, correction))  # an eager worker (quickstart, tests) kept it already
    if kept is None:
        return KeptBoard([], None, 0.0, current=False, asked=asked)
    return _shown(kept, current=kept["stamp"] == stamp, asked=asked)


def pairs_read(choices: list[dict[str, Any]], selection: Selection) -> int:
    """At most the judged pairs a board of `selection` is computed from: every judge's on its benchmark
    under its criterion that judged its baseline (each judge's board reads the others'), counted from the
    choices, where a judge's pairs without the baseline count too: a bound that sends a board to a worker
    no later than it should go."""
    return sum(
        choice["pairs"]
        for choice in choices
        if (choice["benchmark"], choice["criterion"]) == (selection.benchmark, selection.criterion)
        and selection.baseline in choice["models"]
    )


def _shown(kept: dict[str, Any], *, current: bool, asked: bool = False) -> KeptBoard:
    return KeptBoard(kept["rows"], kept["computed_at"], kept["seconds"], current, asked and not current)


def _kept_key(selection: Selection, correction: Correction) -> str:
    return f"dashboards:win_rate_board:{selection.key}|{correction.key}"


def _group(selection: Selection, correction: Correction) -> str:
    """What one refresh computes: every judge's board of the selection's benchmark, criterion and baseline
    under evalhub's rule (a model's page shows them all); under another estimator, the one judge's."""
    judge = "*" if correction == Correction() else selection.judge
    return f"{selection.benchmark}|{selection.criterion}|{selection.baseline}|{judge}|{correction.key}"


def _ask_for_refresh(selection: Selection, correction: Correction) -> bool:
    """Whether a worker computes the selection's current boards now: asked here, or by an earlier request."""
    return ask_worker_once(
        f"dashboards:win_rate_refreshing:{_group(selection, correction)}",
        lambda: task_named(REFRESH_TASK).apply_async(args=[asdict(selection), asdict(correction)]),
        "the win-rate boards",
    )


CHOICES_TASK = "dashboards.refresh_win_rate_choices"
_CHOICES_KEY, _CHOICES_LOCK = "dashboards:win_rate_choices", "dashboards:win_rate_choices_refreshing"


def kept_choices(stamp: str | None = None) -> list[dict[str, Any]]:
    """Every judged (benchmark, judge, criterion) and its baseline (`baseline_win_rates.choices`): two
    grouped reads of every judgment (1.6 s at a million on PostgreSQL), so made by a worker once the first
    list is kept; the last list serves meanwhile (a judge whose first verdicts just landed appears when
    the worker is done)."""
    stamp = stamp or fingerprint()
    kept = cache.get(_CHOICES_KEY)
    if kept is None and row_count(Judgment).rows < CHOICES_IN_WORKER_AT:
        return refresh_choices(stamp)
    if kept is None:  # the first list at scale is a worker's too: none until it is done (`first_choices_pending`)
        _ask_for_choices()
        kept = cache.get(_CHOICES_KEY)  # an eager worker (quickstart, tests) made it already
        return kept["choices"] if kept is not None else []
    if kept["stamp"] != stamp:
        _ask_for_choices()
        kept = cache.get(_CHOICES_KEY) or kept  # an eager worker (quickstart, tests) made it already
    return kept["choices"]


# With this many judgments (PostgreSQL's estimate) the first list of judged choices is a worker's: its two
# grouped reads of every judgment took 36 s of a first win-rate page at ten million on SQLite, 9.9 on PostgreSQL.
CHOICES_IN_WORKER_AT = 200_000


def _ask_for_choices() -> bool:
    return ask_worker_once(_CHOICES_LOCK, lambda: task_named(CHOICES_TASK).apply_async(args=[]), "the judged choices")


def first_choices_pending() -> bool | None:
    """None once a list of judged choices is kept; before, whether a worker computes the first (asked now
    unless asked already; False: the broker did not answer). Pages, exports and the API say which."""
    if cache.get(_CHOICES_KEY) is not None:
        return None
    return _ask_for_choices()


def selection_of(
    choices: list[dict[str, Any]], wanted: dict[str, str]
) -> tuple[dict[str, Any] | None, Selection | None]:
    """The judged (benchmark, judge, criterion) `wanted` names (a blank key matches any; nothing named:
    the model judge with the most pairs), and its selection: the baseline wanted where that choice has
    it, else the choice's own. (None, None) where nothing judged matches."""
    asked = any(wanted.get(key) for key in ("benchmark", "judge", "criterion"))
    for choice in choices if asked or not choices else [first_choice(choices)]:
        if all(not wanted.get(key) or wanted[key] == choice[key] for key in ("benchmark", "judge", "criterion")):
            asked_baseline = wanted.get("baseline", "")
            chosen = asked_baseline if asked_baseline in choice["models"] else choice["baseline"]
            return choice, Selection(choice["benchmark"], choice["judge"], chosen, choice["criterion"])
    return None, None


def refresh_choices(stamp: str | None = None) -> list[dict[str, Any]]:
    """A worker's part (and the first page's): the current list, kept."""
    try:
        stamp = stamp or fingerprint()
        found = choices()
        cache.set(_CHOICES_KEY, {"choices": found, "stamp": stamp}, None)
        return found
    finally:
        cache.delete(_CHOICES_LOCK)


def refresh(selection: Selection, correction: Correction) -> None:
    """A worker's part: compute the selection's group of boards from the data as it is now (one judge's
    board under another estimator: unless the kept one already is; every judge's under evalhub's rule,
    whose kept boards an export may have made current for one judge and not the others)."""
    try:
        stamp = fingerprint()
        every_judge = correction == Correction()
        kept = cache.get(_kept_key(selection, correction))
        if every_judge or kept is None or kept["stamp"] != stamp:
            compute_and_keep(selection, correction, stamp, every_judge=every_judge)
    finally:
        cache.delete(f"dashboards:win_rate_refreshing:{_group(selection, correction)}")


def compute_and_keep(
    selection: Selection, correction: Correction, stamp: str, *, every_judge: bool
) -> dict[str, dict[str, Any]]:
    """judge → its kept board, for the selection's judge (or every judge against its baseline), computed
    from one read of every judge's comparisons. The fingerprint is taken before reading: verdicts landing
    meanwhile make the next page ask again."""
    started, clock = timezone.now(), time.perf_counter()
    judged = judged_against(selection, None if every_judge or combines_judges(correction) else selection.judge)
    # The asked judge's board is kept even where the read found none of its pairs (an empty board): a
    # board never kept would be asked for again by every page.
    judges = sorted(set(judged.judges) | {selection.judge}) if every_judge else [selection.judge]
    rows = {judge: _rows(dataclasses.replace(selection, judge=judge), judged, correction) for judge in judges}
    seconds = time.perf_counter() - clock
    out = {}
    for judge, board_rows in rows.items():
        kept = {"rows": board_rows, "computed_at": started, "seconds": seconds, "stamp": stamp}
        cache.set(_kept_key(dataclasses.replace(selection, judge=judge), correction), kept, None)
        out[judge] = kept
    return out


def _rows(selection: Selection, judged: Judged, correction: Correction) -> list[dict[str, Any]]:
    """The rows, best win rate first, each with `name` (the model's name as its file gave it) and
    `corrected` (the judge's win rate corrected by people's labels, and people's own)."""
    found = judged.judges.get(selection.judge, [])
    rows = judge_rows(found)
    corrected = corrected_rows(selection, correction, judged)
    names = dict(LanguageModel.objects.filter(slug__in=[r.model for r in rows]).values_list("slug", "display_name"))
    return [
        {
            "name": names.get(r.model, r.model),
            **asdict(r),
            "corrected": asdict(corrected.get(r.model, CorrectedWinRate(r.model, 0, note="no comparison"))),
        }
        for r in rows
    ]


def judge_rows(found: list[Comparison]) -> list[WinRate]:
    """The judge's own rows, length-controlled fit included, kept by what they are computed from: a label
    by people (or anything else the fingerprint follows) changes no judge's preference, so it costs no
    new fit (the fit was most of a board)."""
    return cached_forever(f"baseline_fit:{_digest(found)}", lambda: win_rates(found))


def _digest(found: list[Comparison]) -> str:
    # Encoded at once by msgspec: a repr and a hash update per comparison were a tenth of a worker's
    # win-rate refresh at ten million labels.
    rows = [
        (c.model, c.prompt, c.preference, c.model_length, c.baseline_length, c.difficulty)
        for c in sorted(found, key=_MODEL_AND_PROMPT)
    ]
    return hashlib.sha1(msgspec.msgpack.encode(rows), usedforsecurity=False).hexdigest()


_MODEL_AND_PROMPT = operator.attrgetter("model", "prompt")


def for_model(slug: str, stamp: str | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The model's row on every win-rate board it is on (not as the baseline), with its selection and its
    board's freshness: the same kept boards as the win-rate page, so a model's page shows the same
    numbers. Never computed here (a model is on as many boards as there are judges): a board no worker
    has kept yet is asked for and listed second, as being computed."""
    out, pending = [], []
    choices = kept_choices(stamp)
    if not choices and (asked := first_choices_pending()) is not None:
        return [], [{"selection": {"judge": "every judge"}, "asked": asked}]
    for choice in choices:
        if slug not in choice["models"] or slug == choice["baseline"]:
            continue
        selection = Selection(choice["benchmark"], choice["judge"], choice["baseline"], choice["criterion"])
        state = board_state(selection, stamp=stamp)
        if state.pending:
            pending.append({"selection": asdict(selection), "asked": state.asked})
            continue
        row = next((r for r in state.rows if r["model"] == slug), None)
        if row is not None:
            freshness = {"computed_at": state.computed_at, "current": state.current, "asked": state.asked}
            out.append({**row, "selection": asdict(selection), **freshness})
    return out, pending
