"""Chat with an in-process Hugging Face model: the model's own chat template, GPU when present.

The model loads once per worker process (local_models.load_causal_lm) and is shared; one
generation runs at a time per client (a lock), in a thread so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from evalhub.llm.base import ChatClient, Sampling
from evalhub.llm.types import Completion, Message


class TransformersChat(ChatClient):
    provider = "transformers"
    gives_logprobs = True  # the model's own next-token distribution, read as it generates

    def __init__(
        self,
        model: str,
        *,
        model_object: Any = None,
        tokenizer: Any = None,
        device: str | None = None,
        dtype: str | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("max_concurrency", 1)
        super().__init__(model, **options)
        if model_object is None or tokenizer is None:
            from evalhub.llm.local_models import load_causal_lm

            model_object, tokenizer = load_causal_lm(model, device, dtype)
        self.model_object, self.tokenizer = model_object, tokenizer
        self._lock = threading.Lock()

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        return await asyncio.to_thread(self._generate, messages, sampling, None)

    async def _stream_once(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], None]
    ) -> Completion:
        loop = asyncio.get_running_loop()
        return await asyncio.to_thread(
            self._generate, messages, sampling, lambda text: loop.call_soon_threadsafe(emit, text)
        )

    def _generate(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], object] | None
    ) -> Completion:
        import torch
        from transformers import TextIteratorStreamer

        started = time.perf_counter()
        device = next(self.model_object.parameters()).device
        prompt = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
        )
        input_ids = prompt["input_ids"].to(device)
        arguments = {
            "input_ids": input_ids,
            "attention_mask": prompt["attention_mask"].to(device),
            "max_new_tokens": sampling.max_tokens,
            "do_sample": sampling.temperature > 0,
            "pad_token_id": self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
        }
        if sampling.temperature > 0:
            arguments["temperature"] = sampling.temperature
        if sampling.top_logprobs and emit is None:
            # The raw logits of each step (not the sampler's processed scores): the model's distribution.
            arguments.update(output_logits=True, return_dict_in_generate=True)
        streamer = None
        if emit is not None:
            streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
            arguments["streamer"] = streamer
        with self._lock:
            if sampling.seed is not None:
                torch.manual_seed(sampling.seed)  # generate() samples from the global generator
            if streamer is None or emit is None:
                with torch.inference_mode():
                    output = self.model_object.generate(**arguments)
            else:
                result: dict[str, Any] = {}
                worker = threading.Thread(target=lambda: result.update(output=self._generate_quietly(arguments)))
                worker.start()
                for text in streamer:
                    emit(text)
                worker.join()
                if "error" in result.get("output", {}):
                    raise result["output"]["error"]
                output = result["output"]["tokens"]
        token_logprobs = None
        if sampling.top_logprobs and emit is None:
            token_logprobs = self._token_logprobs(output.sequences[0, input_ids.shape[1] :], output.logits, sampling)
            output = output.sequences
        new_tokens = output[0, input_ids.shape[1] :]
        finished = bool(len(new_tokens)) and int(new_tokens[-1]) == self.tokenizer.eos_token_id
        return Completion(
            text=self.tokenizer.decode(new_tokens, skip_special_tokens=True),
            provider=self.provider,
            model=self.model,
            input_tokens=int(input_ids.shape[1]),
            output_tokens=int(len(new_tokens)),
            latency_s=time.perf_counter() - started,
            finish_reason="stop" if finished else "length",
            cost_usd=0.0,
            token_logprobs=token_logprobs,
        )

    def _token_logprobs(self, tokens: Any, logits: Any, sampling: Sampling) -> list[list[Any]]:
        """Each generated token, its log-probability and the top alternatives, as OpenAI's API gives them."""
        import torch

        out: list[list[Any]] = []
        for token, step in zip(tokens.tolist(), logits, strict=False):
            logprobs = torch.log_softmax(step[0].float(), dim=-1)
            values, ids = torch.topk(logprobs, sampling.top_logprobs)
            top = [[self.tokenizer.decode([i]), float(v)] for v, i in zip(values.tolist(), ids.tolist(), strict=True)]
            out.append([self.tokenizer.decode([token]), float(logprobs[token]), top])
        return out

    def _generate_quietly(self, arguments: dict[str, Any]) -> dict[str, Any]:
        import torch

        try:
            with torch.inference_mode():
                return {"tokens": self.model_object.generate(**arguments)}
        except Exception as error:  # re-raised in the calling thread
            return {"error": error}
