"""GEM scoring throughput: the job's engine against the naive per-pair method, same pairs, same model.

Pairs: for every paper, each of its reviews as candidate x against each other review y (the
ICLR 2023 reviews with their GEM-preprocessed summaries when present, else a generated corpus
of the same shape). Both methods compute PMI(x; y) = log P(y | C.2(s, x)) − log P(y | C.2(s, NA)):

- naive: two unbatched forwards per pair, no reuse (the reference implementation's approach);
- engine: evalhub.core.gem.pairs.score_pairs on the TransformersScorer — each marginal once per
  (y, synopsis), each conditional prefix once for all its references, batched.

It checks the PMIs agree (within 1e-4 in fp32) and prints pairs/s, tokens/s and the ratio;
on CUDA also MFU.

    python benchmarks/gem_throughput.py                                   # CPU, ~10M parameters
    python benchmarks/gem_throughput.py --candidates 0                    # the paper's human-only validation shape
    python benchmarks/gem_throughput.py --device cuda --arch llama-3.1-8b --papers 100
    python benchmarks/gem_throughput.py --device cuda --arch llama-3.1-8b --gem-s --repeats 3 --fresh

With --fresh each repeat scores other papers of the same shape (both sides the same ones), as a
job's chunks do; rates and MFU are then medians of each run's own (see logprob_throughput.py).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from accelerator import interleaved, median_rate, mfu_line, spread, torch_dtype  # noqa: E402
from synthetic_reviews import abstract, lexicon, review  # noqa: E402

from evalhub.core.gem.pairs import score_pairs, task_pairs  # noqa: E402
from evalhub.llm.scoring.chat_template import encode_request  # noqa: E402
from evalhub.llm.scoring.reference import score_one_at_a_time  # noqa: E402
from evalhub.llm.scoring.transformers_scorer import TransformersScorer  # noqa: E402
from evalhub.llm.tiny import build_causal_lm, build_tokenizer, parameter_count  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "iclr2023-reviews"


def real_reviews() -> list[list[str]] | None:
    """Each paper's preprocessed human reviews (GEM, Appendix C.1 format), or None without the data."""
    files = sorted(DATA.glob("human_review*.parquet"))
    if not files:
        return None
    import pandas as pd

    frames = [pd.read_parquet(f, columns=["paper_id", "review_summary"]) for f in files]
    merged = frames[0]
    for index, frame in enumerate(frames[1:], start=2):
        merged = merged.merge(frame, on="paper_id", suffixes=("", f"_{index}"))
    columns = [c for c in merged.columns if c.startswith("review_summary")]
    return [[str(r[c]) for c in columns] for _, r in merged.iterrows() if all(str(r[c]).strip() for c in columns)]


def generated_reviews(papers: int, reviews: int, seed: int) -> list[list[str]]:
    rng, words = random.Random(seed), lexicon(12000, seed)
    return [[review(rng, words, rng.randint(6, 14)) for _ in range(reviews)] for _ in range(papers)]


def gre_bench_pairs(corpus: list[list[str]], papers: int, candidates: int, seed: int, synopsis: bool = False):
    """The GRE-bench shape: per paper, its human reviews as references (and as the human baseline,
    each against the others) plus `candidates` candidate reviews. The candidates stand in for LLM
    reviews: other papers' reviews, so lengths and vocabulary are real; throughput does not
    depend on what they say."""
    rng = random.Random(seed)
    words = lexicon(12000, seed) if synopsis else []
    chosen = rng.sample(range(len(corpus)), papers)
    pairs = []
    for index in chosen:
        abstract_text = abstract(rng, words) if synopsis else None  # GEM-S: a stand-in abstract
        references = {("human", index, j): text for j, text in enumerate(corpus[index])}
        others = [i for i in rng.sample(range(len(corpus)), candidates + 1) if i != index][:candidates]
        stand_ins = {("model", index, c): rng.choice(corpus[other]) for c, other in enumerate(others)}
        pairs += task_pairs({**stand_ins, **references}, references, synopsis=abstract_text)
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--arch", default="10m", help="tiny, 10m, llama-3.2-1b or llama-3.1-8b (random weights)")
    parser.add_argument("--papers", type=int, default=12)
    parser.add_argument("--candidates", type=int, default=5, help="candidate reviews per paper besides the humans")
    parser.add_argument("--reviews", type=int, default=3, help="reviews per paper when generating")
    parser.add_argument("--vocab", type=int, default=16000)
    parser.add_argument("--gem-s", action="store_true", help="GEM-S shape: a ~200-word synopsis in every prompt")
    parser.add_argument("--generated", action="store_true", help="ignore the real reviews even if present")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["auto", "bfloat16", "float32"], default="auto", help="auto: bf16 on cuda")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved runs of each side (A B A B …)")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="each repeat scores other papers (both sides the same ones), as a job's chunks do: new lengths, so "
        "no shape-keyed cache (allocator blocks, kernel plans) is warm",
    )
    args = parser.parse_args()

    corpus = None if args.generated else real_reviews()
    source = "ICLR 2023 preprocessed reviews" if corpus else "generated reviews"
    corpus = corpus or generated_reviews(max(200, args.papers * 4), args.reviews, args.seed)
    sets = [
        gre_bench_pairs(corpus, args.papers, args.candidates, args.seed + 1000 * repeat, synopsis=args.gem_s)
        for repeat in range(args.repeats if args.fresh else 1)
    ]
    pairs = sets[0]

    dtype = torch_dtype(args.dtype, args.device)
    # A tokenizer trained on the whole corpus, so its vocabulary (and the LM head) has a realistic size.
    tokenizer = build_tokenizer([t for texts in corpus for t in texts], vocab_size=args.vocab)
    model = build_causal_lm(len(tokenizer), args.arch, seed=args.seed, dtype=dtype, device=args.device)
    params = parameter_count(model)

    def tokens_of(chosen: list) -> int:  # noqa: ANN001 (GEM pairs)
        requests = [request for p in chosen for request in (p.conditional_request(), p.marginal_request())]
        return sum(encode_request(tokenizer, list(r.prefix), r.answer).length for r in requests)

    print(
        f"{source}{' + synopses (GEM-S)' if args.gem_s else ''}: {args.papers} papers × ({args.candidates} "
        f"candidates + the human baseline), {len(pairs)} ordered pairs, {tokens_of(pairs) / len(pairs):.0f} tokens "
        f"per pair (conditional + marginal); model {args.arch} ({params / 1e6:.1f}M parameters, {dtype}, "
        f"{args.device})" + (f"; other papers each repeat ({len(sets)} sets)" if args.fresh else "")
    )

    scorer = TransformersScorer(model=model, tokenizer=tokenizer)
    score_pairs(scorer, pairs[:6])  # warm-up for both paths
    score_one_at_a_time(model, tokenizer, [pairs[0].conditional_request(), pairs[1].conditional_request()])
    # Per run, in order: its pairs, their tokens and (engine) the tokens it computed.
    runs: dict[str, list[tuple[int, int, int]]] = {"naive": [], "engine": []}

    def naive_pmi() -> list[float]:
        chosen = sets[len(runs["naive"]) % len(sets)]
        runs["naive"].append((len(chosen), tokens_of(chosen), 0))
        out = []
        for pair in chosen:
            with_x, without_x = score_one_at_a_time(
                model, tokenizer, [pair.conditional_request(), pair.marginal_request()]
            )
            out.append(with_x - without_x)
        return out

    def engine_pmi() -> list[float]:
        chosen = sets[len(runs["engine"]) % len(sets)]
        scorer.forward_calls = scorer.computed_tokens = scorer.padded_tokens = 0
        out = [s.pmi for s in score_pairs(scorer, chosen)]
        runs["engine"].append((len(chosen), tokens_of(chosen), scorer.computed_tokens))
        return out

    results, walls, cpus, _ = interleaved({"naive": naive_pmi, "engine": engine_pmi}, args.repeats, args.device)
    naive, engine = results["naive"], results["engine"]
    print(f"{args.repeats} interleaved runs each; wall s (min / median / max), CPU s:")
    for name in walls:
        print(f"  {name:<8}{spread(walls[name]):>28}   CPU {spread(cpus[name])}")

    def rate(name: str, part: int) -> float:
        return median_rate([run[part] for run in runs[name]], walls[name])

    naive_pps, engine_pps = rate("naive", 0), rate("engine", 0)
    naive_tps, engine_tps = rate("naive", 1), rate("engine", 1)
    difference = max(abs(a - b) for a, b in zip(naive, engine, strict=True))
    print(f"{'method':<34}{'pairs/s':>10}{'tokens/s':>12}{'forwards':>10}")
    print(f"{'naive (2 forwards per pair)':<34}{naive_pps:>10.1f}{naive_tps:>12.0f}{2 * len(sets[-1]):>10}")
    print(f"{'engine (shared marginals+prefixes)':<34}{engine_pps:>10.1f}{engine_tps:>12.0f}{scorer.forward_calls:>10}")
    print(
        f"speed-up: {engine_pps / naive_pps:.2f}x (medians of each run's rate)   max |PMI difference| "
        f"{difference:.2e}{' (within 1e-4)' if difference <= 1e-4 else ' (OVER 1e-4)'}; tokens/s counts the pairs' "
        "tokens for both"
    )
    bound_missed = engine_pps <= naive_pps or (dtype == torch.float32 and difference > 1e-3)
    if args.device == "cuda":
        _, served, computed = runs["engine"][-1]
        print(
            f"engine computed {computed} tokens for {served} pair tokens ({served / computed:.1f}x reuse), "
            f"{scorer.padded_tokens} with padding, in {scorer.forward_calls} passes (a pass's fixed cost measured "
            f"as {scorer.pass_overhead_tokens:.0f} tokens' worth)"
        )
        for name, tokens_per_second in (
            ("naive", naive_tps),
            ("engine, hardware", rate("engine", 2)),
            ("engine, pair-equivalent (can pass 100 %: shared marginals and prefixes count once per pair)", engine_tps),
        ):
            print(mfu_line(name, params, tokens_per_second, 1.0, args.device))
    verdict = "MISSED" if bound_missed else "met"
    print(f"bound: the engine faster than the naive pairs, and within 1e-3 of them in float32: {verdict}")
    if bound_missed:
        sys.exit(1)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
