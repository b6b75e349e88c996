"""The fast scorer equals each model's own forward, on tiny random models of many architectures —
including ones that scale or cap their logits after the last layer — or refuses the model."""

from __future__ import annotations

import pytest

from evalhub.llm.scoring.base import ScoreRequest
from evalhub.llm.scoring.reference import score_one_at_a_time
from evalhub.llm.scoring.transformers_scorer import TransformersScorer

SHAPE = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}
# (config class, model class, extra config): logit scaling (Granite, Cohere) and capping (Gemma 2) included.
ARCHITECTURES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "mistral": ("MistralConfig", "MistralForCausalLM", {}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {"pad_token_id": 0}),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {"head_dim": 16, "final_logit_softcapping": 5.0}),
    "cohere": ("CohereConfig", "CohereForCausalLM", {"logit_scale": 0.25}),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM", {}),
    "granite": ("GraniteConfig", "GraniteForCausalLM", {"logits_scaling": 4.0}),
}
REQUESTS = [
    ScoreRequest.of(
        [{"role": "system", "content": "Review the paper."}, {"role": "user", "content": "It is sound."}],
        "The reviewer appreciates the clear writing.",
    ),
    ScoreRequest.of([{"role": "user", "content": "Not Available"}], "The reviewer questions the baselines."),
    ScoreRequest.of([{"role": "user", "content": "It is sound."}], ""),
]


def tiny(architecture: str, vocab_size: int):
    import torch
    import transformers

    config_name, model_name, extra = ARCHITECTURES[architecture]
    config = getattr(transformers, config_name)(vocab_size=vocab_size, tie_word_embeddings=False, **SHAPE, **extra)
    torch.manual_seed(3)
    return getattr(transformers, model_name)(config).eval()


@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
def test_the_scorer_equals_the_models_own_forward(architecture, tiny_tokenizer):
    model = tiny(architecture, len(tiny_tokenizer))
    scorer = TransformersScorer(model=model, tokenizer=tiny_tokenizer, device="cpu", max_batch_tokens=64)
    fast = scorer.score(REQUESTS)
    plain = score_one_at_a_time(model, tiny_tokenizer, REQUESTS)
    assert fast == pytest.approx(plain, abs=1e-4)
    messages = [{"role": "user", "content": "Rate it."}]
    distribution = scorer.next_token_distribution(messages)
    assert distribution.mass > 0


def test_a_model_whose_forward_changes_its_logits_in_an_unknown_way_is_refused_naming_it(tiny_tokenizer):
    from transformers import LlamaForCausalLM

    class ReweightedForCausalLM(LlamaForCausalLM):
        def forward(self, *args, **kwargs):  # a future architecture: something after the head
            out = super().forward(*args, **kwargs)
            out.logits = out.logits * 3.0 + 1.0
            return out

    base = tiny("llama", len(tiny_tokenizer))
    model = ReweightedForCausalLM(base.config).eval()
    model.load_state_dict(base.state_dict())
    with pytest.raises(ValueError, match="ReweightedForCausalLM"):
        TransformersScorer(model=model, tokenizer=tiny_tokenizer, device="cpu")
