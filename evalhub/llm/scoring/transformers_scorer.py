"""Summed log-probabilities of forced answers under an in-process transformers model.

The fast path for GEM: requests that share a prefix (the same system + user turns, with
different forced answers) run the prefix once and reuse its KV cache for every answer.

How a batch runs:
1. Prefixes (each distinct one once) are right-padded to one length and run together; the
   last real position of each gives the log-probability of its answers' first token.
2. The KV cache rows are copied out to one row per answer; the answers (minus their last
   token) are right-padded and run on top of the cache, with the prefix padding masked out
   and positions continuing from each prefix's real length.
Right padding everywhere means no query row is ever fully masked (left-padded rows would
be, and their NaNs leak through zero attention weights), and trailing pads cannot affect
earlier positions under a causal mask.

Log-softmax runs in float32 only at scored positions, in chunks of positions, straight from
the final hidden states: the full [batch, seq, vocab] logits tensor is never built.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from evalhub.llm.scoring.base import ScoreRequest, ScoreResult, TokenDistribution
from evalhub.llm.scoring.chat_template import EncodedRequest, encode_request
from evalhub.llm.types import Message

logger = logging.getLogger(__name__)


@dataclass
class _Group:
    prefix_ids: tuple[int, ...]
    members: list[int]  # request indices


class TransformersScorer:
    def __init__(
        self,
        model_path: str = "",
        *,
        model=None,
        tokenizer=None,
        device: str | None = None,
        dtype: str | None = None,
        max_batch_tokens: int | None = None,
        logit_chunk_tokens: int = 2048,
        max_length: int | None = None,
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
        self.logit_chunk_tokens = logit_chunk_tokens
        # The longest sequence the model takes (callers truncate their inputs to it; see GEM's runner).
        self.max_length = max_length or getattr(model.config, "max_position_embeddings", None)
        self.forward_calls = 0  # counted so tests and benchmarks can see the work done
        self.scored_tokens = 0
        self.computed_tokens = 0  # real (unpadded) tokens run through the model: prefixes once, answers once

    # --- public interface ----------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[float]:
        return [result.logprob for result in self.score_detailed(requests)]

    def score_detailed(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        encoded = [encode_request(self.tokenizer, list(r.prefix), r.answer) for r in requests]
        results: list[ScoreResult | None] = [None] * len(requests)
        for batch in self._batches(encoded):
            self._run_with_backoff(batch, encoded, results)
        assert all(result is not None for result in results), "every request gets exactly one score"
        return results  # type: ignore[return-value]

    def next_token_distribution(
        self, messages: list[Message], candidates: Sequence[str] = ("1", "2", "3", "4", "5")
    ) -> TokenDistribution:
        """Probabilities of each candidate as the assistant's first token (e.g. a Likert score)."""
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

    def _batches(self, encoded: list[EncodedRequest]) -> list[list[_Group]]:
        groups: dict[tuple[int, ...], _Group] = {}
        for index, request in enumerate(encoded):
            groups.setdefault(request.prefix_ids, _Group(request.prefix_ids, [])).members.append(index)
        # Longest prefix first, like lm-eval's Collator: an out-of-memory error shows up on the first
        # batch, and prefixes of similar length batch together with little padding (the answers are
        # regrouped by their own lengths in _answer_chunks).
        ordered = sorted(
            groups.values(),
            key=lambda g: (-len(g.prefix_ids), -max(len(encoded[i].target_ids) for i in g.members)),
        )
        batches: list[list[_Group]] = []
        current: list[_Group] = []
        for group in ordered:
            candidate = [*current, group]
            if current and self._cost(candidate, encoded) > self.max_batch_tokens:
                batches.append(current)
                candidate = [group]
            current = candidate
        if current:
            batches.append(current)
        return batches

    @staticmethod
    def _cost(groups: list[_Group], encoded: list[EncodedRequest]) -> int:
        """Padded tokens a batch computes: every prefix once, then every answer once (the answers'
        per-row copies of the prefix cache are bounded separately, chunk by chunk)."""
        prefix_len = max(len(g.prefix_ids) for g in groups)
        rows = [i for g in groups for i in g.members]
        answer_len = max(len(encoded[i].target_ids) for i in rows)
        return len(groups) * prefix_len + len(rows) * answer_len

    def _run_with_backoff(self, batch: list[_Group], encoded, results) -> None:
        torch = self._torch
        try:
            self._run(batch, encoded, results)
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            if len(batch) == 1 and len(batch[0].members) == 1:
                raise
            self.max_batch_tokens = max(256, self.max_batch_tokens // 2)
            logger.warning("out of memory; batch budget lowered to %d tokens", self.max_batch_tokens)
            for smaller in self._batches_of(batch, encoded):
                self._run_with_backoff(smaller, encoded, results)

    def _batches_of(self, batch: list[_Group], encoded) -> list[list[_Group]]:
        if len(batch) > 1:
            middle = len(batch) // 2
            return [batch[:middle], batch[middle:]]
        group = batch[0]
        middle = len(group.members) // 2
        return [[_Group(group.prefix_ids, group.members[:middle])], [_Group(group.prefix_ids, group.members[middle:])]]

    # --- the forward passes -----------------------------------------------------------

    def _run(self, batch: list[_Group], encoded: list[EncodedRequest], results: list) -> None:
        torch = self._torch
        device, pad = self.device, self.tokenizer.pad_token_id or 0
        prefix_lengths = torch.tensor([len(g.prefix_ids) for g in batch], device=device)
        width = int(prefix_lengths.max())
        prefix_ids = torch.full((len(batch), width), pad, device=device)
        prefix_mask = torch.zeros((len(batch), width), dtype=torch.long, device=device)
        for row, group in enumerate(batch):
            prefix_ids[row, : len(group.prefix_ids)] = torch.tensor(group.prefix_ids, device=device)
            prefix_mask[row, : len(group.prefix_ids)] = 1

        rows = [(group_row, index) for group_row, group in enumerate(batch) for index in group.members]
        row_prefix = torch.tensor([group_row for group_row, _ in rows], device=device)
        targets = [encoded[index].target_ids for _, index in rows]

        with torch.inference_mode():
            # No attention mask: the pads are on the right, so under the causal mask no real
            # token sees them, and attention can take its fast causal path.
            prefix_out = self.model.base_model(input_ids=prefix_ids, use_cache=True)
            self.forward_calls += 1
            # Each answer's first token is predicted at its prefix's last real position.
            last_hidden = prefix_out.last_hidden_state[torch.arange(len(batch), device=device), prefix_lengths - 1]
            first_targets = torch.tensor([t[0] for t in targets], device=device)
            first = self._target_logprobs(last_hidden[row_prefix], first_targets)

            totals = first.double()
            # Answers run on the prefix cache in chunks of rows alike in answer length and prefix
            # width, so padding stays small; the per-row copies of the prefix KV cache exist for
            # one chunk at a time.
            widths = [len(batch[group_row].prefix_ids) for group_row, _ in rows]
            for chunk in self._answer_chunks(targets, widths):
                totals = self._answer_pass(
                    prefix_out.past_key_values, chunk, row_prefix, prefix_mask, prefix_lengths, targets, totals
                )

        for (_, index), total, target in zip(rows, totals.tolist(), targets, strict=True):
            results[index] = ScoreResult(
                logprob=total, tokens=len(target), end_token_appended=encoded[index].end_token_appended
            )
        self.scored_tokens += sum(len(t) for t in targets)
        self.computed_tokens += sum(len(g.prefix_ids) for g in batch) + sum(len(t) - 1 for t in targets)

    # A chunk's rows are padded to its longest answer and widest prefix; starting a new chunk
    # when a row is under this fraction of either bounds the padding at about a quarter.
    PADDING_RATIO = 0.8

    def _answer_chunks(self, targets, widths: list[int]) -> list[list[int]]:
        def bucket(row: int) -> int:
            return int(math.log(max(widths[row], 1)) / math.log(1 / self.PADDING_RATIO))

        order = sorted(range(len(targets)), key=lambda row: (-bucket(row), -len(targets[row])))
        chunks, current = [], []
        for row in order:
            if current:
                longest, widest = len(targets[current[0]]), max(widths[r] for r in current)
                full = (len(current) + 1) * (max(widest, widths[row]) + longest) > self.max_batch_tokens
                unlike = bucket(row) != bucket(current[0]) or len(targets[row]) < self.PADDING_RATIO * longest
                if full or unlike:
                    chunks.append(current)
                    current = []
            current.append(row)
        return [*chunks, current] if current else chunks

    def _answer_pass(self, cache, chunk, row_prefix, prefix_mask, prefix_lengths, targets, totals):
        """Score tokens 2..n of each answer in `chunk` on top of its prefix's cached keys and values."""
        torch = self._torch
        from transformers import DynamicCache

        device, pad = self.device, self.tokenizer.pad_token_id or 0
        rest = len(targets[chunk[0]]) - 1  # chunks are sorted longest first
        if rest <= 0:
            return totals
        rows = torch.tensor(chunk, device=device)
        source = row_prefix[rows]
        width = int(prefix_lengths[source].max())  # the batch's prefixes are padded wider than this chunk needs
        layers = [
            (layer.keys.index_select(0, source)[:, :, :width], layer.values.index_select(0, source)[:, :, :width])
            for layer in cache.layers
        ]
        row_cache = DynamicCache(ddp_cache_data=layers, config=self.model.config)
        inputs = torch.full((len(chunk), rest), pad, device=device)
        labels = torch.full((len(chunk), rest), -1, device=device)
        for position, row in enumerate(chunk):
            target = targets[row]
            if len(target) > 1:
                inputs[position, : len(target) - 1] = torch.tensor(target[:-1], device=device)
                labels[position, : len(target) - 1] = torch.tensor(target[1:], device=device)
        mask = torch.cat([prefix_mask[source, :width], (labels >= 0).long()], dim=1)
        positions = prefix_lengths[source, None] + torch.arange(rest, device=device)[None, :]
        hidden = self.model.base_model(
            input_ids=inputs, attention_mask=mask, position_ids=positions, past_key_values=row_cache, use_cache=True
        ).last_hidden_state
        self.forward_calls += 1
        scored = labels >= 0
        values = self._target_logprobs(hidden[scored], labels[scored])
        row_of = rows[:, None].expand_as(labels)[scored]
        return totals.index_add(0, row_of, values.double())

    def _target_logprobs(self, hidden, targets):
        """log p(target) at each row of `hidden`, in float32, a chunk of rows at a time."""
        torch = self._torch
        out = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
        for start in range(0, hidden.shape[0], self.logit_chunk_tokens):
            chunk = slice(start, start + self.logit_chunk_tokens)
            # log_softmax then gather: measured faster on CPU than logit(t) − logsumexp(logits).
            out[chunk] = self._log_softmax(hidden[chunk]).gather(1, targets[chunk, None])[:, 0]
        return out

    def _log_softmax(self, hidden):
        return self._torch.log_softmax(self._logits(hidden), dim=-1)

    def _logits(self, hidden):
        logits = self.model.get_output_embeddings()(hidden).float()
        config = self.model.config
        if getattr(config, "final_logit_softcapping", None):  # Gemma 2 and kin
            cap = config.final_logit_softcapping
            logits = (logits / cap).tanh() * cap
        if getattr(self.model, "logit_scale", None) is not None:  # Cohere
            logits = logits * self.model.logit_scale
        return logits
