"""What every judge improver does alike. Its run names the version it improves and the split whose train
labels it may read (`version`, `split`, `made`); it reads those labels through the training set and ends,
where a candidate earned it, by deriving the next version. A new improver is one subclass: its
configuration, its units and how it chooses (docs/extending/improvers.md)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from evalhub.alignment.actions import do_derive_version
from evalhub.alignment.models import JudgeVersion
from evalhub.alignment.training_set import training_pairs
from evalhub.core.alignment.fewshot import TrainingPair
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.jobs.runners import JobRunner

RunT = TypeVar("RunT")
ResultT = TypeVar("ResultT")


class ImproverRunner(JobRunner[RunT, ResultT]):
    method: ClassVar[str]  # alignment.models.Method: how the versions it makes were made

    def train_pairs(self, criterion: str) -> list[TrainingPair]:
        """The split's train pairs under `criterion` that people settled, with the version's verdicts."""
        run: Any = self.run
        return training_pairs(run.split, criterion, str(run.version))

    def make_version(self, definition: JudgeDefinition, note: str) -> JudgeVersion:
        """The next version of the run's version, recorded as this run's; raises VersionRejected where
        nothing changed."""
        run: Any = self.run
        made = do_derive_version(run.version, definition, method=self.method, split=run.split, note=note)
        run.made = made
        run.save(update_fields=["made"])
        return made
