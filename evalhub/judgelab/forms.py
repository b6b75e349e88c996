from __future__ import annotations

from typing import Any

from django import forms

from evalhub.catalog.actions.importing import check_import_size
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.scores import check_uploaded_scores, do_import_scores
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

    def import_file(self, user: Any) -> Any:
        """Import the valid form's file as `user` (the page's and the API's one path); ImportRejected."""
        upload, chosen = self.cleaned_data["file"], self.cleaned_data
        check_import_size(upload.size)  # before reading a byte of it
        return do_import_judgments(
            filename=upload.name,
            data=upload.file,  # read as a stream (Django keeps a large upload in a temporary file)
            benchmark_slug=chosen["benchmark"],
            allow_new_models=chosen["create_models"],
            user=user,
            layout=chosen["layout"],
            judges_are=chosen["judges_are"] or AUTO,
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

    def import_file(self, user: Any) -> Any:
        """Import the valid form's scores or Inspect logs as `user` (the page's and the API's one path);
        ImportRejected, or InspectMissing where inspect-ai is not installed."""
        upload, chosen = self.cleaned_data["file"], self.cleaned_data
        check_import_size(upload.size)  # before reading a byte of it
        # Read as a stream (Django keeps a large upload in a temporary file), a row at a time.
        parsed = check_uploaded_scores(
            upload.name, upload.file, allow_new_models=chosen["create_models"], benchmark_slug=chosen["benchmark"]
        )
        return do_import_scores(
            parsed=parsed,
            filename=upload.name,
            data=upload.file,
            benchmark_slug=chosen["benchmark"],
            task_type=chosen["task_type"],
            user=user,
        )
