"""Token counting for agents and graders that do not get usage from their provider.

OpenAI's o200k_base encoding, the one tiktoken uses for current models, read from the
`bpe-openai` wheel, which ships the vocabulary: nothing is downloaded at run time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Tokens of `text` in the o200k_base encoding."""
    return len(_encoding().encode(text))
