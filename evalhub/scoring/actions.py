"""Writes for GEM runs: create and enqueue, record a finished chunk, resume; every one broadcast."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction

from evalhub.catalog.models import Response, variant_matches, variant_q
from evalhub.core.gem.prompts import PROMPT_VERSION
from evalhub.jobs.actions import do_create_job
from evalhub.jobs.chunks import chosen_prompt_ids, do_plan_chunks
from evalhub.scoring.discernment.config import DISCERNMENT, DiscernmentConfig
from evalhub.scoring.gem.config import GEM, GemConfig
from evalhub.scoring.models import (
    PREPROCESSED_VARIANTS,
    DiscernmentRun,
    GemRun,
    GemVariant,
)

DEFAULT_CHUNK_PROMPTS = 10


def check_preprocessing(
    prompt_ids: Sequence[int], model_ids: set[int], variants: Sequence[str], preprocessing_lm: str, use_imported: bool
) -> str:
    """Why the chosen variants cannot produce a number, or "": GEM and GEM-S score C.1-preprocessed
    texts (GEM, Appendix C.1), made by a preprocessing LM or imported as `metadata.preprocessed`;
    GEM-S (ASSW) also needs that LM for the C.4 summary."""
    if preprocessing_lm:
        return ""
    needs = [v for v in variants if v in PREPROCESSED_VARIANTS]
    if GemVariant.ASSW in needs:
        return "GEM-S (ASSW) needs a preprocessing LM for its C.4 strengths-and-weaknesses summary: name one."
    if not needs:
        return ""
    responses = Response.objects.filter(prompt_id__in=list(prompt_ids), parent__isnull=True, model_id__in=model_ids)
    total = responses.count()
    imported = (
        responses.filter(metadata__has_key="preprocessed").exclude(metadata__preprocessed="").count()
        if use_imported
        else 0
    )
    if total and imported == total:
        return ""
    labels = ", ".join(dict(GemVariant.choices)[v] for v in needs)
    return (
        f"{labels} score preprocessed texts (GEM, Appendix C.1), and {total - imported:,} of {total:,} responses have "
        "no imported 'preprocessed' text while no preprocessing LM is set. Name a preprocessing LM (a chat provider), "
        "import the preprocessed texts, or choose GEM-raw."
    )


def planned_pairs(
    prompt_ids: Iterable[int],
    candidate_ids: set[int],
    reference_ids: set[int],
    variants: int,
    strategies: int,
    candidate_variant: str = "",
) -> Counter:
    """Pairs per prompt before anything fails: candidates (with their derived copies) × other references."""
    rows = Response.objects.filter(
        prompt_id__in=list(prompt_ids), parent__isnull=True, model_id__in=candidate_ids | reference_ids
    ).values_list("prompt_id", "model_id", "variant")
    per_prompt: dict[int, list[tuple[int, str]]] = {}
    for prompt_id, model_id, variant in rows:
        per_prompt.setdefault(prompt_id, []).append((model_id, variant))
    planned: Counter = Counter()
    for prompt_id, responses in per_prompt.items():
        references = sum(m in reference_ids for m, _ in responses)
        for model_id, variant in responses:
            others = references - (model_id in reference_ids)
            if model_id in candidate_ids and variant_matches(candidate_variant, variant):
                planned[prompt_id] += others * (1 + strategies)
            elif model_id in reference_ids and model_id not in candidate_ids:
                planned[prompt_id] += others  # the human baseline
        planned[prompt_id] *= variants
    return planned


def do_create_gem_run(
    config: GemConfig,
    *,
    user: Any = None,
    chunk_prompts: int = DEFAULT_CHUNK_PROMPTS,
    enqueue: bool = True,
) -> GemRun:
    """Create the job, its run and its chunks; the chunks go to the `gpu` queue once committed
    (`enqueue=False` leaves them for the caller, e.g. `gem_score` running them in-process)."""
    errors = config.errors()
    if errors:
        raise ValueError(" ".join(errors))
    ids = chosen_prompt_ids(config.benchmark, config.prompt_ids)
    candidate_ids, reference_ids = {m.pk for m in config.candidates}, {m.pk for m in config.references}
    missing = check_preprocessing(
        ids, candidate_ids | reference_ids, config.variants, config.preprocessing_lm, config.use_imported_preprocessing
    )
    if missing:
        raise ValueError(missing)
    planned = planned_pairs(
        ids,
        candidate_ids,
        reference_ids,
        len(config.variants),
        len(config.validation_strategies),
        config.candidate_variant,
    )
    with transaction.atomic():
        job = do_create_job(GEM, f"GEM on {config.benchmark.name}", user=user, total=sum(planned.values()))
        run = GemRun.objects.create(job=job, prompt_version=PROMPT_VERSION, **config.columns())
        config.store_relations(run)
        do_plan_chunks(job, ids, planned, chunk_prompts, enqueue=enqueue)
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
    errors = config.errors()
    if errors:
        raise ValueError(" ".join(errors))
    ids = list(config.benchmark.prompts.order_by("pk").values_list("pk", flat=True))
    units = Counter(
        Response.objects.filter(
            variant_q(config.target_variant), prompt_id__in=ids, parent__isnull=True, model__in=config.targets
        ).values_list("prompt_id", flat=True)
    )
    label = "DHP" if config.family == "dhp" else "YESciEval"
    with transaction.atomic():
        job = do_create_job(DISCERNMENT, f"{label} on {config.benchmark.name}", user=user, total=sum(units.values()))
        run = DiscernmentRun.objects.create(job=job, **config.columns())
        config.store_relations(run)
        do_plan_chunks(job, ids, units, chunk_prompts, enqueue=enqueue)
    return run
