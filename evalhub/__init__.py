"""evalhub: evaluate LLMs and the LLMs that judge them.

Kept empty on purpose: `evalhub.core` and `evalhub.llm` must import without Django, so
the Celery app is loaded by `evalhub.system.apps.SystemConfig.ready`, not here.
"""
