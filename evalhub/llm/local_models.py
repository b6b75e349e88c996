"""Loading a local causal LM once per worker process and reusing it."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

_load_lock = threading.Lock()


def pick_device(device: str | None = None) -> str:
    import torch

    if device:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(device: str, dtype: str | None = None) -> Any:
    """bf16 on GPU, fp32 on CPU unless told otherwise."""
    import torch

    if dtype:
        return {
            "float32": torch.float32,
            "fp32": torch.float32,
            "bfloat16": torch.bfloat16,
            "bf16": torch.bfloat16,
            "float16": torch.float16,
            "fp16": torch.float16,
        }[dtype]
    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def quiet_progress_bars() -> None:
    """No progress bars from transformers or the hub library: a worker's (or quickstart's) output is a
    log, and a bar per load or save came through it in carriage returns (the job page shows progress)."""
    from huggingface_hub.utils import disable_progress_bars
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    disable_progress_bars()


def load_causal_lm(path: str, device: str | None = None, dtype: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) for a local path or hub id, loaded once per (path, device, dtype)."""
    resolved = pick_device(device)
    with _load_lock:
        return _load(path, resolved, dtype or "")


@lru_cache(maxsize=4)
def _load(path: str, device: str, dtype: str) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    quiet_progress_bars()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model: Any = AutoModelForCausalLM.from_pretrained(path, dtype=pick_dtype(device, dtype or None))
    return model.to(device).eval(), tokenizer
