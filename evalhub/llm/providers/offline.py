"""What the offline stand-ins (the heuristic judge, the arithmetic candidate) share: their calls
are free and their tokens are counted as words, so runs on them show usage like any other run."""

from __future__ import annotations

from evalhub.core.text.features import words
from evalhub.llm.base import ChatClient
from evalhub.llm.types import Completion


class OfflineChatClient(ChatClient):
    def offline_completion(self, prompt: str, text: str) -> Completion:
        return Completion(
            text=text,
            provider=self.provider,
            model=self.model,
            input_tokens=len(words(prompt)),
            output_tokens=len(words(text)),
            cost_usd=0.0,
        )
