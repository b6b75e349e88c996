from __future__ import annotations

from django import template

from evalhub.judgelab.report import judge_key

register = template.Library()
register.filter("judge_key", judge_key)
