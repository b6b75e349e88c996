"""Models, responses and criteria other apps add one by one: a generation run's responses, a perturbed or
rewritten copy of a response, a criterion a method needs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalhub.catalog.models import (
    Criterion,
    LanguageModel,
    Response,
)
from evalhub.core.prompts.criteria import check_levels


def do_add_model(model: LanguageModel) -> LanguageModel:
    """A new model (e.g. a generation candidate named by a provider spec), with a slug made from its
    display name, numbered when taken."""
    base = "-".join(part for part in re.split(r"[^a-z0-9]+", model.display_name.rsplit("/", 1)[-1].lower()) if part)
    slug = base[:80] or model.provider
    n = 2
    while LanguageModel.objects.filter(slug=slug).exists():
        slug, n = f"{base[:80]}-{n}", n + 1
    model.slug = slug
    model.save()
    return model


def do_add_generated_responses(responses: Sequence[Response]) -> list[Response]:
    """Generated responses stored once: one whose (prompt, model, variant) is stored already (by
    another attempt of the chunk or another run) is kept as it is. Returns the ones stored now."""
    keys = [(r.prompt_id, r.model_id, r.variant) for r in responses]
    already = set(
        Response.objects.filter(
            prompt_id__in={k[0] for k in keys},
            model_id__in={k[1] for k in keys},
            parent__isnull=True,
            variant__in={k[2] for k in keys},
        ).values_list("prompt_id", "model_id", "variant")
    )
    fresh = [r for r in responses if (r.prompt_id, r.model_id, r.variant) not in already]
    Response.objects.bulk_create(fresh, ignore_conflicts=True)
    return fresh


def do_derive_response(
    parent: Response, *, perturbation: str, severity: str, seed: int, text: str, level: str = "", params: dict
) -> Response:
    """`parent` changed by a perturbation (DHP) or a validation strategy (GEM), stored once: its natural
    key is a constraint, so a retried chunk or a later run gets the stored copy, never a second one."""
    response, _ = Response.objects.get_or_create(
        parent=parent,
        perturbation=perturbation,
        perturbation_severity=severity,
        perturbation_seed=seed,
        defaults={
            "prompt_id": parent.prompt_id,
            "model_id": parent.model_id,
            "variant": parent.variant,
            "text": text,
            "perturbation_level": level,
            "perturbation_params": params,
        },
    )
    return response


def do_ensure_criterion(slug: str, name: str, definition: str, levels: dict, *, scenario: str = "") -> Criterion:
    """Create a built-in criterion, or bring an existing built-in one up to date."""
    checked = {str(score): text for score, text in check_levels(levels).items()}
    criterion, _ = Criterion.objects.update_or_create(
        slug=slug,
        defaults={"name": name, "definition": definition, "levels": checked, "scenario": scenario, "builtin": True},
    )
    return criterion


def do_ensure_builtin_criteria() -> int:
    """The built-in criteria (evalhub.core.prompts.builtin_criteria), each made where its slug is free; a
    criterion someone has under one of these slugs is left as it is. Returns how many were made. Run
    after every migrate and flush (CatalogConfig), as migration 0004 first made them."""
    from evalhub.core.prompts.builtin_criteria import BUILTIN_CRITERIA

    made = 0
    for slug, spec in BUILTIN_CRITERIA.items():
        _, created = Criterion.objects.get_or_create(
            slug=slug,
            defaults={
                "name": spec["name"],
                "definition": spec["definition"],
                "levels": {str(score): text for score, text in check_levels(spec["levels"]).items()},
                "scenario": spec["scenario"],
                "builtin": True,
            },
        )
        made += created
    return made
