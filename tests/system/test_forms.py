"""Form helpers shared by every app (issue 22: preselect the only choice)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.scoring.forms import GemRunForm


@pytest.fixture
def one_of_each(db):
    benchmark = Benchmark.objects.create(slug="reviews", name="Reviews")
    judge = LanguageModel.objects.create(slug="evaluator", display_name="Evaluator")
    return benchmark, judge


def test_a_required_choice_with_a_single_option_starts_chosen(one_of_each):
    benchmark, _ = one_of_each
    form = GemRunForm()
    assert form["benchmark"].value() == benchmark.pk
    assert form.fields["benchmark"].initial == benchmark.pk


def test_a_choice_with_several_options_starts_empty(one_of_each):
    Benchmark.objects.create(slug="stories", name="Stories")
    assert GemRunForm()["benchmark"].value() is None


def test_a_submitted_form_keeps_what_was_submitted_even_with_one_option(one_of_each):
    form = GemRunForm(data={})
    assert form["benchmark"].value() is None
    assert not form.is_valid()


def test_the_gem_page_renders_the_only_benchmark_selected(client, login, admin_user, one_of_each):
    benchmark, _ = one_of_each
    login(admin_user)
    page = client.get(reverse("gem_create")).content.decode()
    assert f'<option value="{benchmark.pk}" selected>' in page
