"""What every judge improver does alike. Its run (an `ImprovementRun`: `version`, `split`, `job`, `made`)
names the version it improves and the split whose train labels it may read; it reads those labels through
the training set and ends, where a candidate earned it, by deriving the next version. A new improver is
one model and one subclass: its configuration, its units and how it chooses (docs/extending/improvers.md)."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, cast

from evalhub.alignment.actions import do_derive_version
from evalhub.alignment.models import ImprovementRun, JudgeVersion
from evalhub.alignment.training_set import training_pairs
from evalhub.core.alignment.fewshot import TrainingPair
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.jobs.runners import JobRunner

RunT = TypeVar("RunT")
ResultT = TypeVar("ResultT")


class ImproverRunner(JobRunner[RunT, ResultT]):
    method: ClassVar[str]  # alignment.models.Method: how the versions it makes were made
    model: ClassVar[type[ImprovementRun]]  # its run's model, an ImprovementRun
    related: ClassVar[tuple[str, ...]] = ()  # what `work` reads beside the version and the split

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "model" in cls.__dict__:  # the run's job finds it by the model's name (ImprovementRun.job)
            cls.run_attr = cls.model._meta.model_name or ""

    @classmethod
    def load(cls, job_id: int) -> RunT:
        """The run, with its version, its split's benchmark and `related` read in the same query."""
        found = cls.model._default_manager.select_related("version", "split__benchmark", *cls.related)
        return cast(RunT, found.get(job_id=job_id))

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
