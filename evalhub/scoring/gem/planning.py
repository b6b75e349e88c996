"""What a GEM run would score, before it is made: whether its texts can be scored at all, and how
many pairs each prompt plans (the job's progress counts pairs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from evalhub.catalog.models import Response, variant_matches
from evalhub.scoring.models import PREPROCESSED_VARIANTS, GemVariant
from evalhub.system.bounded_queries import count_where_in, where_in


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
    responses = Response.objects.filter(parent__isnull=True, model_id__in=model_ids)
    total = count_where_in(responses, "prompt_id", prompt_ids)
    preprocessed = responses.filter(metadata__has_key="preprocessed").exclude(metadata__preprocessed="")
    imported = count_where_in(preprocessed, "prompt_id", prompt_ids) if use_imported else 0
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
    rows = where_in(
        Response.objects.filter(parent__isnull=True, model_id__in=candidate_ids | reference_ids).values_list(
            "prompt_id", "model_id", "variant"
        ),
        "prompt_id",
        prompt_ids,
    )
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
