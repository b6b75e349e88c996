from __future__ import annotations

from evalhub.system.model_access import queue_for


def test_work_that_calls_an_in_process_model_goes_to_the_gpu_workers_and_api_work_to_default():
    assert queue_for(["openai:gpt-4o-mini", "anthropic:claude-3-5-sonnet-latest"]) == "default"
    assert queue_for(["openai:gpt-4o-mini", "transformers:/models/llama"]) == "gpu"
    assert queue_for(["openai:gpt-4o-mini"], local=True) == "gpu"  # e.g. next-token probabilities
    assert queue_for(["", "heuristic"]) == "default"
