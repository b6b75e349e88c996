"""Every battle evalhub holds, in LMArena's battle schema, so it can go through LMArena's own code
(arena-rank, its notebooks) and come back through `import_judgments --format mt-bench`.

One record per battle: `question_id` (the prompt's id), `model_a`, `model_b`, `winner` (`model_a`,
`model_b`, `tie`, or `tie (bothbad)` where an imported Arena label said so), `judge` (the single
judge's spec, the imported judge or person, `debate-panel` for a debate's consensus,
`human-adjudication` for people's verdict on a debate), `turn` 1, `conversation_a` and
`conversation_b` (the prompt and each response as chat messages, as Arena's datasets hold them), and
evalhub's own `criterion`, `benchmark` and `source`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from evalhub.catalog.actions.judgments import ARENA_WINNER
from evalhub.catalog.models import Judgment, Response
from evalhub.core.files.judgments import BOTH_BAD
from evalhub.reads.battles import Battle
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


def _both_bad() -> set[tuple[frozenset[int], str]]:
    """(the pair's responses, the judge) of every imported label that was Arena's `tie (bothbad)`: the
    battles hold a tie, as every figure counts it; only the export tells the two apart."""
    rows = Judgment.objects.filter(**{f"metadata__{ARENA_WINNER}": BOTH_BAD}).values_list(
        "response_id", "response_2_id", "judge_model__slug"
    )
    return {(frozenset((first, second)), judge) for first, second, judge in rows.iterator(chunk_size=5000)}


def arena_records(battles: Iterable[Battle]) -> Iterator[dict[str, Any]]:
    chosen = [b for b in battles if b.response_a and b.response_b]  # every battle has its responses
    texts = _texts({response for b in chosen for response in (b.response_a, b.response_b)})
    both_bad = _both_bad()
    for battle in chosen:
        winner = WINNER[battle.outcome]
        if winner == "tie" and (frozenset((battle.response_a, battle.response_b)), battle.judge) in both_bad:
            winner = BOTH_BAD
        question, prompt, answer_a = texts[battle.response_a]
        answer_b = texts[battle.response_b][2]
        yield {
            "question_id": question,
            "model_a": battle.model_a,
            "model_b": battle.model_b,
            "winner": winner,
            "judge": battle.judge or JUDGE_OF_SOURCE.get(battle.source, battle.source),
            "turn": 1,
            "conversation_a": _conversation(prompt, answer_a),
            "conversation_b": _conversation(prompt, answer_b),
            "criterion": battle.criterion,
            "benchmark": battle.benchmark,
            "source": battle.source,
        }
