"""Side-by-side differences between two texts (two outputs, two trajectories), by word.

`difflib.SequenceMatcher` aligns the two texts as sequences of words and whitespace; each
side is then rendered as escaped HTML with what only it holds highlighted, so nothing an
agent wrote is ever read as markup.
"""

from __future__ import annotations

import difflib
import html
import re

Piece = tuple[str, str]
"""A run of text and how it compares: `same`, `removed` (left only) or `added` (right only)."""

_TOKENS = re.compile(r"\s+|[^\s]+")
_STYLE = {
    "same": "",
    "removed": "background:#f8d4d1;text-decoration:line-through;",
    "added": "background:#cdeed8;",
}


def tokens(text: str) -> list[str]:
    """A text cut into words and the whitespace between them (joining gives it back)."""
    return _TOKENS.findall(text)


def word_diff(left: str, right: str) -> tuple[list[Piece], list[Piece]]:
    """The pieces of each side: joining a side's texts gives that side back unchanged."""
    a, b = tokens(left), tokens(right)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    left_pieces: list[Piece] = []
    right_pieces: list[Piece] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            left_pieces.append(("same", "".join(a[a0:a1])))
            right_pieces.append(("same", "".join(b[b0:b1])))
            continue
        if a1 > a0:
            left_pieces.append(("removed", "".join(a[a0:a1])))
        if b1 > b0:
            right_pieces.append(("added", "".join(b[b0:b1])))
    return left_pieces, right_pieces


def similarity(left: str, right: str) -> float:
    """How alike two texts are by word, from 0 (nothing shared) to 1 (identical)."""
    return difflib.SequenceMatcher(None, tokens(left), tokens(right), autojunk=False).ratio()


def pieces_html(pieces: list[Piece]) -> str:
    """One side of a difference as escaped HTML, changed runs highlighted."""
    return "".join(
        f'<span style="{_STYLE[kind]}">{html.escape(text)}</span>'
        if _STYLE[kind]
        else html.escape(text)
        for kind, text in pieces
    )


def side_by_side_html(left: str, right: str, left_title: str, right_title: str) -> str:
    """Two texts in two columns, what differs highlighted (removed left, added right)."""
    left_pieces, right_pieces = word_diff(left, right)
    cell = (
        "flex:1;min-width:0;border:1px solid #e3e5e8;border-radius:6px;padding:8px;"
        "font-family:monospace;font-size:0.85rem;white-space:pre-wrap;word-break:break-word"
    )
    columns = "".join(
        f'<div style="{cell}"><div style="font-weight:600;margin-bottom:4px;'
        f'font-family:sans-serif">{html.escape(title)}</div>{pieces_html(pieces)}</div>'
        for title, pieces in ((left_title, left_pieces), (right_title, right_pieces))
    )
    return f'<div style="display:flex;gap:12px">{columns}</div>'
