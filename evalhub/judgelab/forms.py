from __future__ import annotations

from django import forms

from evalhub.catalog.models import TaskType
from evalhub.core.files.judgments import AUTO, LAYOUTS, MODELS, PEOPLE
from evalhub.system.forms import OnlyChoicePreselectedForm


class JudgmentImportForm(OnlyChoicePreselectedForm):
    file = forms.FileField(
        help_text="JSONL, CSV, Parquet or JSON, each also gzipped (.gz): generic, MT-Bench / LMArena battles or "
        "AlpacaEval records; or a study's own files with its study.json, zipped (.zip)."
    )
    layout = forms.ChoiceField(
        choices=[("auto", "Detect from the columns"), *[(layout, layout) for layout in LAYOUTS]], initial="auto"
    )
    benchmark = forms.SlugField(
        max_length=100, help_text="Slug of the benchmark the prompts belong to (created when missing)."
    )
    create_models = forms.BooleanField(
        required=False, help_text="Create candidate models named in the file that evalhub does not know yet."
    )
    judges_are = forms.ChoiceField(
        label="The file's judges are",
        choices=[
            (AUTO, "Told by their names (expert_, author_, human, arena_user_: people; others: models)"),
            (PEOPLE, "People"),
            (MODELS, "Models"),
        ],
        initial=AUTO,
        required=False,  # a post without it (a script's, an older page's) keeps the names' rule
        help_text="For judges the file does not classify itself (a generic file's judge_kind column wins).",
    )


class ScoreImportForm(OnlyChoicePreselectedForm):
    file = forms.FileField(
        help_text="A score file (JSONL, CSV, Parquet or a JSON array, each also gzipped: .gz), or Inspect AI logs: "
        "a .eval, a log .json, or a .zip of a log folder (an eval set's)."
    )
    benchmark = forms.SlugField(
        max_length=100,
        initial="imported-scores",
        help_text="Slug of the benchmark the prompts belong to (created when missing).",
    )
    task_type = forms.ChoiceField(choices=TaskType.choices, initial=TaskType.OTHER)
    create_models = forms.BooleanField(
        required=False, help_text="Create the models that wrote the responses if evalhub does not know them yet."
    )
