"""Models and tokenizers built in code, for tests and benchmarks: nothing is downloaded.

`build_tokenizer` trains a small byte-level BPE with a chat template; `build_causal_lm`
makes a randomly initialised Llama-architecture model of a named size, including the real
Llama-3.1-8B shape for GPU benchmarks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalhub.llm.local_models import quiet_progress_bars

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]

# Llama-style shapes. "10m" has about 10M parameters with an 8k vocabulary.
ARCHITECTURES: dict[str, dict[str, int | float]] = {
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
    },
    "10m": {
        "hidden_size": 256,
        "intermediate_size": 768,
        "num_hidden_layers": 8,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
    },
    # Llama 3.2 1B's shape (its embeddings are tied to the LM head, as the released model's are).
    "llama-3.2-1b": {
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "rope_theta": 500000.0,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
    },
    "llama-3.1-8b": {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "rope_theta": 500000.0,
        "max_position_embeddings": 131072,
    },
}


def build_tokenizer(
    corpus: Iterable[str], vocab_size: int = 2000, chat_template: str = CHAT_TEMPLATE, split_words: bool = True
) -> Any:
    """A fast byte-level BPE tokenizer trained on `corpus` (any text stays encodable).

    `split_words=False` lets merges cross spaces, so text repeated across the corpus (a fixed
    system prompt) becomes a few tokens: short sequences for models trained inside tests.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=split_words)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    fast: Any = PreTrainedTokenizerFast  # the transformers stubs lag its keyword arguments
    return fast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=SPECIAL_TOKENS[3:],
        chat_template=chat_template,
    )


def build_causal_lm(
    vocab_size: int, size: str = "tiny", *, seed: int = 0, dtype: Any = None, device: str = "cpu"
) -> Any:
    """A randomly initialised Llama-architecture model of a named size, in eval mode."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    shape = {
        "vocab_size": vocab_size,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        **ARCHITECTURES[size],
    }
    config_class: Any = LlamaConfig  # its stub lacks attn_implementation, which it takes
    config = config_class(**shape, attn_implementation="sdpa")
    torch.manual_seed(seed)
    with torch.device(device):
        model: Any = LlamaForCausalLM(config)
    if dtype is not None:
        model = model.to(dtype)
    return model.eval()


def parameter_count(model: Any) -> int:
    return int(sum(parameter.numel() for parameter in model.parameters()))


TINY_MODEL_MARKER = "EVALHUB_TINY_MODEL.txt"
TINY_MODEL_NOTE = (
    "A tiny randomly initialised Llama-architecture model made by `python manage.py make_tiny_model`. "
    "Its weights are random: scores from it show evalhub's workflow, not a real evaluation."
)


def save_tiny_model(
    path: str | Path, corpus: Iterable[str], *, size: str = "tiny", seed: int = 0, vocab_size: int = 2000
) -> int:
    """Write a tokenizer (with a chat template) and a random model of `size` to `path`, loadable by
    `transformers:PATH`; returns its parameter count. A marker file says what it is."""
    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(corpus, vocab_size=vocab_size)
    model = build_causal_lm(len(tokenizer), size, seed=seed)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    quiet_progress_bars()  # quickstart makes one: its "Writing model shards" bar came through its output
    tokenizer.save_pretrained(target)
    model.save_pretrained(target)
    (target / TINY_MODEL_MARKER).write_text(TINY_MODEL_NOTE + "\n", encoding="utf-8")
    return parameter_count(model)


def is_tiny_model(spec: str) -> bool:
    """Whether a `transformers:PATH` spec names a model made by save_tiny_model."""
    provider, _, path = str(spec).partition(":")
    return provider == "transformers" and bool(path) and (Path(path) / TINY_MODEL_MARKER).is_file()
