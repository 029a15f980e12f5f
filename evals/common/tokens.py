"""Token counting for agents and graders that do not get usage from their provider.

OpenAI's o200k_base encoding, the one tiktoken uses for current models, read from the
`bpe-openai` wheel, which ships the vocabulary: nothing is downloaded at run time.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _encoding() -> Any:
    # bpe-openai reads its vocabulary with a deprecated importlib.resources call; the
    # warning would otherwise reach the tests of every project that counts tokens.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "open_binary is deprecated", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Tokens of `text` in the o200k_base encoding."""
    return len(_encoding().encode(text))
