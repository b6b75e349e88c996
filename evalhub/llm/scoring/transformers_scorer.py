"""Summed log-probabilities of forced answers under an in-process transformers model.

The fast path for GEM. Requests form a tree of shared tokens, and each part of it runs once:
- a trunk: the tokens that several distinct prefixes begin with (GEM-S's system prompt and
  abstract, the same for every candidate review x of a paper; GEM's system prompt and "Not
  Available", the same for every x of every paper);
- a branch: the rest of one prefix (the candidate x), run on top of its trunk's KV cache;
- the answers that share that prefix (the references y), run on top of the prefix's cache.

How a batch runs:
1. Trunks are right-padded to one length and run together.
2. Their KV cache rows are copied out to one row per prefix, and the branches run on top,
   right-padded, with the trunk padding masked out and positions continuing from each
   trunk's real length; the last real position of each branch gives the log-probability of
   its answers' first token.
3. The same again one level down: the prefix cache is copied to one row per answer and the
   answers (minus their last token) run on top of it.
Branches and answers run in passes of rows alike in length (`length_runs`): each pass costs
its rows times its longest row, plus a fixed cost per forward (launching a small model's
kernels on a GPU costs as much as hundreds of tokens), and the split minimises the sum.
Right padding everywhere means no query row is ever fully masked (left-padded rows would
be, and their NaNs leak through zero attention weights), and trailing pads cannot affect
earlier positions under a causal mask; the padding left inside a cache is masked out.

Log-softmax runs in float32 only at scored positions, in chunks of positions, straight from
the final hidden states: the full [batch, seq, vocab] logits tensor is never built.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalhub.llm import interrupt
from evalhub.llm.scoring.base import ScoreRequest, ScoreResult, TokenDistribution
from evalhub.llm.scoring.batch_plan import Group, Trunk, halves, length_runs, shared_trunks
from evalhub.llm.scoring.chat_template import EncodedRequest, encode_request
from evalhub.llm.types import Message

logger = logging.getLogger(__name__)


@dataclass
class _Context:
    """What a pass leaves for the next level: its KV cache and hidden states (on the device), and
    on the host which cache columns are real tokens per row and each row's count of real tokens so
    far. Kept on the host so the next pass plans its columns without waiting for the device."""

    cache: Any  # torch values: torch is imported on first use, so they are typed loosely
    hidden: Any
    mask: np.ndarray
    lengths: np.ndarray


class TransformersScorer:
    def __init__(
        self,
        model_path: str = "",
        *,
        model: Any = None,
        tokenizer: Any = None,
        device: str | None = None,
        dtype: str | None = None,
        max_batch_tokens: int | None = None,
        logit_chunk_tokens: int | None = None,
        max_length: int | None = None,
        pass_overhead_tokens: float | None = None,
    ) -> None:
        import torch

        from evalhub.llm.local_models import load_causal_lm, pick_device

        self._torch = torch
        if model is None or tokenizer is None:
            model, tokenizer = load_causal_lm(model_path, device, dtype)
        self.model, self.tokenizer = model, tokenizer
        self.device = pick_device(device) if device else next(model.parameters()).device.type
        self.model.to(self.device)
        self.max_batch_tokens = max_batch_tokens or self._default_budget()
        self.logit_chunk_tokens = logit_chunk_tokens or self._default_logit_chunk()
        # The longest sequence the model takes (callers truncate their inputs to it; see GEM's runner).
        self.max_length = max_length or getattr(model.config, "max_position_embeddings", None)
        self.forward_calls = 0  # counted so tests and benchmarks can see the work done
        self._check_head()
        self.scored_tokens = 0
        self.computed_tokens = 0  # real (unpadded) tokens run through the model: trunks, branches, answers once each
        self.padded_tokens = 0  # the same with the padding each pass ran
        # What a forward pass costs besides its tokens, in tokens' worth: how much padding a
        # split into passes of like-length rows may add to save a pass (see `length_runs`).
        self.pass_overhead_tokens = (
            self._default_pass_overhead() if pass_overhead_tokens is None else pass_overhead_tokens
        )

    # --- public interface ----------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[float]:
        return [result.logprob for result in self.score_detailed(requests)]

    def score_detailed(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        encoded = [encode_request(self.tokenizer, list(r.prefix), r.answer) for r in requests]
        results: list[ScoreResult | None] = [None] * len(requests)
        for batch in self._batches(encoded):
            interrupt.check()  # a paused or cancelled job stops between batches
            self._run_with_backoff(batch, encoded, results)
        scored = [result for result in results if result is not None]
        assert len(scored) == len(results), "every request gets exactly one score"
        return scored

    def next_token_distribution(
        self, messages: list[Message], candidates: Sequence[str] = ("1", "2", "3", "4", "5")
    ) -> TokenDistribution:
        """Probabilities of each candidate as the assistant's first token (e.g. a Likert score)."""
        interrupt.check()
        torch = self._torch
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        candidate_ids, multi = {}, []
        for candidate in candidates:
            pieces = self.tokenizer(candidate, add_special_tokens=False)["input_ids"]
            candidate_ids[candidate] = pieces[0]
            if len(pieces) != 1:
                multi.append(candidate)
        with torch.inference_mode():
            hidden = self.model.base_model(input_ids=torch.tensor([ids], device=self.device)).last_hidden_state
            logprobs = self._log_softmax(hidden[0, -1:])[0]
        self.forward_calls += 1
        probabilities = {c: float(logprobs[i].exp()) for c, i in candidate_ids.items()}
        return TokenDistribution(probabilities=probabilities, multi_token_candidates=multi)

    # --- batching ------------------------------------------------------------------------

    def _default_budget(self) -> int:
        if self.device != "cuda":
            return 16384
        free, _ = self._torch.cuda.mem_get_info()
        config = self.model.config
        heads = getattr(config, "num_key_value_heads", config.num_attention_heads)
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        bytes_per = 2  # bf16
        kv = 2 * config.num_hidden_layers * heads * head_dim * bytes_per
        activations = 16 * config.hidden_size * bytes_per + 4 * config.intermediate_size * bytes_per
        # Each token's KV may be copied once per answer row; leave room for that and for logits chunks.
        return max(1024, int(free * 0.5 / (2 * kv + activations)))

    def _default_logit_chunk(self) -> int:
        if self.device == "cuda":
            return 2048
        # On CPU, logits for about 8M vocabulary entries at a time (32 MB in float32) stay in cache
        # between the projection, the log-softmax and the gather: measured a third faster for the
        # 10M benchmark model than 2048 positions at a time.
        return max(16, int(2**23 // self.model.get_output_embeddings().out_features))

    def _default_pass_overhead(self) -> float:
        if self.device != "cuda":
            return 16.0  # CPU kernels run in step with Python: padding costs far more than a call
        return self._measured_pass_overhead()

    def _measured_pass_overhead(self) -> float:
        """A forward's fixed cost in tokens' worth, measured on this model and host.

        Each pass launches every layer's kernels from Python; for a small model on a GPU that takes
        longer than the GPU's work on a few thousand tokens (on a lent H200 with a 1B model, ~65 ms a
        pass: 397 passes of like-length rows, no padding, ran 7× slower than 23 padded ones). A pass of 8 tokens
        times that cost; passes four times larger each, until one takes four times as long, give the
        cost of a token. Rounded to a power of two, so plans stay the same from run to run.
        """
        torch = self._torch
        vocab = self.model.get_output_embeddings().out_features
        probe = [(7 * i + 3) % vocab for i in range(2048)]
        sync = torch.cuda.synchronize if self.device == "cuda" else (lambda: None)

        def seconds(rows: int, length: int) -> float:
            with torch.inference_mode():
                parent = self._extend(None, None, [probe[:64]])
                sync()
                start = time.perf_counter()
                self._extend(parent, [0] * rows, [probe[:length]] * rows)
                sync()
            return time.perf_counter() - start

        seconds(1, 8)  # the first pass of a shape chooses its kernels
        fixed = min(seconds(1, 8) for _ in range(3))
        rows = 1
        while True:
            seconds(rows, 1024)
            large = min(seconds(rows, 1024) for _ in range(2))
            if large > 4 * fixed or rows * 1024 * 4 > self.max_batch_tokens:
                break
            rows *= 4
        per_token = max(large - fixed, 1e-12) / (rows * 1024 - 8)
        self.forward_calls = self.padded_tokens = 0
        return float(2 ** round(math.log2(min(max(fixed / per_token, 16), 65536))))

    def _batches(self, encoded: list[EncodedRequest]) -> list[list[Trunk]]:
        groups: dict[tuple[int, ...], Group] = {}
        for index, request in enumerate(encoded):
            groups.setdefault(request.prefix_ids, Group(request.prefix_ids, [])).members.append(index)
        parts = [part for trunk in shared_trunks(list(groups.values())) for part in self._fit(trunk, encoded)]
        # Longest first, like lm-eval's Collator: an out-of-memory error shows up on the first
        # batch, and trunks of similar length batch together with little padding (branches and
        # answers are padded only within their own pass; answers are regrouped by length).
        parts.sort(key=lambda t: (-(t.length + max(len(g.prefix_ids) - t.length for g in t.groups)), t.ids))
        batches: list[list[Trunk]] = []
        current: list[Trunk] = []
        for part in parts:
            if current and self._cost([*current, part], encoded) > self.max_batch_tokens:
                batches.append(current)
                current = []
            current.append(part)
        if current:
            batches.append(current)
        return batches

    def _fit(self, trunk: Trunk, encoded: list[EncodedRequest]) -> list[Trunk]:
        """A trunk whose prefixes and answers exceed the budget, split into parts that fit (each part
        runs the trunk again; a single prefix is never split here, its answers are chunked later)."""
        parts: list[Trunk] = []
        for group in trunk.groups:
            if (
                parts
                and self._cost([Trunk(trunk.length, [*parts[-1].groups, group])], encoded) <= self.max_batch_tokens
            ):
                parts[-1].groups.append(group)
            else:
                parts.append(Trunk(trunk.length, [group]))
        return parts

    @staticmethod
    def _cost(batch: list[Trunk], encoded: list[EncodedRequest]) -> int:
        """Padded tokens a batch computes: every trunk once, every branch once, every answer once
        (the per-row copies of the caches are bounded separately, chunk by chunk)."""
        groups = [(trunk.length, group) for trunk in batch for group in trunk.groups]
        rows = [i for _, group in groups for i in group.members]
        trunk_len = max(trunk.length for trunk in batch)
        branch_len = max(len(group.prefix_ids) - length for length, group in groups)
        answer_len = max(len(encoded[i].target_ids) for i in rows)
        return len(batch) * trunk_len + len(groups) * branch_len + len(rows) * answer_len

    def _run_with_backoff(self, batch: list[Trunk], encoded: list[EncodedRequest], results: list[Any]) -> None:
        torch = self._torch
        try:
            self._run(batch, encoded, results)
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            smaller = halves(batch)
            if smaller is None:
                raise
            self.max_batch_tokens = max(256, self.max_batch_tokens // 2)
            logger.warning("out of memory; batch budget lowered to %d tokens", self.max_batch_tokens)
            for half in smaller:
                self._run_with_backoff(half, encoded, results)

    # --- the forward passes -----------------------------------------------------------

    def _run(self, batch: list[Trunk], encoded: list[EncodedRequest], results: list[Any]) -> None:
        torch = self._torch
        groups = [group for trunk in batch for group in trunk.groups]
        owner = [row for row, trunk in enumerate(batch) for _ in trunk.groups]
        branches = [group.prefix_ids[trunk.length :] for trunk in batch for group in trunk.groups]
        trunk_widths = [batch[row].length for row in owner]
        scored: list[tuple[list[int], Any]] = []  # (request indices, their totals on the device)
        with torch.inference_mode():
            trunks = self._extend(None, None, [trunk.ids for trunk in batch])
            for run in length_runs(
                [len(b) for b in branches], trunk_widths, self.max_batch_tokens, self.pass_overhead_tokens
            ):
                prefixes = self._extend(trunks, [owner[g] for g in run], [branches[g] for g in run])
                run_groups = [groups[g] for g in run]
                scored.append(self._score_answers(prefixes, run_groups, [len(branches[g]) for g in run], encoded))
                del prefixes  # one run's prefix caches at a time
            # One wait for the device per batch, here: every pass before it was queued without one.
            totals = torch.cat([t for _, t in scored]).tolist()
        indices = [index for members, _ in scored for index in members]
        for index, total in zip(indices, totals, strict=True):
            request = encoded[index]
            results[index] = ScoreResult(
                logprob=total, tokens=len(request.target_ids), end_token_appended=request.end_token_appended
            )
        self.scored_tokens += sum(len(encoded[index].target_ids) for index in indices)
        self.computed_tokens += sum(trunk.length for trunk in batch) + sum(map(len, branches))

    def _score_answers(
        self, prefixes: _Context, groups: list[Group], branch_lengths: list[int], encoded: list[EncodedRequest]
    ) -> tuple[list[int], Any]:
        """Every answer of `groups`, whose prefixes are the rows of `prefixes`: (the request indices,
        their summed log-probabilities, still on the device)."""
        rows = [(group_row, index) for group_row, group in enumerate(groups) for index in group.members]
        row_group = [group_row for group_row, _ in rows]
        targets = [encoded[index].target_ids for _, index in rows]
        # Each answer's first token is predicted at its prefix's last real position.
        width = prefixes.hidden.shape[1]
        ends = self._to_device([row * width + length - 1 for row, length in enumerate(branch_lengths)])
        last_hidden = prefixes.hidden.flatten(0, 1).index_select(0, ends)
        firsts = self._to_device([t[0] for t in targets])
        totals = self._target_logprobs(last_hidden.index_select(0, self._to_device(row_group)), firsts).double()
        # The per-row copies of the prefix KV cache exist for one pass of answers at a time.
        widths = [len(groups[group_row].prefix_ids) for group_row in row_group]
        rest = [len(t) - 1 for t in targets]  # the answer's tokens after the first, run on the prefix cache
        for chunk in length_runs(rest, widths, self.max_batch_tokens, self.pass_overhead_tokens):
            if rest[chunk[0]]:  # the longest of its pass: a pass of one-token answers has nothing to run
                totals = self._answer_pass(prefixes, chunk, row_group, targets, totals)
        self.computed_tokens += sum(rest)
        return [index for _, index in rows], totals

    def _to_device(self, values: Any) -> Any:
        """Integers sent to the device without waiting for it: a copy from ordinary host memory
        first waits for every queued kernel, so each pass would start only when the last had ended."""
        host = self._torch.as_tensor(np.asarray(values, dtype=np.int64))
        if self.device != "cuda":
            return host
        return host.pin_memory().to(self.device, non_blocking=True)

    def _extend(self, parent: _Context | None, source: list[int] | None, segments: Sequence[Sequence[int]]) -> _Context:
        """Run `segments` (one per row, right-padded) on top of rows `source` of `parent`'s cache,
        or from the start when there is no parent."""
        pad = self.tokenizer.pad_token_id or 0
        width = max(1, max(map(len, segments)))
        lengths = np.array([len(segment) for segment in segments], dtype=np.int64)
        # Padded on the host and sent in one copy: a copy per row waited for the GPU each time.
        ids = np.full((len(segments), width), pad, dtype=np.int64)
        for row, segment in enumerate(segments):
            ids[row, : len(segment)] = segment
        own_mask = np.arange(width)[None, :] < lengths[:, None]
        self.forward_calls += 1
        self.padded_tokens += ids.size
        if parent is None:
            # No attention mask: the pads are on the right, so under the causal mask no real
            # token sees them, and attention can take its fast causal path.
            out = self.model.base_model(input_ids=self._to_device(ids), use_cache=True)
            return _Context(out.past_key_values, out.last_hidden_state, own_mask, lengths)
        assert source is not None
        parent_mask = parent.mask[source]
        # Only the cache columns some selected row uses: the parent pass padded to its widest row.
        used = np.flatnonzero(parent_mask.any(0))
        columns = None if len(used) == parent_mask.shape[1] else used
        mask = np.concatenate([parent_mask if columns is None else parent_mask[:, columns], own_mask], axis=1)
        offsets = parent.lengths[source]
        positions = offsets[:, None] + np.arange(width)[None, :]
        out = self.model.base_model(
            input_ids=self._to_device(ids),
            attention_mask=self._to_device(mask),
            position_ids=self._to_device(positions),
            past_key_values=self._rows_of(
                parent.cache, self._to_device(source), None if columns is None else self._to_device(columns)
            ),
            use_cache=True,
        )
        return _Context(out.past_key_values, out.last_hidden_state, mask, offsets + lengths)

    def _rows_of(self, cache: Any, rows: Any, columns: Any) -> Any:
        """A cache of `rows` of `cache` (a row may repeat), restricted to `columns` where given.

        The columns, where some go unused, are taken first from the parent's fewer rows; each row's
        keys are then copied once here and once more when the pass appends its own. Filling the layers
        directly matters: `DynamicCache(ddp_cache_data=...)` would copy every layer once more (it
        appends to an empty cache): in a profile of an 8B model on an H100 the appends took a tenth
        of the GPU's kernel time, half of it that copy of each row's whole prefix.
        """
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        filled: Any = DynamicCache(config=self.model.config)  # its layers are a union of kinds in the stubs
        for layer, parent in zip(filled.layers, cache.layers, strict=True):
            keys, values = parent.keys, parent.values
            if columns is not None:
                keys, values = keys.index_select(2, columns), values.index_select(2, columns)
            keys, values = keys.index_select(0, rows), values.index_select(0, rows)
            if type(layer) is DynamicLayer:
                layer.keys, layer.values, layer.dtype, layer.device = keys, values, keys.dtype, keys.device
                layer.is_initialized = True
            else:  # a sliding-window layer keeps counts of its own: let it take the keys its way
                layer.update(keys, values)
        return filled

    def _answer_pass(
        self, prefixes: _Context, chunk: list[int], row_group: list[int], targets: Any, totals: Any
    ) -> Any:
        """Score tokens 2..n of each answer in `chunk` on top of its prefix's cached keys and values."""
        answers = self._extend(prefixes, [row_group[row] for row in chunk], [targets[row][:-1] for row in chunk])
        width = answers.hidden.shape[1]
        # The scored positions, flattened, and the token each predicts: planned on the host, so
        # selecting them needs no count back from the device.
        positions = [k * width + p for k, row in enumerate(chunk) for p in range(len(targets[row]) - 1)]
        labels = [token for row in chunk for token in targets[row][1:]]
        owners = [row for row in chunk for _ in range(len(targets[row]) - 1)]
        hidden = answers.hidden.flatten(0, 1).index_select(0, self._to_device(positions))
        values = self._target_logprobs(hidden, self._to_device(labels))
        return totals.index_add(0, self._to_device(owners), values.double())

    def _target_logprobs(self, hidden: Any, targets: Any) -> Any:
        """log p(target) at each row of `hidden`, in float32, a chunk of rows at a time."""
        torch = self._torch
        out = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
        for start in range(0, hidden.shape[0], self.logit_chunk_tokens):
            chunk = slice(start, start + self.logit_chunk_tokens)
            # log_softmax then gather: measured faster on CPU than logit(t) − logsumexp(logits).
            out[chunk] = self._log_softmax(hidden[chunk]).gather(1, targets[chunk, None])[:, 0]
        return out

    def _log_softmax(self, hidden: Any) -> Any:
        return self._torch.log_softmax(self._logits(hidden), dim=-1)

    def _logits(self, hidden: Any) -> Any:
        # The head runs on the hidden states of the positions scored only (the model's own forward
        # would project every position): what follows the projection is each family's own rule.
        logits = self.model.get_output_embeddings()(hidden).float()
        config = self.model.config
        if getattr(config, "logits_scaling", None):  # Granite divides its logits
            logits = logits / config.logits_scaling
        if getattr(config, "final_logit_softcapping", None):  # Gemma 2 and kin
            cap = config.final_logit_softcapping
            logits = (logits / cap).tanh() * cap
        if getattr(self.model, "logit_scale", None) is not None:  # Cohere
            logits = logits * self.model.logit_scale
        return logits

    def _check_head(self) -> None:
        """Refuse a model whose own forward changes its logits in a way `_logits` does not know (a
        future architecture): on a short probe, the fast path must equal the model's forward, or
        every GEM PMI and DHP digit probability it gave would be silently wrong."""
        torch = self._torch
        vocab = self.model.get_output_embeddings().out_features
        ids = torch.tensor([[(7 * i + 3) % vocab for i in range(12)]], device=self.device)
        with torch.inference_mode():
            own = torch.log_softmax(self.model(input_ids=ids).logits[0].float(), dim=-1)
            fast = self._log_softmax(self.model.base_model(input_ids=ids).last_hidden_state[0])
        gap = float((own - fast).abs().max())
        full_precision = next(self.model.parameters()).dtype == torch.float32
        if gap > (1e-4 if full_precision else 5e-2):
            name = type(self.model).__name__
            raise ValueError(
                f"{name} is not supported by the log-prob scorer: its own forward changes the logits in a way the "
                f"scorer does not reproduce (they differ by {gap:.3g} nats on a probe), so its scores would be "
                "wrong. Use a supported architecture or an openai-compatible server (vLLM) for this model."
            )
