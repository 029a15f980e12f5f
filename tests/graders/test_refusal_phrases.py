"""The refusal detector's single phrase pattern finds what a search for each phrase finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.graders import refusal


def each_phrase_search(text: str) -> bool:
    """The detector written plainly: every phrase searched for on its own, as whole words."""
    lowered = refusal._normalize_apostrophes(text.strip().lower())
    if lowered.startswith(refusal._PREFIX_KEYS):
        return True
    return any(
        re.search(rf"\b{re.escape(p.lower())}\b", lowered, re.ASCII) for p in refusal._PHRASES
    )


_PIECES = st.sampled_from(
    [*refusal._PHRASES, *(p[:-1] for p in refusal._PHRASES[:20]), "x", " ", ".", "é", "\u2019"]
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=5))
def test_one_pattern_agrees_with_a_search_per_phrase(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert refusal.is_basic_refusal(text) == each_phrase_search(text)


def test_every_phrase_is_found_inside_a_sentence_and_not_inside_a_word() -> None:
    for phrase in refusal._PHRASES:
        assert refusal.is_basic_refusal(f"Well. {phrase} today.")
        assert each_phrase_search(f"Well. {phrase}x today.") == refusal.is_basic_refusal(
            f"Well. {phrase}x today."
        )
