"""Starting GEM, DHP and YESciEval runs: each is its kind's `JobRunner.create` (the run, its job and
its chunks in one transaction, queued once it commits)."""

from __future__ import annotations

from typing import Any

from evalhub.jobs.kinds import registered_runner
from evalhub.scoring.discernment.config import DISCERNMENT, DiscernmentConfig
from evalhub.scoring.gem.config import GEM, GemConfig
from evalhub.scoring.models import DEFAULT_CHUNK_PROMPTS, DiscernmentRun, GemRun


def do_create_gem_run(
    config: GemConfig,
    *,
    user: Any = None,
    chunk_prompts: int = DEFAULT_CHUNK_PROMPTS,
    enqueue: bool = True,
) -> GemRun:
    """Create the job, its run and its chunks; the chunks go to the `gpu` queue once committed
    (`enqueue=False` leaves them for the caller, e.g. `gem_score` running them in-process)."""
    run: GemRun = registered_runner(GEM).create(config, user, enqueue=enqueue, size=chunk_prompts)
    return run


# --- DHP and YESciEval judge runs ------------------------------------------------------


def do_create_discernment_run(
    config: DiscernmentConfig,
    *,
    user: Any = None,
    chunk_prompts: int = DEFAULT_CHUNK_PROMPTS,
    enqueue: bool = True,
) -> DiscernmentRun:
    """Create the job, its run and its chunks; progress counts one unit per original response."""
    run: DiscernmentRun = registered_runner(DISCERNMENT).create(config, user, enqueue=enqueue, size=chunk_prompts)
    return run
