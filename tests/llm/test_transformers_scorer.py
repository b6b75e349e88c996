"""The batched, prefix-sharing scorer against a plain one-request-per-forward computation."""

from __future__ import annotations

import math
import os
import random

import pytest
import torch

from evalhub.llm.scoring.base import ScoreRequest
from evalhub.llm.scoring.batch_plan import Group, Trunk, halves, length_runs, shared_trunks
from evalhub.llm.scoring.chat_template import TemplateError, encode_request
from evalhub.llm.scoring.reference import score_one_at_a_time
from evalhub.llm.scoring.transformers_scorer import TransformersScorer
from evalhub.llm.tiny import build_tokenizer
from tests.tiny_models import CORPUS

SYSTEM = {"role": "system", "content": "Predict the review."}


def prefix(text: str) -> list[dict]:
    return [SYSTEM, {"role": "user", "content": text}]


def gem_shaped_requests(seed: int = 0) -> list[ScoreRequest]:
    """Shared prefixes (one per candidate, several answers each), unshared ones, mixed lengths."""
    rng = random.Random(seed)
    sentences = list(dict.fromkeys(CORPUS))
    requests = []
    for _ in range(4):  # four candidates, each with its own shared prefix
        shared = prefix(" ".join(rng.choices(sentences, k=rng.randint(1, 6))))
        for _ in range(rng.randint(1, 4)):
            requests.append(ScoreRequest.of(shared, " ".join(rng.choices(sentences, k=rng.randint(1, 5)))))
    for _ in range(3):
        requests.append(ScoreRequest.of(prefix(rng.choice(sentences)), rng.choice(sentences)))
    rng.shuffle(requests)
    return requests


def test_a_shared_prefix_runs_once_for_all_its_answers(tiny_model, tiny_tokenizer):
    shared = prefix("Abstract: We propose a new attention mechanism.")
    requests = [ScoreRequest.of(shared, sentence) for sentence in dict.fromkeys(CORPUS)]
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=100_000)
    scorer.score(requests)
    encoded = [encode_request(tiny_tokenizer, list(r.prefix), r.answer) for r in requests]
    # The prefix's tokens are computed once, each answer's once: nothing is run twice.
    assert scorer.computed_tokens == len(encoded[0].prefix_ids) + sum(len(e.target_ids) - 1 for e in encoded)
    assert scorer.forward_calls < 1 + len(requests), "answers share forward passes"


def papers_shaped_requests(papers: int = 3, candidates: int = 3, seed: int = 0) -> list[ScoreRequest]:
    """GEM-S-shaped: per paper an abstract every candidate's prefix begins with, one prefix per
    candidate review x (and the "Not Available" marginal), each scored on the other reviews."""
    rng = random.Random(seed)
    sentences = list(dict.fromkeys(CORPUS))
    requests = []
    for paper in range(papers):
        abstract = f"Abstract {paper}: " + " ".join(rng.choices(sentences, k=rng.randint(2, 5)))
        reviews = [" ".join(rng.choices(sentences, k=rng.randint(1, 3))) for _ in range(candidates)]
        for i, x in enumerate([*reviews, "Not Available"]):
            shown = prefix(f"{abstract}\nReview judgments from the first reviewer: {x}")
            requests += [ScoreRequest.of(shown, y) for j, y in enumerate(reviews) if j != i]
    rng.shuffle(requests)
    return requests


@pytest.mark.parametrize("budget", [64, 300, 100_000])
@pytest.mark.parametrize("shape", ["prefixes shared or not", "papers sharing trunks"])
def test_batched_prefix_sharing_scores_equal_the_unbatched_reference(tiny_model, tiny_tokenizer, budget, shape):
    requests = gem_shaped_requests() if shape == "prefixes shared or not" else papers_shaped_requests()
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=budget)
    fast = scorer.score(requests)
    assert fast == pytest.approx(score_one_at_a_time(tiny_model, tiny_tokenizer, requests), abs=1e-4)
    assert len(set(fast)) > len(fast) // 2, "different requests get different scores"


def test_a_pass_appends_to_each_layers_cache_once(tiny_model, tiny_tokenizer, monkeypatch):
    """A pass on top of a parent's rows gets those rows' keys as they are: appending them to an empty
    cache first copied every row's whole prefix once more per layer."""
    from transformers.cache_utils import DynamicLayer

    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=100_000)
    appends = []
    update = DynamicLayer.update
    monkeypatch.setattr(DynamicLayer, "update", lambda self, *a, **k: appends.append(self) or update(self, *a, **k))
    scored = scorer.score(papers_shaped_requests())
    assert len(appends) == scorer.forward_calls * tiny_model.config.num_hidden_layers
    assert scored == pytest.approx(score_one_at_a_time(tiny_model, tiny_tokenizer, papers_shaped_requests()), abs=1e-4)


def test_a_papers_abstract_runs_once_for_all_its_candidates(tiny_model, tiny_tokenizer):
    requests = papers_shaped_requests(papers=1, candidates=3)
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=100_000)
    scorer.score(requests)
    encoded = [encode_request(tiny_tokenizer, list(r.prefix), r.answer) for r in requests]
    prefixes = {e.prefix_ids for e in encoded}
    trunk = len(os.path.commonprefix([list(p) for p in prefixes]))
    shared = tiny_tokenizer.decode(next(iter(prefixes))[:trunk])
    assert shared.startswith("<s><|system|>"), "the trunk ends where x begins"
    assert shared.endswith("first reviewer: "), "the trunk ends where x begins"
    branches = sum(len(p) - trunk for p in prefixes)
    # The shared part once, each prefix's own part once, each answer once.
    assert scorer.computed_tokens == trunk + branches + sum(len(e.target_ids) - 1 for e in encoded)
    assert scorer.computed_tokens < sum(len(p) for p in prefixes), "less than running each prefix whole"


def test_trunks_follow_each_paper_not_the_system_prompt_every_paper_has():
    system = (1, 2, 3, 4)
    paper_a, paper_b = (*system, 10, 11, 12, 13), (*system, 20, 21, 22, 23)
    groups = [
        Group((*paper_a, 7, 7, 1), [0]),
        Group((*paper_a, 7, 7, 2), [1]),  # two reviews that begin alike…
        Group((*paper_a, 8, 1), [2]),  # …do not split their paper's trunk apart
        Group((*paper_b, 5), [3]),
        Group((*paper_b, 6), [4]),
        Group((30, 31), [5]),  # shares nothing: alone, with a one-token branch
    ]
    trunks = shared_trunks(list(reversed(groups)))
    assert [(t.length, [g.members[0] for g in t.groups]) for t in trunks] == [
        (8, [0, 1, 2]),
        (8, [3, 4]),
        (1, [5]),
    ]


def test_a_prefix_that_begins_another_keeps_a_branch_of_one_token():
    trunks = shared_trunks([Group((1, 2, 3), [0]), Group((1, 2, 3, 4, 5), [1])])
    assert [(t.length, len(t.groups)) for t in trunks] == [(2, 2)]


def test_a_batch_that_ran_out_of_memory_halves_by_trunk_then_prefix_then_answer():
    one, two = Group((1, 2), [0, 1, 2]), Group((1, 3), [3])
    assert halves([Trunk(1, [one]), Trunk(1, [two])]) == [[Trunk(1, [one])], [Trunk(1, [two])]]
    assert halves([Trunk(1, [one, two])]) == [[Trunk(1, [one])], [Trunk(1, [two])]]
    assert halves([Trunk(1, [one])]) == [[Trunk(1, [Group((1, 2), [0])])], [Trunk(1, [Group((1, 2), [1, 2])])]]
    assert halves([Trunk(1, [two])]) is None, "a single request cannot be split"


def test_scores_are_deterministic_and_keep_the_request_order(tiny_model, tiny_tokenizer):
    requests = gem_shaped_requests(seed=3)
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=300)
    first, second = scorer.score(requests), scorer.score(requests)
    assert first == second
    reordered = scorer.score(list(reversed(requests)))
    assert reordered == pytest.approx(list(reversed(first)), abs=1e-5)


def test_the_scored_tokens_are_the_answer_and_the_end_of_turn_token(tiny_tokenizer):
    encoded = encode_request(tiny_tokenizer, prefix("Abstract: attention."), "The reviewer appreciates it.")
    end = tiny_tokenizer.convert_tokens_to_ids("<|end|>")
    assert encoded.target_ids[-1] == end
    assert end not in encoded.target_ids[:-1]
    assert tiny_tokenizer.decode(encoded.target_ids[:-1]) == "The reviewer appreciates it."
    assert tiny_tokenizer.decode(encoded.prefix_ids).endswith("<|assistant|>\n")
    full = tiny_tokenizer.apply_chat_template(
        [*prefix("Abstract: attention."), {"role": "assistant", "content": "The reviewer appreciates it."}],
        tokenize=False,
    )
    joint = tiny_tokenizer(full, add_special_tokens=False)["input_ids"]
    assert list(encoded.prefix_ids + encoded.target_ids) == joint[: encoded.length]


def test_an_empty_answer_scores_only_the_end_of_turn_token(tiny_model, tiny_tokenizer):
    encoded = encode_request(tiny_tokenizer, prefix("x"), "")
    assert encoded.target_ids == (tiny_tokenizer.convert_tokens_to_ids("<|end|>"),)
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer)
    requests = [ScoreRequest.of(prefix("x"), ""), ScoreRequest.of(prefix("x"), "The reviewer questions it.")]
    assert scorer.score(requests) == pytest.approx(score_one_at_a_time(tiny_model, tiny_tokenizer, requests), abs=1e-4)


def test_a_token_straddling_the_prefix_and_answer_belongs_to_the_answer():
    # A template with no break before the answer, and a vocabulary that merges across it.
    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}{% endif %}"
    tokenizer = build_tokenizer(["The answer is yes. The answer is no."] * 50, vocab_size=300, chat_template=template)
    full_ids = tokenizer("The answer is yes", add_special_tokens=False)["input_ids"]
    prefix_only = tokenizer("The answ", add_special_tokens=False)["input_ids"]
    assert full_ids[: len(prefix_only)] != prefix_only, "the vocabulary must merge across the boundary for this test"
    encoded = encode_request(tokenizer, [{"role": "user", "content": "The answ"}], "er is yes")
    assert list(encoded.prefix_ids + encoded.target_ids[:-1]) == full_ids
    assert tokenizer.decode(encoded.target_ids[:1]) == " answer", "the straddling token is scored with the answer"
    assert encoded.end_token_appended
    assert encoded.target_ids[-1] == tokenizer.eos_token_id


def test_a_tokenizer_without_a_chat_template_is_refused_clearly(tiny_tokenizer):
    bare = build_tokenizer(CORPUS[:5], vocab_size=300, chat_template=None)
    with pytest.raises(TemplateError, match="no chat template"):
        encode_request(bare, prefix("x"), "y")


def test_the_next_token_distribution_matches_a_full_softmax(tiny_model, tiny_tokenizer):
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer)
    messages = prefix("Rate the coherence from 1 to 5.")
    distribution = scorer.next_token_distribution(messages)
    ids = tiny_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    with torch.inference_mode():
        probs = torch.softmax(tiny_model(input_ids=torch.tensor([ids])).logits[0, -1].float(), dim=-1)
    for digit in "12345":
        token = tiny_tokenizer(digit, add_special_tokens=False)["input_ids"][0]
        assert distribution.probabilities[digit] == pytest.approx(float(probs[token]), rel=1e-4)
    expected = sum(int(d) * p for d, p in distribution.probabilities.items()) / distribution.mass
    assert distribution.expected_score() == pytest.approx(expected)
    assert 0 < distribution.mass < 1


def padded_cost(runs: list[list[int]], lengths: list[int], overhead: float) -> float:
    return sum(len(run) * max(lengths[row] for row in run) + overhead for run in runs)


def every_split(rows: list[int]):
    """Every partition of `rows` into non-empty sets (Bell-number many: for a handful of rows)."""
    if not rows:
        yield []
        return
    first, rest = rows[0], rows[1:]
    for split in every_split(rest):
        yield [[first], *split]
        for i in range(len(split)):
            yield [*split[:i], [first, *split[i]], *split[i + 1 :]]


@pytest.mark.parametrize("seed", range(30))
def test_passes_of_like_length_rows_cost_the_least_of_every_possible_split(seed):
    rng = random.Random(seed)
    rows = rng.randint(1, 7)
    lengths = [rng.randint(1, 40) for _ in range(rows)]
    widths = [rng.randint(0, 30) for _ in range(rows)]
    capacity, overhead = rng.choice([70, 150, 10_000]), rng.choice([0, 5, 30, 400])

    def fits(run: list[int]) -> bool:
        return len(run) == 1 or len(run) * (max(lengths[r] for r in run) + max(widths[r] for r in run)) <= capacity

    runs = length_runs(lengths, widths, capacity, overhead)
    assert sorted(row for run in runs for row in run) == list(range(rows)), "every row in exactly one pass"
    assert all(fits(run) for run in runs)
    # Equal widths make the best split one of neighbours by length, which the planner finds exactly.
    if len(set(widths)) == 1:
        best = min(
            padded_cost(split, lengths, overhead) for split in every_split(list(range(rows))) if all(map(fits, split))
        )
        assert padded_cost(runs, lengths, overhead) == best


def test_with_no_cost_per_pass_no_row_is_padded_and_with_a_high_one_rows_share_a_pass():
    lengths = [5, 50, 5, 49, 500]
    assert sorted(map(sorted, length_runs(lengths, [0] * 5, 10_000, 0))) == [[0, 2], [1], [3], [4]]
    assert length_runs(lengths, [0] * 5, 10_000, 10_000) == [[4, 1, 3, 0, 2]]
    # 50 and 49 share a pass (one token of padding saves a pass), 5 and 50 do not (45 would)
    assert sorted(map(sorted, length_runs(lengths, [0] * 5, 10_000, 60))) == [[0, 2], [1, 3], [4]]


def test_branches_of_unlike_length_run_in_passes_of_like_length(tiny_model, tiny_tokenizer):
    """One paper's candidates, a one-sentence review and a twenty-sentence one: padding every branch to
    the longest computed the short ones' prefixes many times over."""
    sentences = list(dict.fromkeys(CORPUS))
    requests = [
        ScoreRequest.of(prefix("Abstract: attention. Review: " + " ".join(sentences[:k])), y)
        for k in (1, 1, 2, 20, 21)
        for y in sentences[:2]
    ]
    scorer = TransformersScorer(
        model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=100_000, pass_overhead_tokens=0
    )
    scored = scorer.score(requests)
    assert scorer.padded_tokens == scorer.computed_tokens, "a pass per length: no padding"
    assert scored == pytest.approx(score_one_at_a_time(tiny_model, tiny_tokenizer, requests), abs=1e-4)


def test_a_passs_fixed_cost_is_measured_as_a_power_of_two_tokens(tiny_model, tiny_tokenizer):
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=100_000)
    measured = scorer._measured_pass_overhead()
    assert 16 <= measured <= 65536 and measured == 2 ** round(math.log2(measured))
    assert scorer.forward_calls == scorer.padded_tokens == 0, "the probe is not counted as scoring work"


def test_an_out_of_memory_batch_is_split_and_still_scores_everything(tiny_model, tiny_tokenizer, monkeypatch):
    requests = gem_shaped_requests(seed=5)
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=100_000)
    real_run, calls = scorer._run, []

    def flaky_run(batch, encoded, results):
        calls.append(sum(len(g.members) for trunk in batch for g in trunk.groups))
        if len(calls) == 1:
            raise torch.OutOfMemoryError("simulated")
        real_run(batch, encoded, results)

    monkeypatch.setattr(scorer, "_run", flaky_run)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    scores = scorer.score(requests)
    assert calls[0] == len(requests)
    assert len(calls) >= 3
    assert scorer.max_batch_tokens == 50_000
    assert scores == pytest.approx(score_one_at_a_time(tiny_model, tiny_tokenizer, requests), abs=1e-4)


def test_loading_a_local_model_draws_no_progress_bar_into_the_processs_output(
    tiny_model, tiny_tokenizer, tmp_path, capfd
):
    """Quickstart's in-process worker shares its terminal: transformers' 'Loading weights' bar came
    through between its lines."""
    from evalhub.llm.local_models import _load

    tiny_model.save_pretrained(tmp_path)
    tiny_tokenizer.save_pretrained(tmp_path)
    capfd.readouterr()
    _load(str(tmp_path), "cpu", "")
    out, err = capfd.readouterr()
    assert "Loading weights" not in err + out and "\r" not in err + out
