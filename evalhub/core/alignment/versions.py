"""What a judge is, as one frozen value, and what changed from one version of it to the next (issue:
judges that improve). A judge is its provider spec, the criteria variant and privileged sources it is
shown, how many answers it gives per pair and on which scale, any instructions added to its prompt, and
any worked examples; each change makes a new version that names its parent."""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, fields
from typing import Any

ORIGINAL = "original"
CHOICE = "choice"


@dataclass(frozen=True)
class WorkedExample:
    """A pair shown to the judge with people's verdict (1, 2 or 0, in the order shown)."""

    question: str
    first: str
    second: str
    verdict: int
    category: str = ""

    def heading(self) -> str:
        question = " ".join(self.question.split())
        return f"{question[:60]}{'…' if len(question) > 60 else ''} → {self.verdict}"


@dataclass(frozen=True)
class JudgeDefinition:
    spec: str  # the provider spec, e.g. openai:gpt-4o-mini
    criteria_variant: str = ORIGINAL
    privileged_sources: tuple[str, ...] = ()
    samples: int = 1
    scale: str = CHOICE
    temperature: float = 0.0
    instructions: str = ""  # added to the judging prompt; "" for the method's own prompt alone
    examples: tuple[WorkedExample, ...] = ()

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["privileged_sources"] = list(self.privileged_sources)
        data["examples"] = [asdict(example) for example in self.examples]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeDefinition:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown judge field(s): {', '.join(unknown)}.")
        values = dict(data)
        values["privileged_sources"] = tuple(sorted(values.get("privileged_sources", ())))
        values["examples"] = tuple(WorkedExample(**example) for example in values.get("examples", ()))
        return cls(**values)


@dataclass(frozen=True)
class Change:
    field: str
    before: str
    after: str
    lines: tuple[str, ...] = ()  # a unified diff, for the instructions


def _shown(name: str, value: Any) -> str:
    if name == "privileged_sources":
        return ", ".join(value) or "none"
    if name == "examples":
        return f"{len(value)} example(s)" if value else "none"
    if name == "instructions":
        return f"{len(value.splitlines())} line(s)" if value else "none"
    return str(value)


def changes(before: JudgeDefinition | None, after: JudgeDefinition) -> list[Change]:
    """What `after` changes from `before`; for a first version, its spec and every field not left at
    its default, in field order."""
    first = before is None
    start = before if before is not None else JudgeDefinition(spec="")
    out = []
    for f in fields(JudgeDefinition):
        old, new = getattr(start, f.name), getattr(after, f.name)
        if old == new and not (first and f.name == "spec"):
            continue
        lines: tuple[str, ...] = ()
        if f.name == "instructions":
            lines = tuple(difflib.unified_diff(str(old).splitlines(), str(new).splitlines(), lineterm="", n=1))[2:]
        elif f.name == "examples":
            kept = {example.heading() for example in old} & {example.heading() for example in new}
            lines = tuple(
                [f"- {example.heading()}" for example in old if example.heading() not in kept]
                + [f"+ {example.heading()}" for example in new if example.heading() not in kept]
            )
        out.append(Change(f.name, _shown(f.name, old) if not first else "", _shown(f.name, new), lines))
    return out
