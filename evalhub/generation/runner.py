"""One chunk of a generation run: make the hints its prompts need, then have every candidate answer.

For each prompt, tier and sample, a candidate is asked only when no response with that
variant exists yet (a resumed or repeated run finds it and keeps it); calls go through the
model-access layer, so its per-provider concurrency limits, retries, response cache and
accounting apply. A failed call, an empty answer or a prompt without usable hints is a row
issue on the job page; the rest of the chunk carries on.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field

from evalhub.catalog.models import LanguageModel, Prompt, Response
from evalhub.core.privileged.hints import (
    HINT_PROMPT_VERSION,
    RULE_BASED,
    final_answer,
    hint_messages,
    parse_hints,
    prefix_hints,
)
from evalhub.core.privileged.tiers import tier_label
from evalhub.core.prompts.generation import render_messages
from evalhub.core.runs.usage import Usage
from evalhub.generation.actions import do_store_hints, hints_digest
from evalhub.generation.config import spec_of
from evalhub.generation.models import GenerationRun, PromptHints
from evalhub.jobs.models import JobChunk
from evalhub.llm import event_loop
from evalhub.llm.accounting import UsageMeter
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.system.model_access import chat_client
from evalhub.worklog.models import IssueLog
from evalhub.worklog.rewrites import RewriteFailed, messages_key, rewrite_all

CUT_OFF = ("length", "max_tokens")  # OpenAI-style and Anthropic-style finish reasons at the token limit


CUT_OFF_NOTE = "stopped at the token limit"


@dataclass
class GenerationChunkResult:
    responses: list[Response] = field(default_factory=list)
    issues: list = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    found: int = 0
    failed: int = 0  # calls asked for that gave no response (each a reported row)


@dataclass(frozen=True)
class Item:
    prompt: Prompt
    model: LanguageModel
    tier: int
    sample: int
    variant: str
    messages: list[dict[str, str]]
    hints: tuple[str, ...]


def stated_answer(prompt: Prompt) -> str | None:
    """The prompt's final answer: a `final_answer` field (privileged or metadata), else the reference's."""
    explicit = (prompt.privileged or {}).get("final_answer") or (prompt.metadata or {}).get("final_answer") or ""
    return final_answer(prompt.reference_answer, str(explicit))


def generation_chunk_work(run: GenerationRun, chunk: JobChunk) -> GenerationChunkResult:
    issue = IssueLog(run.job)
    result = GenerationChunkResult(issues=issue)
    prompts = list(Prompt.objects.filter(pk__in=chunk.unit_ids).order_by("pk"))
    hints = prompt_hints(run, prompts, issue) if any(t > 0 for t in run.tiers) else {}
    candidates = list(run.candidates.all())
    if not candidates:
        return result  # a hints-only run
    existing = set(
        Response.objects.filter(
            prompt__in=prompts, model__in=candidates, parent__isnull=True, variant__in=run.variants
        ).values_list("prompt_id", "model_id", "variant")
    )
    template = run.template
    items = []
    for prompt in prompts:
        fields = {
            "prompt": prompt.text,
            "source": prompt.source,
            "synopsis": prompt.synopsis,
            "category": prompt.category,
        }
        for tier in run.tiers:
            shown = hints.get(prompt.pk, [])[:tier]
            if len(shown) < tier:
                continue  # no usable hints for this prompt: reported once by prompt_hints
            messages = render_messages(template.system, template.user, fields, shown)
            for model in candidates:
                for sample in range(run.samples):
                    variant = run.variant(tier, sample)
                    if (prompt.pk, model.pk, variant) in existing:
                        result.found += 1
                        continue
                    items.append(Item(prompt, model, tier, sample, variant, messages, tuple(shown)))
    meter = UsageMeter()
    result.responses = event_loop.run(_generate(run, template.slug, items, meter, issue))
    result.usage = meter.usage()
    result.failed = len(items) - len(result.responses)
    return result


async def _generate(run: GenerationRun, template: str, items: list[Item], meter: UsageMeter, issue) -> list[Response]:
    by_model: dict[int, list[Item]] = defaultdict(list)
    for item in items:
        by_model[item.model.pk].append(item)
    clients = {}
    for model_items in by_model.values():
        model = model_items[0].model
        try:
            clients[model.pk] = chat_client(spec_of(model), meter=meter)
        except (LLMError, UnknownProvider, ValueError) as error:
            for item in model_items:  # each of its calls fails, with the cause
                issue("generation", f"{spec_of(model)}: {error}", prompt=item.prompt, label=model.slug)

    async def one(item: Item) -> Response | None:
        spec, label = spec_of(item.model), f"{item.model.slug} · {tier_label(item.tier)}"
        try:
            completion = await clients[item.model.pk].complete(
                item.messages,
                temperature=run.temperature,
                max_tokens=run.max_tokens,
                seed=run.seed,
                repeat=item.sample,
            )
        except LLMError as error:
            issue("generation", str(error), prompt=item.prompt, label=label)
            return None
        if not completion.text.strip():
            issue("generation", f"{spec} returned an empty answer.", prompt=item.prompt, label=label)
            return None
        if completion.finish_reason in CUT_OFF:  # kept (it is what the model wrote in budget), but said
            note = f"{spec} {CUT_OFF_NOTE} ({run.max_tokens}): the answer may be cut off."
            issue("generation", note, prompt=item.prompt, label=label)
        return Response(
            prompt=item.prompt,
            model=item.model,
            variant=item.variant,
            text=completion.text,
            metadata={
                "generation_run": run.pk,
                "template": template,
                "hint_tier": item.tier,
                "sample": item.sample,
                "provider": spec,
                "hints_sha": hints_digest(item.hints) if item.hints else "",
                "finish_reason": completion.finish_reason,
                "input_tokens": completion.input_tokens,
                "output_tokens": completion.output_tokens,
                "cached": completion.cached,
                "cost_usd": completion.cost_usd,
            },
        )

    try:
        made = await asyncio.gather(*(one(item) for item in items if item.model.pk in clients))
    finally:
        for client in clients.values():
            await client.aclose()
    return [r for r in made if r is not None]


# --- hints ----------------------------------------------------------------------------------


def prompt_hints(run: GenerationRun, prompts: list[Prompt], issue) -> dict[int, list[str]]:
    """prompt id → its usable hints (made now when the prompt has none); every prompt left out is reported."""
    stored = {h.prompt_id: h for h in PromptHints.objects.filter(prompt__in=prompts)}
    missing = [p for p in prompts if p.pk not in stored]
    without_reference = [p for p in missing if not p.reference_answer.strip()]
    for prompt in without_reference:
        issue("hints", "No reference solution, so no hints: only tier 0 is generated for it.", prompt=prompt)
    stored.update(_make_hints(run, [p for p in missing if p.reference_answer.strip()], issue))
    needed = max(run.tiers)
    out = {}
    for prompt in prompts:
        record = stored.get(prompt.pk)
        if record is None:
            continue
        if not record.usable:
            shown = ", ".join(str(n) for n in record.leaks)
            issue(
                "hints",
                f"Hint {shown} contains the final answer {record.final_answer!r}: only tier 0 is generated. Edit "
                "the hints (or accept them) on the hints page and run again: responses made so far are kept.",
                prompt=prompt,
            )
            continue
        if len(record.hints) < needed:
            issue(
                "hints",
                f"{len(record.hints)} hints are stored; tiers above {len(record.hints)} are skipped.",
                prompt=prompt,
            )
        out[prompt.pk] = list(record.hints)
    return out


def _make_hints(run: GenerationRun, prompts: list[Prompt], issue) -> dict[int, PromptHints]:
    if not prompts:
        return {}
    made: dict[int, PromptHints] = {}
    k = run.hint_count
    if run.hint_maker == RULE_BASED:
        for prompt in prompts:
            answer = stated_answer(prompt)
            try:
                hints = prefix_hints(prompt.reference_answer, k, answer).hints
            except ValueError as error:
                issue("hints", f"{RULE_BASED}: {error}", prompt=prompt)
                continue
            made[prompt.pk] = do_store_hints(prompt, maker=RULE_BASED, version=RULE_BASED, hints=hints, answer=answer)
        return made
    asked = {p.pk: hint_messages(p.text, p.reference_answer, k) for p in prompts}
    answers = rewrite_all("hints", run.hint_maker, list(asked.values()))
    for prompt in prompts:
        answer = answers.get(messages_key(asked[prompt.pk]))
        if answer is None or isinstance(answer, RewriteFailed):
            issue("hints", f"{run.hint_maker}: {answer or 'no answer'}", prompt=prompt)
            continue
        try:
            hints = parse_hints(answer, k)
        except ValueError as error:
            issue("hints", f"{run.hint_maker}: {error}", prompt=prompt)
            continue
        made[prompt.pk] = do_store_hints(
            prompt, maker=run.hint_maker, version=HINT_PROMPT_VERSION, hints=hints, answer=stated_answer(prompt)
        )
    return made
