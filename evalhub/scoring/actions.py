"""Writes for GEM runs: create and enqueue, record a finished chunk, resume; every one broadcast."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction

from evalhub.catalog.models import Benchmark, LanguageModel, Response, variant_matches, variant_q
from evalhub.celery import GPU_QUEUE
from evalhub.core.gem.prompts import PROMPT_VERSION
from evalhub.core.gem.validation import STRATEGIES
from evalhub.jobs.actions import do_create_job
from evalhub.jobs.chunks import chosen_prompt_ids, do_plan_chunks
from evalhub.llm.registry import SCORERS, parse_spec
from evalhub.llm.types import UnknownProvider
from evalhub.scoring.models import (
    PREPROCESSED_VARIANTS,
    GemRun,
    GemVariant,
)
from evalhub.system.model_access import queue_for

GEM = "gem"
DEFAULT_CHUNK_PROMPTS = 10


def check_gem_config(
    *,
    candidates: Sequence[LanguageModel],
    references: Sequence[LanguageModel],
    variants: Sequence[str],
    evaluation_lm: str,
    preprocessing_lm: str = "",
    validation_strategies: Sequence[str] = (),
    validation_lm: str = "",
    examiner_lm: str = "",
) -> list[str]:
    """Every problem with a GEM configuration, as sentences a user can act on."""
    errors = []
    if not references:
        errors.append("Choose at least one reference model (e.g. the human reviewers).")
    if not candidates and not references:
        errors.append("Choose the candidates to score.")
    unknown = [v for v in variants if v not in GemVariant.values]
    if unknown or not variants:
        errors.append(f"Choose variants among: {', '.join(GemVariant.values)}.")
    for label, spec, kind in (
        ("Evaluation LM", evaluation_lm, "scorer"),
        ("Preprocessing LM", preprocessing_lm, "chat"),
        ("Validation LM", validation_lm, "chat"),
        ("LMExaminer LM", examiner_lm, "chat"),
    ):
        if not spec:
            continue
        try:
            parsed = parse_spec(spec)
        except UnknownProvider as error:
            errors.append(f"{label}: {error}")
            continue
        if kind == "scorer" and parsed.provider not in SCORERS:
            errors.append(f"{label}: log-probabilities need one of {', '.join(SCORERS)}, not {parsed.provider!r}.")
    if not evaluation_lm:
        errors.append("Name the evaluation LM, e.g. transformers:/models/llama-3.1-8b-instruct.")
    bad = [s for s in validation_strategies if s not in STRATEGIES]
    if bad:
        errors.append(f"Unknown validation strategies: {', '.join(bad)}.")
    if examiner_lm and not validation_strategies:
        errors.append("The LMExaminer baseline is part of the validation table: choose validation strategies too.")
    if any(STRATEGIES[s].needs_llm for s in validation_strategies if s in STRATEGIES) and not validation_lm:
        errors.append("The chosen validation strategies need a validation LM (a chat provider).")
    return errors


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
    *,
    user: Any = None,
    benchmark: Benchmark,
    candidates: Sequence[LanguageModel],
    references: Sequence[LanguageModel],
    variants: Sequence[str],
    evaluation_lm: str,
    preprocessing_lm: str = "",
    validation_strategies: Sequence[str] = (),
    validation_lm: str = "",
    examiner_lm: str = "",
    dtype: str = "auto",
    device: str = "",
    prompt_ids: Sequence[int] = (),
    seed: int = 0,
    bootstrap: bool = False,
    use_imported_preprocessing: bool = True,
    candidate_variant: str = "",
    chunk_prompts: int = DEFAULT_CHUNK_PROMPTS,
    enqueue: bool = True,
) -> GemRun:
    """Create the job, its run and its chunks; the chunks go to the `gpu` queue once committed
    (`enqueue=False` leaves them for the caller, e.g. `gem_score` running them in-process)."""
    errors = check_gem_config(
        candidates=candidates,
        references=references,
        variants=variants,
        evaluation_lm=evaluation_lm,
        preprocessing_lm=preprocessing_lm,
        validation_strategies=validation_strategies,
        validation_lm=validation_lm,
        examiner_lm=examiner_lm,
    )
    if errors:
        raise ValueError(" ".join(errors))
    ids = chosen_prompt_ids(benchmark, prompt_ids)
    candidate_ids, reference_ids = {m.pk for m in candidates}, {m.pk for m in references}
    missing = check_preprocessing(
        ids, candidate_ids | reference_ids, variants, preprocessing_lm, use_imported_preprocessing
    )
    if missing:
        raise ValueError(missing)
    planned = planned_pairs(
        ids, candidate_ids, reference_ids, len(variants), len(validation_strategies), candidate_variant
    )
    with transaction.atomic():
        job = do_create_job(
            GEM,
            f"GEM on {benchmark.name}",
            user=user,
            total=sum(planned.values()),
            params={
                "benchmark": benchmark.slug,
                "prompts": len(ids),
                "candidates": sorted(m.slug for m in candidates),
                "references": sorted(m.slug for m in references),
                "variants": list(variants),
                "evaluation_lm": evaluation_lm,
                "dtype": dtype,
                "preprocessing_lm": preprocessing_lm,
                "validation_strategies": list(validation_strategies),
                "validation_lm": validation_lm,
                "examiner_lm": examiner_lm,
                "candidate_variant": candidate_variant or "all",
                "seed": seed,
            },
        )
        run = GemRun.objects.create(
            job=job,
            benchmark=benchmark,
            prompt_ids=list(prompt_ids),
            variants=list(variants),
            evaluation_lm=evaluation_lm,
            dtype=dtype,
            device=device,
            preprocessing_lm=preprocessing_lm,
            use_imported_preprocessing=use_imported_preprocessing,
            validation_strategies=list(validation_strategies),
            validation_lm=validation_lm,
            examiner_lm=examiner_lm,
            prompt_version=PROMPT_VERSION,
            candidate_variant=candidate_variant,
            seed=seed,
            bootstrap=bootstrap,
        )
        run.candidate_models.set(candidates)
        run.reference_models.set(references)
        do_plan_chunks(job, ids, planned, chunk_prompts, enqueue=enqueue)
    return run


def gem_queue(run: GemRun) -> str:
    return GPU_QUEUE


# --- DHP and YESciEval judge runs ------------------------------------------------------

DISCERNMENT = "discernment"


def check_discernment_config(
    *,
    family: str,
    task: str,
    perturbations: Sequence[Sequence[str]],
    metrics: Sequence[str],
    judges: Sequence[str],
    mode: str,
    perturbation_lm: str = "",
    repeats: int = 5,
) -> list[str]:
    from evalhub.core.dhp.perturbations import REGISTRY
    from evalhub.core.prompts.judges import RUBRIC_LEVELS, TASKS, metric_of
    from evalhub.scoring.models import DiscernmentFamily, ScoringMode

    errors = []
    if family == DiscernmentFamily.DHP:
        if task not in TASKS:
            errors.append(f"Choose a DHP task among {', '.join(TASKS)}.")
        else:
            for metric in metrics:
                try:
                    metric_of(task, metric)
                except ValueError as error:
                    errors.append(str(error))
    elif family == DiscernmentFamily.YESCIEVAL:
        unknown = [m for m in metrics if m not in RUBRIC_LEVELS]
        if unknown:
            errors.append(f"Unknown rubrics {', '.join(unknown)}; the nine are {', '.join(RUBRIC_LEVELS)}.")
        if mode == ScoringMode.PROBABILITY:
            errors.append("YESciEval judges answer in JSON: use generation, not next-token probabilities.")
    else:
        errors.append("Choose DHP or YESciEval.")
    if not metrics:
        errors.append("Choose at least one metric.")
    if not perturbations:
        errors.append("Choose at least one perturbation.")
    for name, severity in perturbations:
        perturbation = REGISTRY.get(name)
        if perturbation is None or severity not in perturbation.severities:
            errors.append(f"Unknown perturbation {name} ({severity}).")
        elif perturbation.family != family:
            errors.append(f"{perturbation.label} belongs to {perturbation.family}, not {family}.")
        elif perturbation.llm and not perturbation_lm:
            errors.append(f"{perturbation.label} is made by an LLM: name the perturbation LLM.")
    if not judges:
        errors.append("Name at least one judge.")
    for judge in judges:
        try:
            provider = parse_spec(judge).provider
        except UnknownProvider as error:
            errors.append(f"Judge {judge!r}: {error}")
            continue
        if mode == ScoringMode.PROBABILITY and provider != "transformers":
            errors.append(f"Judge {judge!r}: next-token probabilities need a local transformers model.")
    if perturbation_lm:
        try:
            parse_spec(perturbation_lm)
        except UnknownProvider as error:
            errors.append(f"Perturbation LLM: {error}")
    if not 1 <= repeats <= 20:
        errors.append("Repeats must be between 1 and 20.")
    return errors


def do_create_discernment_run(
    *,
    user: Any = None,
    benchmark: Benchmark,
    family: str,
    task: str,
    targets: Sequence[LanguageModel],
    perturbations: Sequence[Sequence[str]],
    metrics: Sequence[str],
    judges: Sequence[str],
    repeats: int = 5,
    mode: str = "generate",
    temperature: float = 0.0,
    perturbation_lm: str = "",
    shape: str = "default",
    weights: dict | None = None,
    weights_source: str = "",
    target_variant: str = "",
    seed: int = 0,
    chunk_prompts: int = DEFAULT_CHUNK_PROMPTS,
    enqueue: bool = True,
):
    """Create the job, its run and its chunks; progress counts one unit per original response."""
    from evalhub.core.dhp.expert_weights import check_weights
    from evalhub.scoring.models import DiscernmentRun

    errors = check_discernment_config(
        family=family,
        task=task,
        perturbations=perturbations,
        metrics=metrics,
        judges=judges,
        mode=mode,
        perturbation_lm=perturbation_lm,
        repeats=repeats,
    )
    if not targets:
        errors.append("Choose the models whose responses are judged.")
    if weights is not None:
        try:
            check_weights(weights)
        except ValueError as error:
            errors.append(f"Expert weights: {error}")
    if errors:
        raise ValueError(" ".join(errors))
    ids = list(benchmark.prompts.order_by("pk").values_list("pk", flat=True))
    units = Counter(
        Response.objects.filter(
            variant_q(target_variant), prompt_id__in=ids, parent__isnull=True, model__in=targets
        ).values_list("prompt_id", flat=True)
    )
    label = "DHP" if family == "dhp" else "YESciEval"
    with transaction.atomic():
        job = do_create_job(
            DISCERNMENT,
            f"{label} on {benchmark.name}",
            user=user,
            total=sum(units.values()),
            params={
                "benchmark": benchmark.slug,
                "family": family,
                "task": task,
                "targets": sorted(m.slug for m in targets),
                "perturbations": [list(p) for p in perturbations],
                "metrics": list(metrics),
                "judges": list(judges),
                "repeats": repeats,
                "mode": mode,
                "temperature": temperature,
                "perturbation_lm": perturbation_lm,
                "shape": shape,
                "weights": weights_source or "uniform",
                "target_variant": target_variant or "all",
                "seed": seed,
            },
        )
        run = DiscernmentRun.objects.create(
            job=job,
            benchmark=benchmark,
            family=family,
            task=task,
            shape=shape,
            perturbations=[list(p) for p in perturbations],
            metrics=list(metrics),
            judges=list(judges),
            repeats=1 if mode == "probability" else repeats,
            mode=mode,
            temperature=temperature,
            perturbation_lm=perturbation_lm,
            weights=weights,
            weights_source=weights_source,
            target_variant=target_variant,
            seed=seed,
        )
        run.target_models.set(targets)
        do_plan_chunks(job, ids, units, chunk_prompts, enqueue=enqueue)
    return run


def judge_queue(run) -> str:
    """Local judges (and next-token probabilities, which only they give) run on the GPU workers."""
    return queue_for(run.judges, local=run.mode == "probability")
