"""Generation runs: a plain loop of one call at a time against the run's chunked, concurrent engine.

A loopback OpenAI-compatible server answers every chat call after a fixed latency (the time an
API spends on the call); both sides ask the same questions — every prompt × candidate × hint
tier — and must get the same texts. The naive side is what a researcher's script does: for
each item, await the answer, then the next. The engine is `generate_responses` in-process:
chunks of prompts, each candidate's calls concurrent under the model-access layer's
per-provider limit, hints made once per prompt, responses stored in one transaction per chunk.

    python benchmarks/generation_throughput.py
    python benchmarks/generation_throughput.py --prompts 40 --candidates 4 --tiers 0,1,2,3 --latency 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
DATA = tempfile.mkdtemp(prefix="evalhub-generation-bench-")
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("EVALHUB_DATA_DIR", DATA)
os.environ.setdefault("EVALHUB_LLM_CACHE", str(Path(DATA) / "llm-cache.sqlite3"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
os.environ["OPENAI_COMPATIBLE_API_KEY"] = "test-key"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from evalhub.catalog.models import Benchmark, Prompt, Response  # noqa: E402
from evalhub.core.privileged.hints import RULE_BASED  # noqa: E402
from evalhub.core.prompts.generation import render_messages  # noqa: E402
from evalhub.generation.actions import (  # noqa: E402
    do_create_generation_run,
    do_ensure_builtin_templates,
    do_register_candidate,
)
from evalhub.generation.config import GenerationConfig  # noqa: E402
from evalhub.generation.models import PromptHints  # noqa: E402
from evalhub.jobs.chunks import pending_chunk_ids  # noqa: E402
from evalhub.jobs.runners import work_chunk  # noqa: E402
from evalhub.llm import get_chat_client  # noqa: E402
from evalhub.llm.testing import FakeLLMServer  # noqa: E402


def reply(model: str, messages: list[dict]) -> str:
    text = messages[-1]["content"]
    return f"{model} answers with {text.count('Hint ')} hints: the result is \\boxed{{{len(text) % 97}}}."


def build(prompts: int) -> Benchmark:
    benchmark = Benchmark.objects.create(slug="bench-maths", name="Bench maths")
    solution = " ".join(f"Step {n} works out part {n} of the problem." for n in range(1, 9)) + " So it is $\\boxed{7}$."
    Prompt.objects.bulk_create(
        Prompt(
            benchmark=benchmark, external_id=f"q{n}", text=f"Problem {n}: compute the value.", reference_answer=solution
        )
        for n in range(prompts)
    )
    return benchmark


async def naive(specs: list[str], items: list[tuple[str, list[dict]]]) -> list[str]:
    """One call at a time, no cache: what a plain script does."""
    clients = {spec: get_chat_client(spec) for spec in specs}
    texts = []
    try:
        for spec, messages in items:
            texts.append((await clients[spec].complete(messages, temperature=0.0, max_tokens=256)).text)
    finally:
        for client in clients.values():
            await client.aclose()
    return texts


BOUND = 3.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--tiers", default="0,1,2,3")
    parser.add_argument("--latency", type=float, default=0.05, help="Seconds the fake API takes per call.")
    parser.add_argument("--chunk-prompts", type=int, default=10)
    args = parser.parse_args()
    tiers = [int(t) for t in args.tiers.split(",")]

    call_command("migrate", verbosity=0)
    with FakeLLMServer(reply_for_model=reply, latency_s=args.latency) as server:
        specs = [f"openai-compatible:{server.url}/v1|candidate-{n}" for n in range(args.candidates)]
        benchmark = build(args.prompts)
        template = {t.slug: t for t in do_ensure_builtin_templates()}["answer"]
        candidates = [do_register_candidate(spec) for spec in specs]

        asyncio.run(naive(specs[:1], []))  # import the provider's SDK before either side is timed
        started, engine_cpu = time.perf_counter(), time.process_time()
        run = do_create_generation_run(
            GenerationConfig(
                benchmark=benchmark,
                candidates=candidates,
                template=template,
                tiers=tiers,
                hint_count=max(tiers),
                hint_maker=RULE_BASED,
                max_tokens=256,
            ),
            chunk_prompts=args.chunk_prompts,
            enqueue=False,
        )
        for chunk_id in pending_chunk_ids(run.job):
            work_chunk(chunk_id)
        engine_s, engine_cpu = time.perf_counter() - started, time.process_time() - engine_cpu
        run.refresh_from_db()

        # The naive loop asks the same messages (the hints the run stored, the same template).
        hints = {h.prompt_id: h.hints for h in PromptHints.objects.filter(prompt__benchmark=benchmark)}
        items, keys = [], []
        for prompt in benchmark.prompts.order_by("pk"):
            for tier in tiers:
                messages = render_messages(
                    template.system, template.user, {"prompt": prompt.text}, hints[prompt.pk][:tier]
                )
                for model, spec in zip(candidates, specs, strict=True):
                    items.append((spec, messages))
                    keys.append((prompt.pk, model.pk, f"answer:{tier}h"))
        started, naive_cpu = time.perf_counter(), time.process_time()
        texts = asyncio.run(naive(specs, items))
        naive_s, naive_cpu = time.perf_counter() - started, time.process_time() - naive_cpu

    stored = {(r.prompt_id, r.model_id, r.variant): r.text for r in Response.objects.filter(model__in=candidates)}
    same = sum(stored.get(key) == text for key, text in zip(keys, texts, strict=True))
    calls = len(items)
    print(
        f"{args.prompts} prompts × {args.candidates} candidates × tiers {tiers} = {calls} calls, "
        f"{args.latency * 1000:.0f} ms per call"
    )
    print(f"naive loop: {naive_s:7.2f} s  {calls / naive_s:7.1f} calls/s  CPU {naive_cpu:.2f} s")
    print(
        f"engine:     {engine_s:7.2f} s  {calls / engine_s:7.1f} calls/s  CPU {engine_cpu:.2f} s "
        f"(the engine's includes its database writes; {run.made} stored, {run.job.row_issues.count()} issues)"
    )
    print(f"speed-up:   {naive_s / engine_s:.1f}×   identical texts: {same} of {calls}")
    # Bound: the same texts, and the engine at least BOUND× the naive loop's pace (its calls overlap).
    met = same == calls and naive_s / engine_s >= BOUND
    print(f"bound: identical texts and at least {BOUND:.0f}× the naive loop: {'met' if met else 'MISSED'}")
    if not met:
        sys.exit(1)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
