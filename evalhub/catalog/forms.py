from __future__ import annotations

from typing import Any

from django import forms

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportSummary, check_import_size
from evalhub.catalog.models import TaskType
from evalhub.system.forms import OnlyChoicePreselectedForm


class ImportForm(OnlyChoicePreselectedForm):
    file = forms.FileField(
        help_text="JSONL, CSV, Parquet or a JSON array in the documented schema, each also gzipped (.gz)."
    )
    benchmark = forms.SlugField(
        max_length=100,
        help_text="Slug of an existing benchmark, or of a new one to create.",
        widget=forms.TextInput(attrs={"list": "benchmarks", "autocomplete": "off"}),
    )
    name = forms.CharField(max_length=200, required=False, help_text="Name of a new benchmark.")
    task_type = forms.ChoiceField(choices=TaskType.choices, initial=TaskType.OTHER)
    create_models = forms.BooleanField(
        required=False, help_text="Create models named in the file that evalhub does not know yet."
    )

    def import_file(self, user: Any) -> ImportSummary:
        """Import the valid form's file as `user` (the page's and the API's one path); ImportRejected."""
        upload, chosen = self.cleaned_data["file"], self.cleaned_data
        check_import_size(upload.size)  # before reading a byte of it
        return do_import_benchmark(
            filename=upload.name,
            data=upload.file,  # read as a stream (Django keeps a large upload in a temporary file)
            benchmark_slug=chosen["benchmark"],
            benchmark_name=chosen["name"],
            task_type=chosen["task_type"],
            allow_new_models=chosen["create_models"],
            user=user,
        )


class SplitForm(forms.Form):
    held_out_percent = forms.IntegerField(
        min_value=5, max_value=90, initial=20, help_text="The share of each category's prompts held out."
    )
    seed = forms.IntegerField(min_value=-(2**31), max_value=2**31 - 1, initial=0)
