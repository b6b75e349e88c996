"""What a finished run may claim: its final state and one sentence, from counts of what happened.

Every kind of long work (debates, judges, GEM, DHP, generation) reports the same facts when its
last chunk is recorded, and this one rule turns them into the state every page shows, so no
page can say "Succeeded" for a run whose calls all failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUCCEEDED, PARTIAL, FAILED = "succeeded", "partial", "failed"


@dataclass(frozen=True)
class ComponentFailure:
    """A judge, agent, candidate or model that failed every call it was given."""

    role: str  # "Judge", "Agent", "Candidate", "Evaluation LM" …
    name: str
    first_error: str

    def sentence(self) -> str:
        return f"{self.role} {self.name} failed every call: {self.first_error}"


@dataclass(frozen=True)
class Outcome:
    """The facts of a run: units planned, units that produced a usable result, units that failed
    (no result, with a reported cause), units answered but unusable (invalid), and components
    that never produced anything."""

    planned: int
    produced: int
    failed: int = 0
    invalid: int = 0
    failed_components: tuple[ComponentFailure, ...] = field(default=())
    cause: str = ""  # why nothing was produced, when the kind knows better than the counts

    def settle(self) -> tuple[str, str]:
        """(state, headline): failed when nothing usable came out or a component failed every
        call; partial when anything failed or was invalid; succeeded only when every planned
        unit produced a result."""
        if self.failed_components:
            return FAILED, " ".join(f.sentence() for f in self.failed_components)
        if self.produced == 0 and (self.planned or self.failed or self.invalid):
            return FAILED, self.cause or self._nothing_sentence()
        if self.failed or self.invalid or self.produced < self.planned:
            return PARTIAL, self._partial_sentence()
        return SUCCEEDED, f"Every one of {self.planned:,} {_plural(self.planned, 'unit')} produced a result."

    def _nothing_sentence(self) -> str:
        parts = [f"{self.failed:,} failed"] if self.failed else []
        parts += [f"{self.invalid:,} invalid"] if self.invalid else []
        return f"Nothing usable was produced ({', '.join(parts) or 'no result stored'})."

    def _partial_sentence(self) -> str:
        missing = self.planned - self.produced - self.failed - self.invalid
        parts = [f"{self.produced:,} of {self.planned:,} produced a result"]
        parts += [f"{self.failed:,} failed"] if self.failed else []
        parts += [f"{self.invalid:,} invalid"] if self.invalid else []
        parts += [f"{missing:,} without a result"] if missing > 0 else []
        return ", ".join(parts) + "."


def partial_words(failed: int, invalid: int) -> str:
    """The state's name for a partial run: "Finished with 3 failed / 2 invalid"."""
    parts = [f"{failed:,} failed"] if failed else []
    parts += [f"{invalid:,} invalid"] if invalid else []
    return "Finished with " + (" / ".join(parts) or "missing results")


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"
