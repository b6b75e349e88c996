"""Where a forced assistant answer starts and ends in a chat-templated token sequence.

The scored tokens are the answer's tokens plus the end-of-turn token that the template puts
after it (GEM, Section 3: log P(y | prompt) over y and the end of turn).

Token boundaries: the whole conversation is rendered and tokenized once, and the split is
made on that joint tokenization using character offsets. A token that straddles the
boundary (prefix text and answer text merged into one token, as SentencePiece vocabularies
can do) belongs to the answer; the prefix is every token before it. So the scored tokens
are always exactly tokens(prefix + answer) after the split, and requests whose prefixes
render the same share the same prefix ids (and its KV cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalhub.llm.types import Message


class TemplateError(ValueError):
    """The chat template cannot be used for forced-answer scoring."""


@dataclass(frozen=True)
class EncodedRequest:
    prefix_ids: tuple[int, ...]
    target_ids: tuple[int, ...]  # the answer's tokens, then the end-of-turn token
    end_token_appended: bool = False  # the template put nothing after the answer; EOS was used

    @property
    def length(self) -> int:
        return len(self.prefix_ids) + len(self.target_ids)


def render(tokenizer: Any, prefix: list[Message], answer: str) -> tuple[str, int, int]:
    """The full text, and the character span of the answer inside it."""
    if not getattr(tokenizer, "chat_template", None):
        raise TemplateError("the tokenizer has no chat template; GEM scores under the model's own template.")
    prefix_text = tokenizer.apply_chat_template(prefix, tokenize=False, add_generation_prompt=True)
    full_text = tokenizer.apply_chat_template(
        [*prefix, {"role": "assistant", "content": answer}], tokenize=False, add_generation_prompt=False
    )
    if not full_text.startswith(prefix_text):
        raise TemplateError("the template renders the conversation differently once the answer is added.")
    # Templates may trim the answer (Llama 3 does); find what they kept.
    kept = answer.strip() if answer.strip() and answer not in full_text[len(prefix_text) :] else answer
    start = full_text.find(kept, len(prefix_text))
    if start < 0:
        raise TemplateError("the answer does not appear verbatim in the rendered conversation.")
    return full_text, len(prefix_text), start + len(kept)


def encode_request(tokenizer: Any, prefix: list[Message], answer: str) -> EncodedRequest:
    full_text, answer_start, answer_end = render(tokenizer, prefix, answer)
    encoding = tokenizer(full_text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = encoding["input_ids"], encoding["offset_mapping"]
    split = next((i for i, (_, end) in enumerate(offsets) if end > answer_start), len(ids))
    # The end-of-turn token: the first token that starts at or after the answer's end.
    after = next((i for i in range(split, len(ids)) if offsets[i][0] >= answer_end), None)
    if after is None:
        if tokenizer.eos_token_id is None:
            raise TemplateError("the template puts nothing after the answer and the tokenizer has no EOS token.")
        return EncodedRequest(tuple(ids[:split]), (*ids[split:], tokenizer.eos_token_id), end_token_appended=True)
    return EncodedRequest(tuple(ids[:split]), tuple(ids[split : after + 1]))
