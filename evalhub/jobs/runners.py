"""One class per kind of long work, in the spirit of NetBox's JobRunner and lm-eval's "subclass and
register": a kind says what its run is, where its chunks go, how to work one chunk, what to write
when the chunk is recorded, how to word its progress and how to settle the job. The chunk engine
(evalhub.jobs.chunks: claim, heartbeat, pause and cancel between calls, exact resume, stall
recovery) and the job page are the same for every kind, and one Celery task (`jobs.chunk`) works
a chunk of any kind.

To add a kind (docs/extending/job-kinds.md):

    class WordCount(JobRunner[Job, dict[int, int]]):
        kind = "word_count"

        def work(self, chunk):            # outside any transaction: model calls, no writes
            ...
        def write(self, chunk, result):   # inside the chunk's transaction: exactly once
            ...
        def finish(self, job):            # when the last chunk is recorded
            return Settled(...)

        @classmethod
        def plan(cls, config, run, size):  # the job's title and units, in order
            return Plan("Count words", config.response_ids, size or 50)

    kinds.register("word_count", "myapp.jobs:WordCount")   # in the app's AppConfig.ready
    kinds.registered_runner("word_count").create(WordCountConfig(...), user)   # from the app's actions
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from django.db import transaction

from evalhub.celery import DEFAULT_QUEUE
from evalhub.jobs.chunks import Settled, do_complete_chunk, do_plan_chunks, run_chunk
from evalhub.jobs.config import RunConfig
from evalhub.jobs.kinds import runner_for
from evalhub.jobs.models import Job, JobChunk
from evalhub.llm.types import redact

RunT = TypeVar("RunT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class Plan:
    """A run's job before it is made: its title, its units in order, units per chunk (`size`), and
    each unit's weight in the job's progress (None: one each)."""

    title: str
    unit_ids: Sequence[int]
    size: int
    units: Mapping[int, int] | None = None
    total: int | None = None  # progress total, when it is not the units' sum


class JobRunner(Generic[RunT, ResultT]):
    """A kind of long work. A runner is made for one run, once to work a chunk and once to record it
    (each time from the database: the worker that records may not be the one that worked)."""

    kind: ClassVar[str]
    # The one-to-one accessor from Job to the kind's run; "" when the job is its own run (its
    # params hold the configuration).
    run_attr: ClassVar[str] = ""
    # The url name of the run's results partial on the job page (taking the job's id); "" for none.
    results: ClassVar[str] = ""
    # Add the calls the work made to the job's usage when the chunk is recorded; False for kinds
    # that add usage as they go.
    count_usage: ClassVar[bool] = True
    # The kind's configuration, stored once as the run's columns (see evalhub.jobs.config); None
    # for kinds whose job params hold it.
    config: ClassVar[type[RunConfig] | None] = None

    def __init__(self, run: RunT) -> None:
        self.run = run

    # -- the run and where its work goes --------------------------------------------------------

    @classmethod
    def run_of_job(cls, job: Job) -> RunT | None:
        if not cls.run_attr:
            return job  # type: ignore[return-value]  # the job is the run
        run: RunT | None = getattr(job, cls.run_attr, None)
        return run

    @classmethod
    def load(cls, job_id: int) -> RunT:
        """The run of a job, read fresh for a chunk (override to select what work() reads)."""
        run = cls.run_of_job(Job.objects.get(pk=job_id))
        if run is None:
            raise LookupError(f"job {job_id} has no {cls.kind} run")
        return run

    @classmethod
    def queue(cls, run: RunT) -> str:
        """The Celery queue its chunks go to (`gpu` for work on the worker's own GPU)."""
        return DEFAULT_QUEUE

    @classmethod
    def configuration(cls, job: Job) -> dict[str, Any]:
        """What the job page lists under "Configuration": the configuration read back from the run,
        or the job's params for a kind without one."""
        run = cls.run_of_job(job)
        if cls.config is None or run is None:
            return job.params
        if not cls.run_attr:  # the job is the run: its params hold the configuration's columns
            return cls.config(**job.params).shown()
        return cls.config.of_run(run).shown()

    @classmethod
    def on_change(cls, run: RunT) -> None:
        """Live updates of the run's own pages when its job changes (nothing by default)."""

    # -- one chunk -------------------------------------------------------------------------------

    def work(self, chunk: JobChunk) -> ResultT:
        """The chunk's work, outside any transaction: model calls, stored rewrites, nothing of the
        results yet. Calls stop between calls when the job is paused or cancelled."""
        raise NotImplementedError

    def write(self, chunk: JobChunk, result: ResultT) -> int:
        """Write the chunk's results, inside the transaction that marks it done (so exactly once);
        return how many of its units produced no result (a resume runs them again)."""
        return 0

    def first_error(self, result: ResultT) -> str:
        """The cause of the chunk's first failed unit, for the job page."""
        return ""

    def progress_done(self, job: Job) -> int | None:
        """The job's progress counted from the kind's own facts, or None to add the chunk's planned units."""
        return None

    def progress(self, job: Job) -> str:
        """The job's progress message after a chunk is recorded."""
        return f"{job.progress_done:,} of {job.progress_total:,} done"

    def finish(self, job: Job) -> Settled:
        """The job's message, summary and outcome, when its last chunk is recorded."""
        raise NotImplementedError

    # -- what the engine does with it: the same for every kind ----------------------------------

    def record(self, chunk: JobChunk, result: ResultT) -> bool:
        failed = 0

        def write(locked: JobChunk) -> None:
            nonlocal failed
            failed = self.write(locked, result)

        return do_complete_chunk(
            chunk,
            write,
            self.progress,
            self.finish,
            failed=lambda: failed,
            first_error=self.first_error(result),
            count_usage=self.count_usage,
            progress_done=self.progress_done,
        )

    # -- a run's start: the same for every kind ------------------------------------------------

    # What `create` raises for a configuration with errors (each kind's own "rejected" error).
    rejected: ClassVar[type[Exception]] = ValueError

    @classmethod
    def create(
        cls, config: Any, user: Any = None, *, start: bool = True, enqueue: bool = True, size: int | None = None
    ) -> Any:
        """The one way a run starts: check `config`, make the run (`make_run`) and, unless `start` is
        False (a draft, for a kind whose run may exist without a job), its job and chunks, in one
        transaction; the chunks are queued once it commits (`enqueue=False` leaves them to the caller,
        e.g. a command working them in-process). Returns the run (the job, for a kind whose job is its run)."""
        errors = config.problems()
        if errors:  # shown on forms and printed by commands: never a credential a spec carried
            raise cls.rejected(redact(" ".join(errors)))
        with transaction.atomic():
            if cls._run_needs_its_job():
                plan = cls.plan(config, None, size)
                job = cls._create_job(plan, config, user)
                run = cls.make_run(config, user, job=job)
                cls._create_chunks(job, run, plan, enqueue)
                return run if cls.run_attr else job
            run = cls.make_run(config, user)
            if start:
                cls.start(run, config, user=user, enqueue=enqueue, size=size)
        return run

    @classmethod
    def start(
        cls, run: Any, config: Any = None, *, user: Any = None, enqueue: bool = True, size: int | None = None
    ) -> Job:
        """Make the job and chunks of a run made without them (a draft). `config` defaults to the one
        read back from the run."""
        if config is None:
            config = cls.config.of_run(run) if cls.config is not None else None
        with transaction.atomic():
            plan = cls.plan(config, run, size)
            job = cls._create_job(plan, config, user)
            run.job = job
            run.save(update_fields=["job"])
            cls._create_chunks(job, run, plan, enqueue)
        return job

    @classmethod
    def make_run(cls, config: Any, user: Any, **columns: Any) -> Any:
        """Store the configuration as the run's columns and relations (None for a kind whose job is its
        run: its job's params keep the configuration). Override to add what the run makes with itself
        (a debate run's debates)."""
        if not cls.run_attr:
            return None
        model = cls._run_model()
        columns.update(config.columns(), **cls.more_columns(config))
        if any(field.name == "created_by" for field in model._meta.get_fields()):
            columns["created_by"] = user if getattr(user, "is_authenticated", False) else None
        run = model.objects.create(**columns)
        config.store_relations(run)
        return run

    @classmethod
    def more_columns(cls, config: Any) -> dict[str, Any]:
        """Columns the run stores beside its configuration (e.g. the prompt version it was made with)."""
        return {}

    @classmethod
    def plan(cls, config: Any, run: Any, size: int | None) -> Plan:
        """The job's title, its units in order and how many chunks hold them (`size`: the caller's
        chunk size, None for the kind's own). `run` is None for a run made with its job (its job
        column is required). Raise `rejected` when there is nothing to do."""
        raise NotImplementedError

    @classmethod
    def _run_model(cls) -> Any:
        return Job._meta.get_field(cls.run_attr).related_model

    @classmethod
    def _run_needs_its_job(cls) -> bool:
        return not cls.run_attr or not cls._run_model()._meta.get_field("job").null

    @classmethod
    def _create_job(cls, plan: Plan, config: Any, user: Any) -> Job:
        from evalhub.jobs.actions import do_create_job

        planned = len(plan.unit_ids) if plan.units is None else sum(plan.units.get(i, 0) for i in plan.unit_ids)
        return do_create_job(
            cls.kind,
            plan.title[:200],
            user=user,
            params=config.columns() if not cls.run_attr and config is not None else {},
            total=planned if plan.total is None else plan.total,
        )

    @classmethod
    def _create_chunks(cls, job: Job, run: Any, plan: Plan, enqueue: bool) -> None:
        do_plan_chunks(job, plan.unit_ids, plan.units, plan.size, enqueue=enqueue)
        if cls.run_attr:
            transaction.on_commit(lambda: cls.on_change(run))


def work_chunk(chunk_id: int) -> str:
    """Work one chunk of any kind and record it, or skip it (done, in hand elsewhere, its job
    stopped). What every worker runs, and what the run commands run in-process."""
    kind = JobChunk.objects.filter(pk=chunk_id).values_list("job__kind", flat=True).first()
    if kind is None:
        return "deleted"
    runner = runner_for(kind)
    if runner is None:
        raise LookupError(f"chunk {chunk_id} belongs to a job of kind {kind!r}, which no app registered")
    return run_chunk(
        chunk_id,
        lambda chunk: runner(runner.load(chunk.job_id)).work(chunk),
        lambda chunk, result: runner(runner.load(chunk.job_id)).record(chunk, result),
        count_usage=runner.count_usage,
    )
