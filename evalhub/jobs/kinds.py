"""The kinds of long work: a kind's name → its JobRunner class, imported on first use.

An app registers its kinds in its AppConfig.ready with `register(kind, "module:Class")`; the class
(a subclass of evalhub.jobs.runners.JobRunner) is imported only when a job of that kind is worked,
queued or shown, so a web process never loads what a GPU kind's module imports until it must.
Pause, resume, cancel, retry-failed, the stall check and the job page are then the same for every
kind, without the jobs app importing any other app.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from evalhub.core.registry import Registry

# A runner is an evalhub.jobs.runners.JobRunner subclass; typed loosely here because runners
# imports the chunk engine, which imports this registry.
Runner = type[Any]


def _says_its_kind(kind: str, runner: Any) -> str:
    said = getattr(runner, "kind", None)
    return "" if said == kind else f"says its kind is {said!r}, registered as {kind!r}"


# Each entry's configuration type is its runner's `config` (a RunConfig), read once it is loaded.
KINDS: Registry[Runner] = Registry("job kind", docs="extending/job-kinds.md", check=_says_its_kind)


def register(kind: str, runner: str) -> None:
    """`runner`: "package.module:ClassName" (or dotted), a JobRunner subclass whose `kind` is `kind`."""
    KINDS.add(kind, runner)


def unregister(kind: str) -> None:
    KINDS.remove(kind)


def runner_for(kind: str) -> Runner | None:
    """The kind's runner class, or None for a kind nobody registered (e.g. a worker check)."""
    return KINDS[kind] if kind in KINDS else None


def registered_runner(kind: str) -> Runner:
    """The kind's runner class (what an app's create action calls); LookupError for an unknown kind."""
    runner = runner_for(kind)
    if runner is None:
        raise LookupError(f"no app registered the job kind {kind!r}")
    return runner


def run_of(job: Any) -> tuple[Runner, Any] | tuple[None, None]:
    """(the job's runner class, its run), or (None, None) for a job without a registered kind or run."""
    runner = runner_for(job.kind)
    run = runner.run_of_job(job) if runner is not None else None
    return (runner, run) if runner is not None and run is not None else (None, None)


def configuration(job: Any) -> dict[str, Any]:
    """What the job page lists under "Configuration" (see JobRunner.configuration)."""
    runner = runner_for(job.kind)
    return runner.configuration(job) if runner is not None else job.params


def results_url(job: Any) -> str:
    """The url of the job's results partial, or "" for a job whose kind shows none."""
    runner, _run = run_of(job)
    return reverse(runner.results, args=[job.pk]) if runner is not None and runner.results else ""
