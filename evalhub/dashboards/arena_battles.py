"""Every battle evalhub holds, in LMArena's battle schema, so it can go through LMArena's own code
(arena-rank, its notebooks) and come back through `import_judgments --format mt-bench`.

One record per battle: `question_id` (the prompt's id), `model_a`, `model_b`, `winner` (`model_a`,
`model_b` or `tie`), `judge` (the single judge's spec, the imported judge or person, `debate-panel`
for a debate's consensus, `human-adjudication` for people's verdict on a debate), `turn` 1,
`conversation_a` and `conversation_b` (the prompt and each response as chat messages, as Arena's
datasets hold them), and evalhub's own `criterion`, `benchmark` and `source`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from evalhub.catalog.models import Response
from evalhub.dashboards.battles import Battle
from evalhub.system.bounded_queries import where_in
from evalhub.tallies.models import CONSENSUS, HUMAN

WINNER = {"a": "model_a", "b": "model_b", "tie": "tie"}
# The judge named for battles no single judge gave; `human…` makes people of them on import.
JUDGE_OF_SOURCE = {CONSENSUS: "debate-panel", HUMAN: "human-adjudication"}


def _texts(ids: set[int]) -> dict[int, tuple[str, str, str]]:
    """Response id → (its prompt's id, the prompt, the response), in bounded queries."""
    rows = Response.objects.values_list("id", "prompt__external_id", "prompt__text", "text")
    return {pk: (external, prompt, text) for pk, external, prompt, text in where_in(rows, "pk", sorted(ids))}


def _conversation(prompt: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


def arena_records(battles: Iterable[Battle]) -> Iterator[dict[str, Any]]:
    chosen = [b for b in battles if b.response_a and b.response_b]  # every battle has its responses
    texts = _texts({response for b in chosen for response in (b.response_a, b.response_b)})
    for battle in chosen:
        question, prompt, answer_a = texts[battle.response_a]
        answer_b = texts[battle.response_b][2]
        yield {
            "question_id": question,
            "model_a": battle.model_a,
            "model_b": battle.model_b,
            "winner": WINNER[battle.outcome],
            "judge": battle.judge or JUDGE_OF_SOURCE.get(battle.source, battle.source),
            "turn": 1,
            "conversation_a": _conversation(prompt, answer_a),
            "conversation_b": _conversation(prompt, answer_b),
            "criterion": battle.criterion,
            "benchmark": battle.benchmark,
            "source": battle.source,
        }
