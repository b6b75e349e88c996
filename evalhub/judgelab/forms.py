from __future__ import annotations

from django import forms

from evalhub.core.files.judgments import LAYOUTS
from evalhub.system.forms import OnlyChoicePreselectedForm


class JudgmentImportForm(OnlyChoicePreselectedForm):
    file = forms.FileField(help_text="JSONL, CSV or Parquet: generic, MT-Bench or AlpacaEval records.")
    layout = forms.ChoiceField(
        choices=[("auto", "Detect from the columns"), *[(layout, layout) for layout in LAYOUTS]], initial="auto"
    )
    benchmark = forms.SlugField(
        max_length=100, help_text="Slug of the benchmark the prompts belong to (created when missing)."
    )
    create_models = forms.BooleanField(
        required=False, help_text="Create candidate models named in the file that evalhub does not know yet."
    )
