from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, LanguageModel, Prompt, Response

HUMAN_REVIEWS = [
    "The reviewer appreciates the clear writing.\nThe reviewer criticizes the missing ablations.",
    "The reviewer questions whether the method scales to longer contexts.\nThe reviewer appreciates the writing.",
    "The reviewer suggests comparing against stronger retrieval baselines. The reviewer criticizes the datasets.",
]
MODEL_REVIEW = (
    "Summary Of The Paper:\nThe paper proposes a new attention mechanism. It scales well. It is simple.\n"
    "Strengths And Weaknesses:\nThe reviewer appreciates the clear writing. The baselines are strong. "
    "The reviewer criticizes the missing ablations. The datasets are small."
)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_model, tiny_tokenizer):
    """The tiny model saved like real weights, so runs load it through their `transformers:PATH` spec."""
    path = tmp_path_factory.mktemp("tiny-llm")
    tiny_model.save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def eval_lm(tiny_model_dir) -> str:
    return f"transformers:{tiny_model_dir}"


@pytest.fixture
def reviews(db):
    """Three prompts; three human reviewers and one model on each, except one prompt with a single review."""
    benchmark = Benchmark.objects.create(slug="iclr-mini", name="ICLR mini", task_type="peer_review")
    humans = [
        LanguageModel.objects.create(slug=f"human-{i}", display_name=f"Human reviewer {i}", is_human=True)
        for i in (1, 2, 3)
    ]
    model = LanguageModel.objects.create(slug="model-a", display_name="Model A")
    prompts = []
    for index in range(3):
        prompt = Prompt.objects.create(
            benchmark=benchmark,
            external_id=f"paper-{index}",
            text="Review this paper.",
            synopsis="We propose a new attention mechanism." if index != 1 else "",
            source="Full paper text. We claim strong results. A limitation is the small data.",
        )
        prompts.append(prompt)
        Response.objects.create(prompt=prompt, model=model, text=MODEL_REVIEW + f" Paper {index}.")
        for human, text in zip(humans, HUMAN_REVIEWS, strict=True):
            Response.objects.create(prompt=prompt, model=human, text=f"{text} On paper {index}.")
    lonely = Prompt.objects.create(benchmark=benchmark, external_id="lonely", text="Review this paper.")
    Response.objects.create(prompt=lonely, model=humans[0], text=HUMAN_REVIEWS[0])
    Response.objects.create(prompt=lonely, model=model, text=MODEL_REVIEW)
    return {"benchmark": benchmark, "humans": humans, "model": model, "prompts": prompts, "lonely": lonely}


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    from evalhub.llm.testing import FakeLLMServer
    from tests.scoring.test_discernment import judge_reply

    with FakeLLMServer(reply_for_model=judge_reply) as running:
        yield running


@pytest.fixture
def summaries(db):
    from tests.scoring.test_discernment import SUMMARIES

    benchmark = Benchmark.objects.create(slug="summ", name="Summaries", task_type="summarization")
    system = LanguageModel.objects.create(slug="sys-a", display_name="System A")
    for n, text in enumerate(SUMMARIES):
        prompt = Prompt.objects.create(
            benchmark=benchmark, external_id=f"doc-{n}", text="Summarise.", source=f"Article {n}.", category="env"
        )
        Response.objects.create(prompt=prompt, model=system, text=text)
    return benchmark, system


@pytest.fixture
def finished_run(reviews, eval_lm):
    """A GEM run over `reviews`, finished in-process (one validation strategy)."""
    from evalhub.jobs.runners import work_chunk
    from evalhub.scoring.actions import do_create_gem_run
    from evalhub.scoring.gem.config import GemConfig
    from evalhub.scoring.models import GemRun

    config = GemConfig(
        benchmark=reviews["benchmark"],
        candidates=[reviews["model"]],
        references=reviews["humans"],
        variants=["gem-raw"],
        evaluation_lm=eval_lm,
        validation_strategies=["sentence_deletion"],
    )
    run = do_create_gem_run(config, enqueue=False)
    for chunk_id in run.chunks.values_list("pk", flat=True):
        work_chunk(chunk_id)
    return GemRun.objects.get(pk=run.pk)
