"""A maths benchmark and a fake OpenAI-compatible server whose 'models' write hints and answers."""

from __future__ import annotations

import re

import pytest

from evalhub.catalog.models import Benchmark, Prompt
from evalhub.generation.actions import do_ensure_builtin_templates, do_register_candidate

QUESTIONS = {
    "What is 40 + 2?": "42",
    "Write one half as a fraction.": "\\frac{1}{2}",
}
SOLUTIONS = {
    "sum": "We add the tens first. Forty plus zero is forty. Then we add the units. Two plus zero is two. "
    "So the result is $\\boxed{42}$.",
    "half": "One half means one part of two equal parts. The numerator counts the parts taken. "
    "The denominator counts the equal parts. One part of two is written with 1 over 2. "
    "The answer is $\\boxed{\\frac{1}{2}}$.",
}
HINTER_LEAKS = "LEAK"  # a problem containing this gets a hint that gives the answer away


def hints_needed(model: str) -> int:
    return {"strong": 1, "weak": 2}.get(model, 99)


def fake_reply(model: str, messages: list[dict]) -> str:
    text = messages[-1]["content"]
    if model == "hinter":
        problem = text.split("Problem: ", 1)[1].split("\n\nSolution:", 1)[0]
        third = "Which gives 42 in the end." if HINTER_LEAKS in problem else "Now combine the parts."
        return (
            "Here you go.\n<partial_solution_1>Split the problem into parts.</partial_solution_1>\n"
            "<partial_solution_2>Split the problem into parts. Work on each part.</partial_solution_2>\n"
            f"<partial_solution_3>Split the problem into parts. Work on each part. {third}</partial_solution_3>"
        )
    shown = len(re.findall(r"^Hint \d+:", text, re.M))
    question = next((q for q in QUESTIONS if q in text), None)
    if question is None:
        return f"{model} writes an essay."
    answer = QUESTIONS[question] if shown >= hints_needed(model) else "7"
    return f"{model} thinks with {shown} hints. The answer is $\\boxed{{{answer}}}$."


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    from evalhub.llm.testing import FakeLLMServer

    with FakeLLMServer(reply_for_model=fake_reply) as running:
        yield running


def spec(server, model: str) -> str:
    return f"openai-compatible:{server.url}/v1|{model}"


@pytest.fixture
def maths(db):
    benchmark = Benchmark.objects.create(slug="maths", name="Maths", task_type="question_answering")
    prompts = {
        "sum": Prompt.objects.create(
            benchmark=benchmark, external_id="sum", text="What is 40 + 2?", reference_answer=SOLUTIONS["sum"]
        ),
        "half": Prompt.objects.create(
            benchmark=benchmark,
            external_id="half",
            text="Write one half as a fraction.",
            reference_answer=SOLUTIONS["half"],
        ),
        "essay": Prompt.objects.create(benchmark=benchmark, external_id="essay", text="Describe the sea."),
    }
    return {"benchmark": benchmark, "prompts": prompts}


@pytest.fixture
def answer_template(db):
    return {t.slug: t for t in do_ensure_builtin_templates()}["answer"]


@pytest.fixture
def candidates(server, db):
    return [do_register_candidate(spec(server, "strong")), do_register_candidate(spec(server, "weak"))]
