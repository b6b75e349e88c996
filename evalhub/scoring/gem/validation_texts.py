"""GEM's validation texts (Algorithm 1): degraded or manipulated copies of the candidates, one per
validation strategy, stored as derived responses; and the LMExaminer baseline's scores (Appendix D.1)."""

import zlib
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from typing import Any

from evalhub.catalog.actions.responses import do_derive_response
from evalhub.catalog.models import Prompt, Response
from evalhub.core.gem import prompts as gem_prompts
from evalhub.core.gem.validation import STRATEGIES, derive
from evalhub.llm.types import LLMError
from evalhub.scoring.models import ExaminerScore, GemRun
from evalhub.worklog.rewrites import RewriteFailed, messages_key, rewrite_all, stored_completer


def strategy_name(strategy: str, run: GemRun) -> str:
    """The Response.perturbation of a derived text; LLM-made ones name their LLM."""
    suffix = f":{run.validation_lm}" if STRATEGIES[strategy].needs_llm else ""
    return f"gem:{strategy}{suffix}"[:100]


def derived_responses(run: GemRun, prompts: dict[int, Prompt], candidates: list[Response], issue) -> list[Response]:
    """Degraded or manipulated copies of the candidates, one per validation strategy (Algorithm 1)."""
    if not run.validation_strategies or not candidates:
        return []
    names = {strategy: strategy_name(strategy, run) for strategy in run.validation_strategies}
    existing = {
        (r.parent_id, r.perturbation): r
        for r in Response.objects.filter(
            parent__in=candidates, perturbation__in=names.values(), perturbation_seed=run.seed
        )
    }
    others_by_model: dict[int, list[tuple[int, str]]] = defaultdict(list)
    if "random_replacement" in names:
        for prompt_id, model_id, text in Response.objects.filter(
            prompt__benchmark_id=run.benchmark_id, parent__isnull=True, model_id__in={c.model_id for c in candidates}
        ).values_list("prompt_id", "model_id", "text"):
            others_by_model[model_id].append((prompt_id, text))

    out = []
    for strategy, name in names.items():
        out += [existing[(c.pk, name)] for c in candidates if (c.pk, name) in existing]
        todo = [c for c in candidates if (c.pk, name) not in existing]
        if todo:
            out += _derive_with(run, strategy, name, todo, prompts, others_by_model, issue)
    return out


def _derive_with(run: GemRun, strategy: str, name: str, todo, prompts, others_by_model, issue) -> list[Response]:
    def arguments(candidate: Response) -> dict:
        return {
            "abstract": prompts[candidate.prompt_id].synopsis,
            "others": [t for p, t in others_by_model[candidate.model_id] if p != candidate.prompt_id],
            "seed": zlib.crc32(f"{run.seed}:{candidate.pk}".encode()),
        }

    complete = None
    if STRATEGIES[strategy].needs_llm and run.validation_lm:
        complete = stored_completer(
            f"gem:{strategy}",
            run.validation_lm,
            [partial(_dry_derive, strategy, c.text, arguments(c)) for c in todo],
        )

    out = []
    for candidate in todo:
        prompt = prompts[candidate.prompt_id]
        try:
            made = derive(strategy, candidate.text, complete=complete, **arguments(candidate))
        except LLMError as error:
            issue("validation", f"{STRATEGIES[strategy].label}: {error}", prompt=prompt, response=candidate)
            continue
        if made.text is None:
            issue("validation", f"{STRATEGIES[strategy].label}: {made.note}", prompt=prompt, response=candidate)
            continue
        response = do_derive_response(
            candidate,
            perturbation=name,
            severity="",
            seed=run.seed,
            text=made.text,
            params={
                "strategy": strategy,
                "kind": STRATEGIES[strategy].kind,
                "provider": run.validation_lm if STRATEGIES[strategy].needs_llm else "",
                **made.params,
            },
        )
        out.append(response)
    return out


def examiner_scores(run: GemRun, prompts: dict[int, Prompt], responses: list[Response], issue) -> list[ExaminerScore]:
    """The LMExaminer baseline (GEM, Appendix D.1) for originals and their derived copies."""
    scored = set(ExaminerScore.objects.filter(run=run, response__in=responses).values_list("response_id", flat=True))
    todo = [r for r in responses if r.pk not in scored]

    def messages(response: Response) -> list[dict[str, str]]:
        prompt = prompts[response.prompt_id]
        return gem_prompts.examiner_messages(prompt.source or prompt.synopsis or prompt.text, response.text)

    answers = rewrite_all("gem:examiner", run.examiner_lm, [messages(r) for r in todo])
    out = []
    for response in todo:
        answer = answers[messages_key(messages(response))]
        score = None if isinstance(answer, RewriteFailed) else gem_prompts.parse_examiner_score(answer)
        if score is None:
            reason = answer if isinstance(answer, RewriteFailed) else "no <overall_score> from 0 to 10 in the answer"
            issue("validation", f"LMExaminer: {reason}", prompt=prompts[response.prompt_id], response=response)
            continue
        out.append(ExaminerScore(run=run, response=response, score=score, raw=answer[:5000]))
    return out


def _dry_derive(
    strategy: str, text: str, arguments: dict[str, Any], record: Callable[[list[dict[str, str]]], str]
) -> object:
    """One validation text made with a recording stand-in for the LLM (stored_completer's dry run)."""
    return derive(strategy, text, complete=record, **arguments)
