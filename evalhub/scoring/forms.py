from __future__ import annotations

from django import forms

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.core.gem_validation import STRATEGIES
from evalhub.scoring.actions import check_gem_config
from evalhub.scoring.models import GemVariant

SPEC_HELP = (
    "A provider spec: openai:gpt-4o, anthropic:…, openai-compatible:http://host:8000/v1|model, transformers:/path."
)


class GemRunForm(forms.Form):
    benchmark = forms.ModelChoiceField(Benchmark.objects.all())
    candidates = forms.ModelMultipleChoiceField(
        LanguageModel.objects.all(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The models whose responses are scored.",
    )
    references = forms.ModelMultipleChoiceField(
        LanguageModel.objects.all(),
        widget=forms.CheckboxSelectMultiple,
        help_text="Peer references (typically the human reviewers); they are also scored against each other, "
        "as the human baseline.",
    )
    variants = forms.MultipleChoiceField(
        choices=GemVariant.choices, initial=[GemVariant.GEM], widget=forms.CheckboxSelectMultiple
    )
    evaluation_lm = forms.CharField(
        max_length=500,
        label="Evaluation LM",
        help_text="Whose log-probabilities are used: transformers:/path/to/model (local weights) or "
        "openai-compatible:http://vllm:8000/v1|model (a vLLM server with prompt log-probabilities).",
    )
    dtype = forms.ChoiceField(
        choices=[("auto", "auto (bf16 on GPU, fp32 on CPU)"), ("bfloat16", "bfloat16"), ("float32", "float32")]
    )
    preprocessing_lm = forms.CharField(
        max_length=500,
        required=False,
        label="Preprocessing LM",
        help_text="Chat provider for the C.1 rewrite and the C.4 summary. " + SPEC_HELP,
    )
    use_imported_preprocessing = forms.BooleanField(
        required=False, initial=True, help_text="Use a response's imported metadata 'preprocessed' text when present."
    )
    validation_strategies = forms.MultipleChoiceField(
        choices=[(name, f"{s.label} ({s.kind}, GEM {s.section})") for name, s in STRATEGIES.items()],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Algorithm 1: each candidate response is also scored after this change.",
    )
    validation_lm = forms.CharField(
        max_length=500, required=False, label="Validation LM", help_text="For the LLM-made strategies. " + SPEC_HELP
    )
    seed = forms.IntegerField(initial=0)
    bootstrap = forms.BooleanField(required=False, help_text="Percentile bootstrap intervals instead of ±1.645·SE.")

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        for error in check_gem_config(
            candidates=list(data["candidates"]),
            references=list(data["references"]),
            variants=data["variants"],
            evaluation_lm=data["evaluation_lm"].strip(),
            preprocessing_lm=data["preprocessing_lm"].strip(),
            validation_strategies=data["validation_strategies"],
            validation_lm=data["validation_lm"].strip(),
        ):
            self.add_error(None, error)
        return data

    def run_fields(self) -> dict:
        data = self.cleaned_data
        return {
            "benchmark": data["benchmark"],
            "candidates": list(data["candidates"]),
            "references": list(data["references"]),
            "variants": data["variants"],
            "evaluation_lm": data["evaluation_lm"].strip(),
            "dtype": data["dtype"],
            "preprocessing_lm": data["preprocessing_lm"].strip(),
            "use_imported_preprocessing": data["use_imported_preprocessing"],
            "validation_strategies": data["validation_strategies"],
            "validation_lm": data["validation_lm"].strip(),
            "seed": data["seed"],
            "bootstrap": data["bootstrap"],
        }
