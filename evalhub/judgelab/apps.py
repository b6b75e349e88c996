from __future__ import annotations

from django.apps import AppConfig


class JudgeLabConfig(AppConfig):
    name = "evalhub.judgelab"
    label = "judgelab"
    verbose_name = "Judge lab: how far to trust each judge"
