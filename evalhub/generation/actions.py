"""Writes for generation runs, templates and hints: create and enqueue, record a chunk, resume, edit."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from evalhub.catalog.actions.responses import do_add_model
from evalhub.catalog.models import Benchmark, LanguageModel, Prompt, Response
from evalhub.catalog.queries import chosen_prompt_ids
from evalhub.core.privileged.hints import RULE_BASED, leaking_hints
from evalhub.core.privileged.tiers import tier_label
from evalhub.core.prompts.generation import BUILTIN_TEMPLATES, check_template
from evalhub.debates.actions import RunRejected, do_create_judge_run, do_create_run
from evalhub.debates.models import DebateRun
from evalhub.generation.config import GENERATION, GenerationConfig, spec_of
from evalhub.generation.models import GenerationRun, PromptHints, PromptTemplate, response_variant
from evalhub.jobs.kinds import registered_runner
from evalhub.llm.registry import parse_spec
from evalhub.system.bounded_queries import count_where_in
from evalhub.system.model_access import queue_for

# A chunk is the unit a worker takes and the step progress moves by: about this many calls,
# so a slow API still shows progress every few minutes and several workers share a run.
CALLS_PER_CHUNK = 40


class GenerationRejected(ValueError):
    """A run, template or hint edit that cannot be accepted; the message says what to change."""


# --- templates ------------------------------------------------------------------------------


def do_ensure_builtin_templates() -> list[PromptTemplate]:
    out = []
    for builtin in BUILTIN_TEMPLATES:
        template, _ = PromptTemplate.objects.update_or_create(
            slug=builtin.slug,
            defaults={
                "name": builtin.name,
                "system": builtin.system,
                "user": builtin.user,
                "description": builtin.description,
                "builtin": True,
            },
        )
        out.append(template)
    return out


def do_save_template(*, slug: str, name: str, system: str, user: str, description: str = "", by: Any = None):
    """Add a template, or change one no run has used yet: responses are found again by the template's
    slug, so a used template's text stays as it was (save the change under a new slug)."""
    errors = check_template(system, user)
    existing = PromptTemplate.objects.filter(slug=slug).first()
    if existing is not None and existing.builtin:
        errors.append(f"{slug!r} is a built-in template: choose another slug.")
    elif existing is not None and existing.runs.exists() and (existing.system, existing.user) != (system, user):
        errors.append(
            f"{slug!r} was used by {existing.runs.count()} generation run(s): save the change under a new slug, "
            "so the responses it made stay tied to the text that made them."
        )
    if errors:
        raise GenerationRejected(" ".join(errors))
    template, _ = PromptTemplate.objects.update_or_create(
        slug=slug,
        defaults={"name": name, "system": system, "user": user, "description": description},
    )
    if template.created_by is None and getattr(by, "is_authenticated", False):
        PromptTemplate.objects.filter(pk=template.pk).update(created_by=by)
        template.created_by = by
    return template


# --- candidates -----------------------------------------------------------------------------


def candidate_model(spec: str) -> LanguageModel:
    """The model a provider spec names: the stored one with its provider and model id, else a new one,
    not saved (forms check it before anything is written). UnknownProvider for a bad spec."""
    parsed = parse_spec(spec)
    model_id = spec.split(":", 1)[1] if ":" in spec else parsed.model
    found = LanguageModel.objects.filter(provider=parsed.provider, model_id=model_id, is_human=False).first()
    name = model_id.rsplit("|", 1)[-1]  # an OpenAI-compatible spec's model name, after the server URL
    return found or LanguageModel(provider=parsed.provider, model_id=model_id, display_name=name or parsed.provider)


def do_register_candidate(spec: str) -> LanguageModel:
    """The model a provider spec names, created (with a slug from its name) when new."""
    model = candidate_model(spec)
    return model if model.pk is not None else do_add_model(model)


# --- runs -----------------------------------------------------------------------------------


def plan_generation(
    benchmark: Benchmark,
    candidates: Sequence[LanguageModel],
    template: PromptTemplate,
    tiers: Sequence[int],
    samples: int = 1,
    prompt_ids: Sequence[int] = (),
) -> dict[str, int]:
    """What a run would do, before it is created: calls to make, responses found, prompts that would
    get tier 0 only (no reference solution). Hints not yet made may cut tiers further."""
    ids = chosen_prompt_ids(benchmark, prompt_ids)
    variants = [response_variant(template.slug, t, s) for t in tiers for s in range(samples)]
    responses = Response.objects.filter(model__in=candidates, parent__isnull=True, variant__in=variants)
    found = count_where_in(responses, "prompt_id", ids)
    unreferenced = Prompt.objects.filter(reference_answer="")
    without_reference = count_where_in(unreferenced, "pk", ids) if any(t > 0 for t in tiers) else 0
    higher = sum(1 for t in tiers if t > 0) * samples * len(candidates)
    planned = len(ids) * len(tiers) * samples * len(candidates) - without_reference * higher
    return {"prompts": len(ids), "calls": planned - found, "found": found, "tier_0_only": without_reference}


def do_create_generation_run(
    config: GenerationConfig, *, user: Any = None, chunk_prompts: int | None = None, enqueue: bool = True
) -> GenerationRun:
    """Create the run, its job and its chunks (`JobRunner.create`); progress counts one unit per planned
    response (per prompt when only hints are made). Chunks are enqueued once committed."""
    run: GenerationRun = registered_runner(GENERATION).create(config, user, enqueue=enqueue, size=chunk_prompts)
    return run


def generation_queue(run: GenerationRun) -> str:
    """The candidates' and the hint maker's queue (the rule-based maker calls no model)."""
    hint_maker = [run.hint_maker] if run.hint_maker != RULE_BASED else []
    return queue_for([spec_of(m) for m in run.candidates.all()] + hint_maker)


# --- hints ----------------------------------------------------------------------------------


def hints_digest(hints: Sequence[str]) -> str:
    return hashlib.sha256("\x1e".join(hints).encode()).hexdigest()[:16]


def do_store_hints(prompt: Prompt, *, maker: str, version: str, hints: list[str], answer: str | None) -> PromptHints:
    """Store a prompt's first hint set (another worker's copy wins: hints are made once per prompt)."""
    stored, _ = PromptHints.objects.get_or_create(
        prompt=prompt,
        defaults={
            "maker": maker,
            "prompt_version": version,
            "hints": hints,
            "final_answer": (answer or "")[:500],
            "leaks": [i + 1 for i in leaking_hints(hints, answer)],
        },
    )
    return stored


def do_edit_hints(record: PromptHints, *, hints: list[str], accept_leaks: bool, by: Any) -> PromptHints:
    """An admin's edit: hints re-checked; flagged ones are used only when the admin accepts them."""
    hints = [h.strip() for h in hints]
    if not hints or any(not h for h in hints):
        raise GenerationRejected("Every hint needs text; to use fewer hints, run fewer tiers.")
    with transaction.atomic():
        record = PromptHints.objects.select_for_update().get(pk=record.pk)
        record.hints = hints
        record.leaks = [i + 1 for i in leaking_hints(hints, record.final_answer or None)]
        record.leak_accepted = bool(record.leaks) and accept_leaks
        record.edited_by = by if getattr(by, "is_authenticated", False) else None
        record.edited_at = timezone.now()
        record.save()
    return record


# --- comparing tiers against the anchor (the paper's Table 3) --------------------------------


def do_compare_with_anchor(run: GenerationRun, *, user: Any = None, criterion, agents: list[str], **judge: Any):
    """For every tier and every candidate other than the anchor: the pairs (candidate, anchor) of that
    tier as a debate run, and a single LLM judge on them (privileged-information paper, Table 3: one
    automatic grader against one anchor). The debate runs are left as drafts, to start from their
    pages when agent debates are wanted too. Returns (judge runs, reasons for what was skipped)."""
    if run.anchor is None or run.anchor_id is None:
        raise GenerationRejected("Choose an anchor model for this run first: win rates are against it.")
    made, skipped = [], []
    for tier in run.tiers:
        for candidate in run.candidates.exclude(pk=run.anchor_id).order_by("slug"):
            label, variant = f"{tier_label(tier)}, {candidate.slug}", run.variant(tier, 0)
            # Asking twice must not count the same pairs twice: reuse the tier's pairs, skip a judge already on them.
            pairs = DebateRun.objects.filter(
                benchmark=run.benchmark, criterion=criterion, model_a=candidate, model_b=run.anchor, variant=variant
            ).first()
            if pairs is None:
                name = f"{candidate.slug} vs {run.anchor.slug} · {tier_label(tier)} · generation run {run.pk}"
                fields = {"benchmark": run.benchmark, "criterion": criterion, "variant": variant, "agents": agents}
                try:
                    pairs = do_create_run(user=user, name=name, model_a=candidate, model_b=run.anchor, **fields)
                except RunRejected as error:
                    skipped.append(f"{label}: {error}")
                    continue
            same = pairs.judge_runs.filter(
                judge=judge["judge"],
                privileged_sources=judge.get("privileged_sources", []),
                criteria_variant=judge.get("criteria_variant", "original"),
            ).first()
            if same is not None:
                skipped.append(f"{label}: already judged by {same} (judge run {same.pk}).")
                continue
            made.append(do_create_judge_run(user, reference=pairs, **judge))
    return made, skipped
