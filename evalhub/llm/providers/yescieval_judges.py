"""YESciEval's fine-tuned judges (`yescieval:ask`, `yescieval:bioasq`), run in-process like any local
transformers model.

The `yescieval` package names two judges, LoRA adapters on Llama-3.1-8B-Instruct published by its authors
(`AskAutoJudge`, `BioASQAutoJudge`; the ids below are its defaults). evalhub never downloads weights at
run time: a deployment provides each judge as a folder and names it in a setting,
EVALHUB_YESCIEVAL_ASK_PATH or EVALHUB_YESCIEVAL_BIOASQ_PATH (the environment, read here: `evalhub.llm`
does not import Django). The folder is the adapter merged into its base model (a plain transformers
model: peft's `merge_and_unload`, then `save_pretrained`), or the adapter itself with its base model in a
local folder, which needs peft installed. The judge is then asked as the package's own judge asks it: the
rubric's messages (evalhub.core.yescieval.rubrics) through the model's chat template.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evalhub.llm.providers.transformers_chat import TransformersChat
from evalhub.llm.types import UnknownProvider

# The package's fine-tuned judges: its `from_pretrained` defaults (yescieval/judge/judges.py, 0.10.0).
JUDGES = {
    "ask": ("EVALHUB_YESCIEVAL_ASK_PATH", "SciKnowOrg/YESciEval-ASK-Llama-3.1-8B"),
    "bioasq": ("EVALHUB_YESCIEVAL_BIOASQ_PATH", "SciKnowOrg/YESciEval-BioASQ-Llama-3.1-8B"),
}
ADAPTER_CONFIG = "adapter_config.json"


def weights_folder(judge: str) -> Path:
    """The folder a deployment provides for one of the package's judges; UnknownProvider saying what to
    set (and where the weights come from) when it is not there."""
    if judge not in JUDGES:
        raise UnknownProvider(f"yescieval:{judge}: the package's judges are {', '.join(JUDGES)}.")
    variable, published = JUDGES[judge]
    folder = os.environ.get(variable, "")
    if not folder or not Path(folder).is_dir():
        raise UnknownProvider(
            f"yescieval:{judge} needs its weights in a local folder named by {variable} (evalhub downloads "
            f"nothing at run time): {published}, merged into its base model or with the base in a local folder."
        )
    return Path(folder)


def load_judge(folder: Path, device: str | None, dtype: str | None) -> tuple[Any, Any]:
    """(model, tokenizer): a merged judge as any transformers model; an adapter onto its local base, with peft."""
    from evalhub.llm.local_models import load_causal_lm, pick_device, pick_dtype

    if not (folder / ADAPTER_CONFIG).is_file():
        return load_causal_lm(str(folder), device, dtype)
    base = json.loads((folder / ADAPTER_CONFIG).read_text()).get("base_model_name_or_path", "")
    if not base or not Path(base).is_dir():
        raise UnknownProvider(
            f"{folder} is a LoRA adapter whose base model ({base or 'unnamed'}) is not a local folder: put the base "
            "model in a folder and name it in the adapter's base_model_name_or_path, or merge the adapter."
        )
    try:
        from peft import PeftModel
    except ImportError:
        raise UnknownProvider(
            f"{folder} is a LoRA adapter: install peft to load it, or merge it into its base model "
            "(peft's merge_and_unload, then save_pretrained) and name the merged folder instead."
        ) from None
    resolved = pick_device(device)
    model, tokenizer = load_causal_lm(base, resolved, dtype)
    adapted = PeftModel.from_pretrained(model, str(folder), torch_dtype=pick_dtype(resolved, dtype))
    return adapted.eval(), tokenizer


class YesciEvalJudge(TransformersChat):
    """A fine-tuned YESciEval judge by the package's name for it (`yescieval:ask`); its model, for the
    cache and the reports, is the folder of weights it was given."""

    provider = "yescieval"

    def __init__(self, model: str, *, device: str | None = None, dtype: str | None = None, **options: Any) -> None:
        folder = weights_folder(model)
        loaded, tokenizer = load_judge(folder, device, dtype)
        super().__init__(str(folder), model_object=loaded, tokenizer=tokenizer, **options)
