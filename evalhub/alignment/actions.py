"""Writes to judge versions: a judge's first version, and each new version derived from a parent."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from evalhub.alignment.models import (
    FewShotRun,
    InstructionRewrite,
    JudgeVersion,
    Method,
    ReasonsRun,
    SettingsSearch,
    VersionRun,
)
from evalhub.alignment.training_set import NoSplit, training_split
from evalhub.catalog.models import LabelSplit
from evalhub.core.alignment.versions import JudgeDefinition, changes
from evalhub.core.files.slugs import is_slug
from evalhub.debates.actions import RunRejected, do_create_judge_run
from evalhub.debates.models import DebateRun, JudgeRun


class VersionRejected(Exception):
    pass


def check_definition(judge: JudgeDefinition) -> None:
    if not judge.spec.strip():
        raise VersionRejected("name the judge's provider spec.")
    if not 1 <= judge.samples <= 20:
        raise VersionRejected("samples per pair must be between 1 and 20.")
    if len(judge.instructions) > 20_000:
        raise VersionRejected("the instructions are longer than 20,000 characters.")


def do_create_judge(name: str, judge: JudgeDefinition, *, user: Any = None, note: str = "") -> JudgeVersion:
    """A judge's first version. Raises VersionRejected for a name in use or a bad definition."""
    if not is_slug(name) or len(name) > 100:
        raise VersionRejected("a judge's name is a slug (letters, digits, '-' and '_') of at most 100 characters.")
    check_definition(judge)
    try:
        with transaction.atomic():
            return JudgeVersion.objects.create(
                name=name, number=1, definition=judge.as_json(), note=note[:5000], created_by=_user(user)
            )
    except IntegrityError:
        raise VersionRejected(f"a judge named {name!r} exists; derive a new version of it instead.") from None


def do_derive_version(
    parent: JudgeVersion,
    judge: JudgeDefinition,
    *,
    method: str = Method.BY_HAND,
    split: LabelSplit | None = None,
    user: Any = None,
    note: str = "",
) -> JudgeVersion:
    """A new version of `parent`'s judge: the next number, naming its parent. A version that changes
    nothing is refused; one made from people's labels names the split whose train labels made it."""
    check_definition(judge)
    if not changes(parent.judge, judge):
        raise VersionRejected(f"nothing changed from {parent}.")
    if method != Method.BY_HAND and split is None:
        raise VersionRejected("a version made from people's labels names the split whose train labels made it.")
    for _ in range(3):  # two versions derived at once: the second takes the next number
        try:
            with transaction.atomic():
                latest = JudgeVersion.objects.filter(name=parent.name).aggregate(latest=Max("number"))["latest"]
                return JudgeVersion.objects.create(
                    name=parent.name,
                    number=(latest or 0) + 1,
                    parent=parent,
                    definition=judge.as_json(),
                    method=method,
                    split=split,
                    note=note[:5000],
                    created_by=_user(user),
                )
        except IntegrityError:
            continue
    raise VersionRejected(f"{parent.name} is being changed by someone else; try again.")


def do_run_version(
    version: JudgeVersion, reference: DebateRun, *, user: Any = None, enqueue: bool = True, again: bool = False
) -> JudgeRun:
    """Run a version on a debate run's pairs: a single-judge run made from its definition (its
    instructions and worked examples in the prompt), named "NAME vN" in the judge lab. A version that
    already ran on these pairs runs again only when asked `again` (a second run of the same definition
    costs as much as the first and, at temperature 0, says the same)."""
    earlier = VersionRun.objects.filter(version=version, judge_run__reference=reference).order_by("-pk").first()
    if earlier is not None and not again:
        raise VersionRejected(
            f"{version} already ran on {reference.name} (job {earlier.judge_run.job_id}): "
            "tick 'Run again' to run it a second time."
        )
    held_out_of = version.split if version.aligned else None
    try:
        with transaction.atomic():
            run = do_create_judge_run(
                user,
                enqueue=enqueue,
                reference=reference,
                label=str(version),
                held_out_of=held_out_of,
                **judge_run_fields(version.judge),
            )
            VersionRun.objects.create(version=version, judge_run=run)
    except RunRejected as rejected:
        raise VersionRejected(str(rejected)) from None
    return run


def judge_run_fields(judge: JudgeDefinition) -> dict[str, Any]:
    """A single-judge run's fields for a judge's definition (what a run of it asks)."""
    return {
        "judge": judge.spec,
        "criteria_variant": judge.criteria_variant,
        "privileged_sources": list(judge.privileged_sources),
        "samples": judge.samples,
        "scale": judge.scale,
        "temperature": judge.temperature,
        "instructions": judge.instructions,
        "examples": [asdict(example) for example in judge.examples],
    }


def _start(kind: str, user: Any, enqueue: bool, **config: Any) -> Any:
    """Start an improvement job of `kind` (found by name: actions import no runner)."""
    from evalhub.jobs.kinds import registered_runner

    runner = registered_runner(kind)
    try:
        return runner.create(runner.config(**config), user, enqueue=enqueue)
    except ValueError as rejected:
        raise VersionRejected(str(rejected)) from None


def do_start_few_shot(
    version: JudgeVersion,
    benchmark: str,
    criterion: str,
    *,
    examples: int = 4,
    seed: int = 0,
    user: Any = None,
    enqueue: bool = True,
) -> FewShotRun:
    """Start few-shot from disagreements (a job): the next version carries up to `examples` worked
    examples from `version`'s train disagreements on `benchmark` under `criterion`. Raises VersionRejected."""
    split = _split_of(benchmark)
    return _start(
        "few_shot", user, enqueue, version=version, split=split, criterion=criterion, examples=examples, seed=seed
    )


def do_search_settings(
    version: JudgeVersion,
    reference: DebateRun,
    candidates: list[dict[str, Any]],
    *,
    user: Any = None,
    enqueue: bool = True,
) -> SettingsSearch:
    """Start a choice of settings (a job): each candidate asked about the train pairs of `reference`'s
    benchmark split; the best becomes the next version. Raises VersionRejected."""
    split = _split_of(reference.benchmark.slug)
    return _start(
        "settings_search", user, enqueue, version=version, reference=reference, split=split, candidates=candidates
    )


def do_rewrite_instructions(
    version: JudgeVersion,
    reference: DebateRun,
    proposer: str,
    *,
    proposals: int = 4,
    seed: int = 0,
    user: Any = None,
    enqueue: bool = True,
) -> InstructionRewrite:
    """Start instruction rewriting (a job): `proposals` revised instructions asked of `proposer`, each
    scored on the train pairs of `reference`'s split benchmark beside the current ones; the best that
    beats them becomes the next version. Raises VersionRejected."""
    return _start(
        "instruction_rewrite",
        user,
        enqueue,
        version=version,
        reference=reference,
        split=_split_of(reference.benchmark.slug),
        proposer=proposer.strip(),
        proposals=proposals,
        seed=seed,
    )


def do_distil_reasons(
    version: JudgeVersion,
    reference: DebateRun,
    proposer: str,
    *,
    examples: int = 4,
    seed: int = 0,
    user: Any = None,
    enqueue: bool = True,
) -> ReasonsRun:
    """Start learning from people's reasons (a job): the reasons people wrote on `version`'s train
    disagreements distilled by `proposer` into guidelines, with up to `examples` explained disagreements
    as worked examples; the candidate becomes the next version if it agrees with people more on the train
    pairs. Raises VersionRejected."""
    return _start(
        "reasons",
        user,
        enqueue,
        version=version,
        reference=reference,
        split=_split_of(reference.benchmark.slug),
        proposer=proposer.strip(),
        examples=examples,
        seed=seed,
    )


def _split_of(benchmark: str) -> LabelSplit:
    try:
        return training_split(benchmark)
    except NoSplit as missing:
        raise VersionRejected(str(missing)) from None


def _user(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None
