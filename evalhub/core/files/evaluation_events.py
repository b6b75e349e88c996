"""A stored judgment as an OpenTelemetry GenAI evaluation event (pure: no OpenTelemetry import).

The event is `gen_ai.evaluation.result` of the GenAI semantic conventions (open-telemetry/
semantic-conventions-genai, model/gen-ai/events.yaml, stability "development"): the evaluation's
name (required), its score value and label (when they apply), an explanation, and the id of the
response evaluated. The conventions name no evaluator or dataset (the gap semantic-conventions-genai
issue #79 describes), so evalhub adds its provenance under its own namespace: the evaluator's
identity and version, the benchmark, the criterion and evalhub's ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

EVENT_NAME = "gen_ai.evaluation.result"
MAX_EXPLANATION = 4000  # characters: a backend keeps an event, not a transcript


@dataclass(frozen=True)
class EvaluationResult:
    name: str  # what was evaluated, e.g. the criterion or metric
    evaluator: str  # who: a judge's provider spec, a person, a file's annotator
    benchmark: str
    score: float | None = None
    label: str | None = None
    explanation: str = ""
    response_id: str | None = None
    evaluator_version: str = ""  # e.g. the prompt template's version, the criteria variant
    extra: Mapping[str, str | float | int | bool] = field(default_factory=dict)


def event_attributes(result: EvaluationResult) -> dict[str, str | float | int | bool]:
    attributes: dict[str, str | float | int | bool] = {
        "gen_ai.evaluation.name": result.name,
        "evalhub.evaluator.name": result.evaluator,
        "evalhub.benchmark": result.benchmark,
    }
    if result.score is not None:
        attributes["gen_ai.evaluation.score.value"] = float(result.score)
    if result.label:
        attributes["gen_ai.evaluation.score.label"] = result.label
    if result.explanation:
        attributes["gen_ai.evaluation.explanation"] = result.explanation[:MAX_EXPLANATION]
    if result.response_id:
        attributes["gen_ai.response.id"] = result.response_id
    if result.evaluator_version:
        attributes["evalhub.evaluator.version"] = result.evaluator_version
    attributes.update({f"evalhub.{key}": value for key, value in result.extra.items()})
    return attributes
