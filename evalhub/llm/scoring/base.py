"""What a log-probability scorer takes and returns (defined in evalhub.core, which builds them)."""

from __future__ import annotations

from evalhub.core.gem.logprob_requests import ScoreRequest, ScoreResult, TokenDistribution

__all__ = ["ScoreRequest", "ScoreResult", "TokenDistribution"]
