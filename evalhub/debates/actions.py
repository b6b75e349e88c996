"""Writes to debates, each followed by the live update that browsers watching it need."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Count, Q
from django.utils import timezone

from evalhub.catalog.models import Response
from evalhub.core.runs.usage import CallStats, Usage
from evalhub.core.scaleeval.debate import DebateOutcome, Turn, shown_swapped
from evalhub.debates import live
from evalhub.debates.config import DEBATE, JUDGE_RUN, DebateConfig, JudgeRunConfig
from evalhub.debates.evaluation_events import PairVerdict, pair_events
from evalhub.debates.models import (
    FINISHED_DEBATE,
    ONE_STAGE,
    Debate,
    DebateRun,
    DebateStatus,
    DebateTurn,
    JudgeRun,
)
from evalhub.debates.verdict_counts import do_recount_debates
from evalhub.jobs.actions import do_add_usage, do_set_progress
from evalhub.jobs.chunks import do_resume_job
from evalhub.jobs.kinds import registered_runner
from evalhub.jobs.models import FINISHED as FINISHED_JOB
from evalhub.jobs.models import Job
from evalhub.live import broadcast_html
from evalhub.system.bulk_insert import insert_new
from evalhub.system.model_access import queue_for
from evalhub.system.telemetry import emit_after_commit

# Debates per chunk (one Celery task): they run concurrently on the task's event loop, so a
# worker thread keeps many LLM calls in flight; several chunks spread a run over the workers.
DEBATES_PER_TASK = 25


class RunRejected(ValueError):
    pass


# What happens to debates the agents leave unresolved, in the transaction that settles them: the
# adjudication app registers its queue here (evalhub.adjudication.apps), so debates never imports it.
UNRESOLVED_HANDLERS: list[Callable[[list[Debate]], None]] = []


def on_unresolved(handler: Callable[[list[Debate]], None]) -> None:
    if handler not in UNRESOLVED_HANDLERS:
        UNRESOLVED_HANDLERS.append(handler)


# What follows a debate people settled, in the transaction that settles it: the dashboards app
# registers its self-stopping label requests here (evalhub.dashboards.apps), so debates never imports it.
SETTLED_HANDLERS: list[Callable[[Debate], None]] = []


def on_settled(handler: Callable[[Debate], None]) -> None:
    if handler not in SETTLED_HANDLERS:
        SETTLED_HANDLERS.append(handler)


def _counted(counts: dict[str, int]) -> dict[str, int]:
    counts["finished"] = sum(counts[s] for s in FINISHED_DEBATE) + counts[DebateStatus.FAILED]
    return counts


STATUS_COUNTS = {"total": Count("id"), **{s: Count("id", filter=Q(status=s)) for s in DebateStatus.values}}


def run_counts(run: DebateRun) -> dict[str, int]:
    return _counted(run.debates.aggregate(**STATUS_COUNTS))


RUN_PAGE_DEBATES = 100  # rows on a run's page


def run_debates_page(run: DebateRun, number: str | int | None) -> Page:
    """The debates a run's page lists (a page of RUN_PAGE_DEBATES, in id order)."""
    debates = run.debates.select_related("prompt").order_by("id")
    return Paginator(debates, RUN_PAGE_DEBATES).get_page(number)


LISTED_RUNS = 50  # runs on the debates page, newest first


def listed_runs() -> list[tuple[DebateRun, dict[str, int]]]:
    """The runs the debates page lists, each with its counts (two queries)."""
    runs = list(DebateRun.objects.select_related("benchmark", "criterion", "model_a", "model_b", "job")[:LISTED_RUNS])
    counts = runs_counts(runs)
    return [(run, counts[run.pk]) for run in runs]


def runs_counts(runs: Iterable[DebateRun]) -> dict[int, dict[str, int]]:
    """run_counts for many runs in one query (list pages)."""
    ids = [run.pk for run in runs]
    rows = Debate.objects.filter(run_id__in=ids).order_by().values("run_id").annotate(**STATUS_COUNTS)
    found = {row.pop("run_id"): _counted(row) for row in rows}
    empty = {"total": 0, **{s: 0 for s in DebateStatus.values}}
    return {i: found.get(i) or _counted(dict(empty)) for i in ids}


def failure_groups(run: DebateRun, examples: int = 5) -> list[tuple[str, int, list[int]]]:
    """The run's failed debates grouped by their cause: (cause, count, a few debate ids), most first."""
    groups: dict[str, list[int]] = {}
    for debate_id, error in run.debates.filter(status=DebateStatus.FAILED).order_by("id").values_list("id", "error"):
        groups.setdefault(error or "no cause recorded", []).append(debate_id)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [(cause, len(ids), ids[:examples]) for cause, ids in ordered]


def broadcast_run(run: DebateRun) -> None:
    # Rendered (with its count and job queries) at most once, and only if either group is watched.
    def render() -> str:
        fresh = DebateRun.objects.select_related("job").get(pk=run.pk)
        return live.run_summary(fresh, run_counts(fresh))

    html = functools.cache(render)
    broadcast_html(live.RUNS_GROUP, html)
    broadcast_html(live.run_group(run.pk), html)


def broadcast_debate(debate: Debate) -> None:
    """The debate's own page, and its row on the run page (a table row travels inside a template)."""
    broadcast_html(live.debate_group(debate.pk), lambda: live.outcome(debate))
    broadcast_html(live.run_group(debate.run_id), lambda: live.run_row(debate))


def do_settle_debate(debate: Debate, verdict: int) -> Debate:
    """People's final verdict on a debate the agents left unresolved (or an admin's override of it):
    the debate is adjudicated with that verdict, the boards' counts follow it, and its pages and its
    run's update. Call inside the transaction that settles the adjudication."""
    debate.status, debate.verdict, debate.winner = DebateStatus.ADJUDICATED, verdict, debate.winner_of(verdict)
    debate.save(update_fields=["status", "verdict", "winner", "updated_at"])
    do_recount_debates([debate.pk])
    broadcast_debate(debate)
    broadcast_run(debate.run)
    for handler in SETTLED_HANDLERS:
        handler(debate)
    return debate


def check_pairs(run: DebateRun) -> list[tuple[Any, Response, Response]]:
    """(prompt, response of A, response of B) for every prompt both models answered."""
    if run.model_a_id == run.model_b_id:
        raise RunRejected("model A and model B must differ.")
    responses = Response.objects.filter(
        prompt__benchmark=run.benchmark, parent__isnull=True, variant=run.variant, model__in=[run.model_a, run.model_b]
    ).select_related("prompt")
    if run.category:
        responses = responses.filter(prompt__category=run.category)
    by_prompt: dict[int, dict[int, Response]] = {}
    for response in responses:
        by_prompt.setdefault(response.prompt_id, {})[response.model_id] = response
    pairs = [
        (found[run.model_a_id].prompt, found[run.model_a_id], found[run.model_b_id])
        for _, found in sorted(by_prompt.items())
        if run.model_a_id in found and run.model_b_id in found
    ]
    if not pairs:
        which = f" with the variant {run.variant!r}" if run.variant else ""
        raise RunRejected(f"no prompt of this benchmark has responses{which} from both models.")
    return pairs


def _new_run(user: Any, fields: dict[str, Any]) -> DebateRun:
    return DebateRun(created_by=user if getattr(user, "is_authenticated", False) else None, **fields)


def do_create_debates(run: DebateRun, pairs: Iterable[tuple[Any, Response, Response]], **fields: Any) -> list[Debate]:
    """One debate per pair, each with its shown order drawn from the run's seed."""
    return Debate.objects.bulk_create(
        Debate(
            run=run,
            prompt=prompt,
            response_a=a,
            response_b=b,
            swapped=shown_swapped(run.seed, f"{prompt.pk}:{a.pk}:{b.pk}"),
            **fields,
        )
        for prompt, a, b in pairs
    )


def do_create_run(user: Any = None, **fields: Any) -> DebateRun:
    """A draft run (`DebateRunner.create` with start=False): the run and one debate per pair, each with
    its shown order drawn from the seed; `do_start_run` makes its job."""
    try:
        config = DebateConfig(**fields)
    except TypeError as error:  # a field the configuration does not have
        raise RunRejected(str(error)) from None
    run: DebateRun = registered_runner(DEBATE).create(config, user, start=False)
    return run


def do_create_labelling_run(user: Any = None, *, prompt_ids: Sequence[int], **fields: Any) -> DebateRun:
    """People's labels asked for directly: a run with no agents whose debates, one per chosen prompt's
    pair of model A and model B, go straight to the adjudication queue, where its reservation, blinding
    and number-of-verdicts rules apply. What people decide is an adjudicated debate like any other."""
    with transaction.atomic():
        run = _new_run(user, fields)
        run.agents, run.rounds = [], 0
        run.adjudication_flow, run.aids = ONE_STAGE, []  # no agents, no aid: every verdict is blind
        wanted = set(prompt_ids)
        pairs = [pair for pair in check_pairs(run) if pair[0].pk in wanted]
        if not pairs:
            raise RunRejected("none of the chosen prompts has responses from both models.")
        run.save()
        debates = do_create_debates(run, pairs, status=DebateStatus.UNRESOLVED)
        for handler in UNRESOLVED_HANDLERS:
            handler(debates)
        broadcast_run(run)
    return run


def do_start_run(run: DebateRun, *, enqueue: bool = True) -> DebateRun:
    """Start a draft as a job (chunks of debates), or resume a started one: every debate without a
    result runs (failed ones too, to retry). `enqueue=False` leaves the chunks to the caller (the
    run_debates command works them in-process, through the same code)."""
    with transaction.atomic():
        run = DebateRun.objects.select_for_update().get(pk=run.pk)
        if run.job is not None:  # the resume's job broadcast updates the run's pages too (on_change)
            if enqueue:
                do_resume_job(run.job, "Resumed: finished debates are kept.")
                count_progress(run)
            return run
        registered_runner(DEBATE).start(run, user=run.created_by, enqueue=enqueue)
    return run


def debate_queue(run: DebateRun) -> str:
    return queue_for(run.agents)


def do_claim_debates(debate_ids: Sequence[int]) -> list[Debate]:
    """Claim a chunk's debates for this worker, in one transaction: those without a result become
    running, and come back loaded for a runner (run, criterion, prompt, responses). Finished (or
    deleted) ones are left as they are. The chunk itself is this worker's (evalhub.jobs.chunks)."""
    with transaction.atomic():
        found = (
            Debate.objects.select_for_update()
            .select_related("run__criterion", "prompt", "response_a", "response_b")
            .filter(pk__in=debate_ids)
        )
        claimed = [d for d in found if d.status not in FINISHED_DEBATE]
        now = timezone.now()
        Debate.objects.filter(pk__in=[d.pk for d in claimed]).update(status=DebateStatus.RUNNING, updated_at=now)
        for debate in claimed:
            debate.status, debate.updated_at = DebateStatus.RUNNING, now
            broadcast_debate(debate)
        for run in {debate.run_id: debate.run for debate in claimed}.values():
            # Its running and pending counts, once per batch; a failed debate run again is no longer finished.
            count_progress(run)
    return claimed


TURN_KEY = ("debate_id", "round", "agent")
TURN_COLUMNS = (
    *TURN_KEY,
    "agent_spec",
    "text",
    "verdict",
    "reasked",
    "rejected_text",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "cached",
    "cost_usd",
)


def do_record_turns(entries: Sequence[tuple[int, Turn, str]]) -> list[DebateTurn]:
    """Store finished turns, each (debate id, turn, agent spec) once, in one transaction, and show
    them to watchers. A turn already stored (a retried task) is kept as it is and shown again.

    A batch runner hands over every turn that finished while its previous write ran (see
    GroupCommit), so a busy worker pays for one transaction per batch, not per turn."""
    created_at = timezone.now()
    rows = [
        DebateTurn(
            debate_id=debate_id,
            round=turn.round,
            agent=turn.agent,
            agent_spec=agent_spec[:300],
            text=turn.text,
            verdict=turn.verdict,
            reasked=turn.reasked,
            rejected_text=turn.rejected,
            input_tokens=turn.extra.input_tokens,
            output_tokens=turn.extra.output_tokens,
            latency_s=turn.extra.latency_s,
            cached=turn.extra.cached,
            cost_usd=turn.extra.cost_usd,
            created_at=created_at,
        )
        for debate_id, turn, agent_spec in entries
    ]
    keys = [(row.debate_id, row.round, row.agent) for row in rows]
    with transaction.atomic():
        # The rows inserted are the ones in hand (with their new keys): only a retried task's turns,
        # stored before, are read back.
        inserted = insert_new(
            DebateTurn,
            TURN_KEY,
            TURN_COLUMNS,
            [tuple(getattr(row, name) for name in TURN_COLUMNS) for row in rows],
            created_at=created_at,
        )
        stored: dict[tuple[int, int, int], DebateTurn] = {}
        for key, row in zip(keys, rows, strict=True):
            if key in inserted and key not in stored:
                row.pk, row._state.adding, row._state.db = inserted[key], False, DEFAULT_DB_ALIAS
                stored[key] = row
        if len(stored) < len(set(keys)):
            stored |= {
                (t.debate_id, t.round, t.agent): t
                for t in DebateTurn.objects.filter(
                    debate_id__in={k[0] for k in keys}, round__in={k[1] for k in keys}, agent__in={k[2] for k in keys}
                )
                if (t.debate_id, t.round, t.agent) not in stored
            }
        _add_turns_usage({key: turn.extra for key, (_, turn, _) in zip(keys, entries, strict=True) if key in inserted})
        for key in keys:
            turn = stored[key]
            broadcast_html(live.debate_group(turn.debate_id), partial(live.turn, turn))
        cache.delete_many([live.in_flight_key(*key) for key in keys])  # a page opened now shows it stored
        # (a turn a retried task stores again is sent again: these events are at least once)
        emit_after_commit(partial(pair_events, [_turn_verdict(stored[key]) for key in keys]))
    return [stored[key] for key in keys]


def _turn_verdict(turn: DebateTurn) -> PairVerdict:
    return PairVerdict(
        debate_id=turn.debate_id,
        verdict=turn.verdict,
        evaluator=turn.agent_spec,
        explanation=turn.text,
        evaluator_version="debate agent",
        extra={"round": turn.round, "agent": turn.agent},
    )


def do_finish_debates(entries: Sequence[tuple[Debate, DebateOutcome]]) -> list[Debate]:
    """Consensus, or no consensus: then the debate becomes an adjudication item, in the same
    transaction. Several debates finish in one transaction (a batch runner's group commit), with
    each run's usage added and its summary sent once for all of them."""
    with transaction.atomic():
        locked = Debate.objects.select_for_update().select_related("run", "prompt").in_bulk([d.pk for d, _ in entries])
        finished: list[Debate] = []
        runs: dict[int, DebateRun] = {}
        to_adjudicate: list[Debate] = []
        for entry, outcome in entries:
            debate = locked[entry.pk]
            debate.rounds_used = outcome.rounds_used
            if outcome.verdict is not None:
                debate.status, debate.verdict, debate.winner = (
                    DebateStatus.CONSENSUS,
                    outcome.verdict,
                    debate.winner_of(outcome.verdict),
                )
            else:
                debate.status = DebateStatus.UNRESOLVED
                to_adjudicate.append(debate)
            debate.error = ""
            debate.save()
            broadcast_debate(debate)
            runs[debate.run_id] = debate.run
            finished.append(debate)
        do_recount_debates([debate.pk for debate in finished])  # the boards' counts, in this transaction
        if to_adjudicate:
            for handler in UNRESOLVED_HANDLERS:
                handler(to_adjudicate)
        for run in runs.values():
            count_progress(run)  # the turns' usage was added as each was stored
    return finished


def count_progress(run: DebateRun) -> None:
    """One truth for every page: a debate is kept, and counted in its job's progress, as it settles
    (its people may adjudicate it at once), so the job, the run page, /debates/, /jobs/ and the
    adjudication queue agree on how many debates a paused or cancelled run kept. The run's pages hear
    of it once: through the job's broadcast when the count changed, else directly."""
    done = run_counts(run)["finished"]
    job_id = run.job_id
    if job_id is not None and (
        Job.objects.filter(pk=job_id).exclude(progress_done=done).exclude(status__in=FINISHED_JOB).exists()
    ):
        do_set_progress(Job(pk=job_id), done)
    else:
        broadcast_run(run)


def do_release_debate(debate: Debate, error: str = "") -> Debate:
    """Back to pending (paused run), or failed with its cause; either can run again later."""
    with transaction.atomic():
        debate = Debate.objects.select_for_update().select_related("run", "prompt").get(pk=debate.pk)
        if debate.status in FINISHED_DEBATE:
            return debate
        debate.status, debate.error = (DebateStatus.FAILED, error[:2000]) if error else (DebateStatus.PENDING, "")
        debate.save(update_fields=["status", "error", "updated_at"])
        live.forget_in_flight(debate.pk, debate.run.rounds, len(debate.run.agents))  # no card left "thinking…"
        broadcast_debate(debate)
        count_progress(debate.run)
    return debate


def _add_turns_usage(calls: dict[tuple[int, int, int], CallStats]) -> None:
    """Add newly stored turns' calls to their runs' jobs, as the turns are stored: a debate that fails
    later has paid for them too (they were added only when a debate settled, so a failed debate's calls
    were never counted), and a turn a retried task stores again is not counted twice."""
    if not calls:
        return
    jobs = dict(Debate.objects.filter(pk__in={key[0] for key in calls}).values_list("id", "run__job_id"))
    per_job: dict[int, list[Usage]] = {}
    for (debate_id, _, _), stats in calls.items():
        if jobs.get(debate_id) is not None:
            per_job.setdefault(jobs[debate_id], []).append(stats.usage())
    for job_id, usages in sorted(per_job.items()):
        do_add_usage(Job(pk=job_id), Usage.total(usages))


# --- single-judge runs (ScaleEval, Section 5) ------------------------------------------------

# Debates per chunk of a judge run: each chunk's verdicts are written in one transaction.
DEBATES_PER_JUDGE_CHUNK = 25


def do_create_judge_run(user: Any = None, *, enqueue: bool = True, **fields: Any) -> JudgeRun:
    """A single judge on a debate run's pairs, as a job (chunks of debates) on its judge's queue."""
    run: JudgeRun = registered_runner(JUDGE_RUN).create(JudgeRunConfig(**fields), user, enqueue=enqueue)
    return run


def judge_queue(run: JudgeRun) -> str:
    return queue_for([run.judge])
