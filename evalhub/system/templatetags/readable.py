from __future__ import annotations

from django import template

from evalhub.core.files.tables import readable

register = template.Library()
register.filter("readable", readable)
