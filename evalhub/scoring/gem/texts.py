"""What GEM reads for each variant: raw or C.1-preprocessed texts (imported, or made by the preprocessing
LM and stored), the synopsis s (none, the abstract, or the abstract with the C.4 summary), and pairs
fitted to the evaluation LM's context.

Context too long: the candidate x (the conditioning text) is cut token-wise from its end until the
conditional sequence fits; the reference y is never cut because it is what is scored; the row is
flagged `truncated`. A pair whose marginal alone does not fit is skipped and reported.
"""

from collections.abc import Hashable

from evalhub.catalog.models import Prompt, Response
from evalhub.core.gem import prompts as gem_prompts
from evalhub.core.gem.pairs import GemPair
from evalhub.llm.scoring.chat_template import encode_request
from evalhub.scoring.models import GemRun, GemVariant
from evalhub.worklog.rewrites import RewriteFailed, messages_key, rewrite_all


def variant_texts(run: GemRun, variant: str, responses: list[Response], issue) -> dict[int, str]:
    """Raw texts for GEM-raw; C.1-preprocessed texts (imported, or made by the preprocessing LM) otherwise."""
    if variant == GemVariant.RAW:
        return {r.pk: r.text for r in responses}
    texts, todo = {}, []
    for response in responses:
        imported = (response.metadata or {}).get("preprocessed") if run.use_imported_preprocessing else None
        if isinstance(imported, str) and imported.strip():
            texts[response.pk] = imported
        else:
            todo.append(response)
    if todo and not run.preprocessing_lm:
        for response in todo:
            issue(
                "preprocess",
                "No preprocessing LM is configured and the response has no imported preprocessed text.",
                response=response,
                label=variant,
            )
        return texts
    answers = rewrite_all(
        "gem:c1", run.preprocessing_lm, [gem_prompts.chat(gem_prompts.PREPROCESS_SYSTEM, r.text) for r in todo]
    )
    for response in todo:
        answer = answers[messages_key(gem_prompts.chat(gem_prompts.PREPROCESS_SYSTEM, response.text))]
        if isinstance(answer, RewriteFailed):
            issue("preprocess", f"Preprocessing failed: {answer}", response=response, label=variant)
        else:
            texts[response.pk] = answer
    return texts


def synopses_for(run: GemRun, variant: str, prompts: dict[int, Prompt], issue) -> dict[int, str | None]:
    """None for GEM and GEM-raw ("Not Available"); the abstract, or abstract + ASSW summary, for GEM-S."""
    if variant in (GemVariant.RAW, GemVariant.GEM):
        return dict.fromkeys(prompts)
    synopses: dict[int, str | None] = {}
    for prompt_id, prompt in prompts.items():
        if prompt.synopsis.strip():
            synopses[prompt_id] = prompt.synopsis
        else:
            issue("input", "The prompt has no synopsis (abstract), which GEM-S needs.", prompt=prompt, label=variant)
    if variant == GemVariant.ABSTRACT:
        return synopses

    def assw_messages(prompt: Prompt) -> list[dict[str, str]]:
        return gem_prompts.chat(gem_prompts.ASSW_SYSTEM, f"```\n{prompt.source}\n```")

    with_source = {pid: prompts[pid] for pid in synopses if prompts[pid].source.strip()}
    for pid in set(synopses) - set(with_source):
        issue("input", "The prompt has no source text for the ASSW summary.", prompt=prompts[pid], label=variant)
    if not run.preprocessing_lm:
        for prompt in with_source.values():
            issue("preprocess", "GEM-S (ASSW) needs a preprocessing LM for the C.4 summary.", prompt=prompt)
        return {}
    answers = rewrite_all("gem:c4", run.preprocessing_lm, [assw_messages(p) for p in with_source.values()])
    out: dict[int, str | None] = {}
    for pid, prompt in with_source.items():
        answer = answers[messages_key(assw_messages(prompt))]
        if isinstance(answer, RewriteFailed):
            issue("preprocess", f"ASSW summary failed: {answer}", prompt=prompt, label=variant)
        else:
            out[pid] = f"{synopses[pid]}\n\n{answer}"
    return out


def fit_to_context(
    scorer, pairs: list[GemPair], variant: str, truncated: set[tuple[str, Hashable, Hashable]], issue, responses
) -> list[GemPair]:
    """Apply the truncation rule of the module docstring (only where the scorer knows its context); the
    pairs cut are added to `truncated`."""
    limit = getattr(scorer, "max_length", None)
    tokenizer = getattr(scorer, "tokenizer", None)
    if not limit or tokenizer is None:
        return pairs
    fitted: list[GemPair] = []
    cut_cache: dict[tuple[Hashable, int], str] = {}
    for pair in pairs:
        conditional = encode_request(tokenizer, list(pair.conditional_request().prefix), pair.reference_text)
        if conditional.length <= limit:
            fitted.append(pair)
            continue
        marginal = encode_request(tokenizer, list(pair.marginal_request().prefix), pair.reference_text)
        overflow = conditional.length - limit
        ids = tokenizer(pair.candidate_text, add_special_tokens=False)["input_ids"]
        keep = len(ids) - overflow - 8  # a margin: decoding and re-encoding can merge tokens differently
        if marginal.length > limit or keep <= 0:
            issue(
                "scoring",
                f"Skipped the pair with candidate response {pair.candidate}: the reference needs "
                f"{marginal.length} tokens with the prompt, and the context holds {limit} even with the candidate cut.",
                response=responses.get(pair.reference),
                label=variant,
            )
            continue
        text = cut_cache.setdefault((pair.candidate, keep), tokenizer.decode(ids[:keep]))
        fitted.append(GemPair(pair.candidate, pair.reference, text, pair.reference_text, pair.synopsis))
        truncated.add((variant, pair.candidate, pair.reference))
    return fitted
