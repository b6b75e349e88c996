"""The quickstart's demo runs: every page of a fresh instance has something real to show, offline.

Each run goes through the same actions, jobs and workers as any other (nothing is pre-computed):
a debate run whose unresolved debates wait for adjudication, a single judge measured against it,
a blind-first adjudication by two simulated people (run here, so its page shows the aid's effect),
a judge improved with few-shot examples and compared with its parent on held-out labels (run here),
GEM on the arithmetic benchmark with a tiny random model (GRE-bench with the tutors as the
human baseline), DHP and YESciEval with the heuristic judges, a generation run whose offline
calculator answers at four hint tiers, and a published expert survey with an invitation link.
Each is made once: running the quickstart again starts nothing new.
"""

from __future__ import annotations

from pathlib import Path

from evalhub.adjudication.demo import do_demo_blind_first_adjudication
from evalhub.alignment.demo import do_demo_judge_improvement
from evalhub.catalog.demo import DEMO_BENCHMARK, DEMO_MATHS_BENCHMARK, demo_texts
from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.privileged.hints import RULE_BASED
from evalhub.debates.actions import do_create_judge_run
from evalhub.debates.demo import DEMO_RUN_NAME, do_create_demo_debate_run
from evalhub.debates.models import RUBRIC, DebateRun, JudgeRun
from evalhub.generation.actions import do_create_generation_run, do_ensure_builtin_templates, do_register_candidate
from evalhub.generation.config import GenerationConfig
from evalhub.generation.models import GenerationRun, PromptTemplate
from evalhub.llm.tiny import TINY_MODEL_MARKER, save_tiny_model
from evalhub.scoring.actions import do_create_discernment_run, do_create_gem_run
from evalhub.scoring.discernment.config import DiscernmentConfig
from evalhub.scoring.gem.config import GemConfig
from evalhub.scoring.models import DiscernmentFamily, DiscernmentRun, GemRun
from evalhub.surveys.actions import do_create_from_template, do_invite, do_publish
from evalhub.surveys.models import Invitation

DEMO_JUDGE = "heuristic:concise"
DEMO_CANDIDATE = "arithmetic"
DEMO_SURVEY = "dhp-question-answering"


def _models(*slugs: str) -> list[LanguageModel]:
    return list(LanguageModel.objects.filter(slug__in=slugs).order_by("slug"))


def ensure_tiny_model(path: Path) -> str:
    """The provider spec of the demo's tiny local model, built at `path` the first time."""
    if not (path / TINY_MODEL_MARKER).is_file():
        save_tiny_model(path, demo_texts())
    return f"transformers:{path}"


def do_start_demo_runs(tiny_model_path: Path) -> list[str]:
    """Queue the demo runs that do not exist yet; returns what was started, by name."""
    demo, maths = Benchmark.objects.get(slug=DEMO_BENCHMARK), Benchmark.objects.get(slug=DEMO_MATHS_BENCHMARK)
    started = []
    if do_create_demo_debate_run():
        started.append("debates")
    debates = DebateRun.objects.get(name=DEMO_RUN_NAME)
    if not JudgeRun.objects.filter(reference=debates).exclude(scale=RUBRIC).exists():
        # Three samples: the vote share is a probability, so the calibration section has data.
        do_create_judge_run(reference=debates, judge=DEMO_JUDGE, privileged_sources=[], samples=3)
        started.append("a single judge")
    if not JudgeRun.objects.filter(reference=debates, scale=RUBRIC).exists():
        # One of YESciEval's pairwise rubrics, offline: the heuristic judge reads the package's prompt.
        do_create_judge_run(reference=debates, judge=DEMO_JUDGE, scale=RUBRIC, rubric="method_coverage", domain="nlp")
        started.append("a YESciEval pairwise rubric judge")
    if do_demo_blind_first_adjudication():
        started.append("a blind-first adjudication by two simulated people")
    if do_demo_judge_improvement():
        started.append("a judge improved with few-shot examples, scored on held-out labels")
    if not GemRun.objects.filter(benchmark=maths).exists():
        do_create_gem_run(
            GemConfig(
                benchmark=maths,
                candidates=_models("demo-thorough", "demo-terse", "demo-sloppy"),
                references=_models("human-tutor-1", "human-tutor-2"),
                variants=["gem-raw"],
                evaluation_lm=ensure_tiny_model(tiny_model_path),
                device="cpu",
            ),
        )
        started.append("GEM with a tiny random model")
    discernment = DiscernmentRun.objects.filter(benchmark=demo)
    if not discernment.filter(family=DiscernmentFamily.DHP).exists():
        do_create_discernment_run(
            DiscernmentConfig(
                benchmark=demo,
                family=DiscernmentFamily.DHP,
                task="dhp-question-answering",
                targets=_models("demo-thorough", "demo-terse"),
                perturbations=[["random_typos", "major"], ["random_word_deletions", "major"], ["reordering", "major"]],
                metrics=["answer_quality"],
                judges=["heuristic", "heuristic:detail"],
                repeats=1,
            ),
        )
        started.append("DHP")
    if not discernment.filter(family=DiscernmentFamily.YESCIEVAL).exists():
        do_create_discernment_run(
            DiscernmentConfig(
                benchmark=demo,
                family=DiscernmentFamily.YESCIEVAL,
                task="yescieval",
                targets=_models("demo-thorough"),
                perturbations=[
                    ["relevancy_subtle", "subtle"],
                    ["relevancy_extreme", "extreme"],
                    ["correctness_subtle", "subtle"],
                    ["correctness_extreme", "extreme"],
                    ["breadth_subtle", "subtle"],
                    ["breadth_extreme", "extreme"],
                ],
                # Two of the paper's nine rubrics and one the yescieval package added since.
                metrics=["relevancy", "correctness", "method_coverage"],
                judges=["heuristic", "heuristic:detail"],
                repeats=1,
            ),
        )
        started.append("YESciEval")
    if not GenerationRun.objects.filter(benchmark=maths).exists():
        do_ensure_builtin_templates()
        do_create_generation_run(
            GenerationConfig(
                benchmark=maths,
                candidates=[do_register_candidate(DEMO_CANDIDATE)],
                template=PromptTemplate.objects.get(slug="answer"),
                tiers=[0, 1, 2, 3],
                hint_count=3,
                hint_maker=RULE_BASED,
                max_tokens=256,
            ),
        )
        started.append("generation at four hint tiers")
    survey = do_create_from_template(DEMO_SURVEY)
    if not Invitation.objects.filter(version__survey=survey).exists():
        do_invite(do_publish(survey.versions.get(number=1)), name="Demo expert")
        started.append("a survey invitation")
    return started
