"""A generic judgment file may name models and judges as the study did (`gpt-3.5-turbo`, `Llama 3 (8B)`): the
names are made slugs and kept as display names, as the mt-bench and alpaca-eval layouts always did."""

from __future__ import annotations

import pytest

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment, LanguageModel

pytestmark = pytest.mark.django_db

HEADER = "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"


def test_a_studys_own_names_become_slugs_and_stay_as_display_names():
    data = HEADER + (
        "q1,Is 221 prime?,gpt-3.5-turbo,Llama 3 (8B),No: 13 x 17.,Yes.,Annotator 1,a\r\n"
        "q1,,gpt-3.5-turbo,Llama 3 (8B),No: 13 x 17.,Yes.,GPT-4 judge,a\r\n"
        "q2,Name a prime above 100.,gpt-3.5-turbo,Llama 3 (8B),101,100,GPT-4 judge,a\r\n"
    )
    do_import_judgments(filename="l.csv", data=data.encode(), benchmark_slug="study", allow_new_models=True)
    names = dict(LanguageModel.objects.values_list("slug", "display_name"))
    assert names == {
        "gpt-3-5-turbo": "gpt-3.5-turbo",
        "Llama-3-8B": "Llama 3 (8B)",
        "Annotator-1": "Annotator 1",
        "GPT-4-judge": "GPT-4 judge",
    }
    assert Judgment.objects.count() == 3


def test_two_names_of_a_generic_file_that_make_one_slug_are_refused_with_their_line():
    data = HEADER + "q1,Q?,gpt-3.5,Llama,A,B,judge-x,a\r\nq2,Q2?,gpt 3.5,Llama,A2,B2,judge-x,a\r\n"
    with pytest.raises(ImportRejected) as refused:
        do_import_judgments(filename="l.csv", data=data.encode(), benchmark_slug="study", allow_new_models=True)
    assert any("would both become 'gpt-3-5'" in error.message for error in refused.value.errors)
    assert not Judgment.objects.exists()
