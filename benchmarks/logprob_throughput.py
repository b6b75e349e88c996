"""Log-probability scoring throughput: naive one-pair-per-forward vs the batched prefix-sharing scorer.

GEM-shaped work: for each task, n responses and every ordered pair (x, y), x != y; the
prefix holds the instruction, a synopsis and x, the forced answer is y. Both methods score
the same requests with the same model in one run; the script checks they agree and prints
requests/s, tokens/s, their ratio and peak memory.

    python benchmarks/logprob_throughput.py                      # CPU, ~10M-parameter model
    python benchmarks/logprob_throughput.py --device cuda --arch llama-3.1-8b --tasks 64 --responses 5
    python benchmarks/logprob_throughput.py --device cuda --arch llama-3.1-8b --tasks 32 --repeats 3 --fresh

With --fresh each repeat scores a new set of the same shape, as a job's batches are all new: the
same set again lets shape-keyed caches (allocator blocks, kernel plans) warm up. On an H100 (8B,
640 requests, medians of three) a fresh set took 6 % longer than the same set again, and 30 %
longer before each pass's rows went to the GPU in one copy.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from accelerator import interleaved, median_rate, mfu_line, spread, torch_dtype  # noqa: E402
from synthetic_reviews import abstract, lexicon, review  # noqa: E402

from evalhub.core.gem.prompts import prediction_messages  # noqa: E402
from evalhub.llm.scoring.base import ScoreRequest  # noqa: E402
from evalhub.llm.scoring.chat_template import encode_request  # noqa: E402
from evalhub.llm.scoring.reference import score_one_at_a_time  # noqa: E402
from evalhub.llm.scoring.transformers_scorer import TransformersScorer  # noqa: E402
from evalhub.llm.tiny import build_causal_lm, build_tokenizer, parameter_count  # noqa: E402


def gem_requests(tasks: int, responses: int, lines: int, seed: int, words: list[str]) -> list[ScoreRequest]:
    """GEM-S conditionals: every ordered pair (x, y) of a task's responses, prefix = C.2(abstract, x)."""
    rng = random.Random(seed)
    requests = []
    for _ in range(tasks):
        synopsis = abstract(rng, words)
        texts = [review(rng, words, rng.randint(lines // 2, lines)) for _ in range(responses)]
        for i, candidate in enumerate(texts):
            prefix = prediction_messages(synopsis, candidate)
            requests += [ScoreRequest.of(prefix, other) for j, other in enumerate(texts) if j != i]
    return requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--arch", default="10m", help="tiny, 10m, llama-3.2-1b or llama-3.1-8b (random weights)")
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--responses", type=int, default=5, help="responses per task (n); pairs = n(n-1)")
    parser.add_argument("--lines", type=int, default=12, help="judgment lines per review (length)")
    parser.add_argument("--vocab", type=int, default=16000, help="tokenizer vocabulary to train")
    parser.add_argument("--naive-limit", type=int, default=0, help="time the naive method on the first N requests only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["auto", "bfloat16", "float32"], default="auto", help="auto: bf16 on cuda")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved runs of each side (A B A B …)")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="each repeat scores a new set of requests of the same shape (both sides the same set), as a job's "
        "batches do: new lengths, so no shape-keyed cache (allocator blocks, kernel plans) is warm",
    )
    args = parser.parse_args()

    dtype = torch_dtype(args.dtype, args.device)
    words = lexicon(12000, args.seed)
    corpus_rng = random.Random(args.seed + 1)
    corpus = (
        [abstract(corpus_rng, words) for _ in range(300)]
        + [" ".join(words)]
        + [review(corpus_rng, words, 8) for _ in range(300)]
    )
    tokenizer = build_tokenizer(corpus, vocab_size=args.vocab)
    model = build_causal_lm(len(tokenizer), args.arch, seed=args.seed, dtype=dtype, device=args.device)
    sets = [
        gem_requests(args.tasks, args.responses, args.lines, args.seed + 1000 * repeat, words)
        for repeat in range(args.repeats if args.fresh else 1)
    ]
    requests = sets[0]
    params = parameter_count(model)

    def tokens_of(chosen: list[ScoreRequest]) -> int:
        return sum(encode_request(tokenizer, list(r.prefix), r.answer).length for r in chosen)

    print(
        f"model: {args.arch} ({params / 1e6:.1f}M parameters, vocabulary {len(tokenizer)}, {dtype}, {args.device}); "
        f"{len(requests)} requests ({args.tasks} tasks × {args.responses}·{args.responses - 1} ordered pairs), "
        f"{tokens_of(requests) / len(requests):.0f} tokens per request on average"
        + (f"; a new set each repeat ({len(sets)} sets)" if args.fresh else "")
    )

    limit = min(args.naive_limit or len(requests), len(requests))
    scorer = TransformersScorer(model=model, tokenizer=tokenizer)
    scorer.score(requests[:4])  # warm-up (kernels, allocator) for both methods
    score_one_at_a_time(model, tokenizer, requests[:2])
    # Per run, in order: its requests, their tokens and (batched) the tokens it computed.
    runs: dict[str, list[tuple[int, int, int]]] = {"naive": [], "batched": []}

    def naive() -> list[float]:
        chosen = sets[len(runs["naive"]) % len(sets)][:limit]
        runs["naive"].append((len(chosen), tokens_of(chosen), 0))
        return score_one_at_a_time(model, tokenizer, chosen)

    def batched() -> list[float]:
        chosen = sets[len(runs["batched"]) % len(sets)]
        scorer.forward_calls = scorer.computed_tokens = 0
        scores = scorer.score(chosen)
        runs["batched"].append((len(chosen), tokens_of(chosen), scorer.computed_tokens))
        return scores

    results, walls, cpus, peaks = interleaved({"naive": naive, "batched": batched}, args.repeats, args.device)
    naive_scores, fast = results["naive"], results["batched"]
    naive_peak, fast_peak = peaks["naive"], peaks["batched"]
    print(f"{args.repeats} interleaved runs each; wall s (min / median / max), CPU s:")
    for name in walls:
        print(f"  {name:<8}{spread(walls[name]):>28}   CPU {spread(cpus[name])}")

    def rate(name: str, part: int) -> float:
        return median_rate([run[part] for run in runs[name]], walls[name])

    naive_rps, fast_rps = rate("naive", 0), rate("batched", 0)
    naive_tps, fast_tps = rate("naive", 1), rate("batched", 1)

    difference = max(abs(a - b) for a, b in zip(naive_scores, fast, strict=False))
    print(f"{'method':<28}{'requests/s':>12}{'tokens/s':>12}{'forwards':>10}{'peak mem':>12}")
    print(f"{'naive (1 pair per forward)':<28}{naive_rps:>12.1f}{naive_tps:>12.0f}{limit:>10}{naive_peak:>10.2f}Gi")
    print(
        f"{'batched + prefix sharing':<28}{fast_rps:>12.1f}{fast_tps:>12.0f}"
        f"{scorer.forward_calls:>10}{fast_peak:>10.2f}Gi"
    )
    print(
        f"speed-up: {fast_rps / naive_rps:.2f}x  (medians of each run's rate; max |difference| {difference:.2e}"
        f"{'; within 1e-4' if difference <= 1e-4 else ''}; peak memory is the process's on CPU)"
    )
    bound_missed = fast_rps <= naive_rps or (dtype == torch.float32 and difference > 1e-3)
    if args.device == "cuda":
        _, served, computed = runs["batched"][-1]
        print(f"batched computed {computed} tokens for {served} request tokens ({served / computed:.1f}x reuse)")
        hardware_tps = rate("batched", 2)
        for name, tokens_per_second in (
            ("naive", naive_tps),
            ("batched, hardware (tokens computed)", hardware_tps),
            ("batched, request-equivalent (can pass 100 %: shared prefixes count once per request)", fast_tps),
        ):
            print(mfu_line(name, params, tokens_per_second, 1.0, args.device))
    verdict = "MISSED" if bound_missed else "met"
    print(f"bound: batched faster than naive, and within 1e-3 of it in float32: {verdict}")
    if bound_missed:
        sys.exit(1)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
