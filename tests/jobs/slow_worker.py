"""`celery worker`, with the in-process scorer made slow (SLOW_SCORER_DELAY seconds per call), so a
killed-worker test can kill it mid-chunk: a tiny model scores a chunk faster than a kill lands."""

from __future__ import annotations

import os
import sys
import time

from evalhub.llm.scoring import transformers_scorer

_real = transformers_scorer.TransformersScorer.score_detailed


def _slow(self, requests):
    time.sleep(float(os.environ.get("SLOW_SCORER_DELAY", "0")))
    return _real(self, requests)


transformers_scorer.TransformersScorer.score_detailed = _slow

if __name__ == "__main__":
    from celery.__main__ import main

    sys.exit(main())
