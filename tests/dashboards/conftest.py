"""A small arena whose every number can be worked out by hand: models, debates with known outcomes,
single judges with known verdicts, and finished GEM and DHP jobs with known summaries."""

from __future__ import annotations

import itertools

import pytest
from django.utils import timezone

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response
from evalhub.debates.models import Debate, DebateRun, DebateStatus, JudgeRun, JudgeVerdict, winner_for
from evalhub.debates.verdict_counts import do_recount_debates
from evalhub.jobs.models import Job, JobStatus
from evalhub.tallies.models import TallyState

_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def counts_follow_writes(request):
    """The counts start fresh, as on a database that has always had them: a board then shows only
    what was counted as it was written (the Arena below writes as the actions do), never what a
    rebuild at the first read would find."""
    if "db" in request.fixturenames:
        request.getfixturevalue("db")
        TallyState.objects.update_or_create(pk=1, defaults={"stale": False})


class Arena:
    def __init__(self) -> None:
        self.benchmark = Benchmark.objects.create(slug="bench", name="Bench")
        self.criterion, _ = Criterion.objects.update_or_create(  # built in: every database has it
            slug="helpfulness", defaults={"name": "Helpfulness", "levels": {str(i): f"level {i}" for i in range(1, 6)}}
        )
        self.models = {
            slug: LanguageModel.objects.create(slug=slug, display_name=slug.upper(), provider="openai", model_id=slug)
            for slug in ("alpha", "beta", "gamma")
        }
        self.judge_model = LanguageModel.objects.create(
            slug="judge-x", display_name="Judge X", provider="openai", model_id="gpt-judge"
        )
        self.runs: dict[tuple[str, str, str, str], DebateRun] = {}  # (a, b, criterion, response variant)

    def run(self, a: str, b: str, **fields) -> DebateRun:
        key = (a, b, fields.get("criterion", self.criterion).slug, fields.get("variant", ""))
        if key not in self.runs:
            self.runs[key] = DebateRun.objects.create(
                name=f"{a} vs {b}",
                benchmark=self.benchmark,
                criterion=fields.get("criterion", self.criterion),
                model_a=self.models[a],
                model_b=self.models[b],
                agents=["heuristic"],
                variant=fields.get("variant", ""),
            )
        return self.runs[key]

    def debate(
        self,
        a: str,
        b: str,
        verdict: int | None,
        status: str = DebateStatus.CONSENSUS,
        swapped: bool = False,
        category: str = "math",
        **fields,
    ) -> Debate:
        """A debate between a's and b's responses to a fresh prompt; `verdict` in the order shown."""
        n = next(_ids)
        prompt = Prompt.objects.create(benchmark=self.benchmark, external_id=f"p{n}", text=f"q{n}", category=category)
        ra = Response.objects.create(prompt=prompt, model=self.models[a], text=f"{a} answer {n}")
        rb = Response.objects.create(prompt=prompt, model=self.models[b], text=f"{b} answer {n}")
        debate = Debate.objects.create(
            run=self.run(a, b, **fields),
            prompt=prompt,
            response_a=ra,
            response_b=rb,
            swapped=swapped,
            status=status,
            verdict=verdict,
            winner=winner_for(verdict, swapped) if verdict is not None else "",
        )
        do_recount_debates([debate.pk])  # as do_finish_debates and the adjudication do
        return debate

    def judge(
        self,
        spec: str,
        verdicts: dict[Debate, list[int | None]],
        variant: str = "original",
        privileged: bool = False,
        reversed_verdicts: dict[Debate, list[int | None]] | None = None,
        reversed_stored_first: bool = False,
    ) -> JudgeRun:
        """A single-judge run on the debates' run with the given sample verdicts (in the order the
        judge saw: the debate's order, or the reversed order for `reversed_verdicts`), the debate's
        order stored first unless `reversed_stored_first` (a worker may store either answer first)."""
        reference = next(iter(verdicts)).run
        run = JudgeRun.objects.create(
            reference=reference,
            judge=spec,
            criteria_variant=variant,
            privileged_sources=["reference_answer"] if privileged else [],
            check_position=bool(reversed_verdicts),
        )
        stored = [(False, verdicts), (True, reversed_verdicts or {})]
        for reversed_order, given in stored[::-1] if reversed_stored_first else stored:
            for debate, samples in given.items():
                for sample, verdict in enumerate(samples):
                    JudgeVerdict.objects.create(
                        judge_run=run,
                        debate=debate,
                        reversed_order=reversed_order,
                        sample=sample,
                        text="…",
                        verdict=verdict,
                        input_tokens=100,
                        output_tokens=20,
                        latency_s=0.5,
                    )
        do_recount_debates([debate.pk for given in (verdicts, reversed_verdicts or {}) for debate in given])
        return run

    def finished_job(self, kind: str, result: dict) -> Job:
        return Job.objects.create(
            kind=kind, title=kind, status=JobStatus.SUCCEEDED, result=result, finished_at=timezone.now()
        )


@pytest.fixture
def arena(db) -> Arena:
    return Arena()
