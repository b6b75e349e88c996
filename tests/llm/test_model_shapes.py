"""The real-size shapes the GPU benchmarks build with random weights have the published sizes
(built on the meta device: no memory, no weights)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    ("shape", "parameters"),
    [
        ("llama-3.2-1b", 1_235_814_400),  # Llama 3.2 1B: 1.24B with tied embeddings
        ("llama-3.1-8b", 8_030_261_248),  # Llama 3.1 8B: 8.03B
    ],
)
def test_a_named_shape_has_the_released_models_parameter_count(shape, parameters):
    from evalhub.llm.tiny import build_causal_lm, parameter_count

    model = build_causal_lm(16000, shape, device="meta")  # its vocabulary is the released model's
    assert parameter_count(model) == parameters
