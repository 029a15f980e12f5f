"""JavaScript regular expressions that Python's `re` matches exactly as JavaScript does.

A `regex` assertion means `new RegExp(pattern).test(output)`, which the JavaScript sandbox
answers. Calling it costs a crossing into QuickJS for every run; most suites' patterns
(`^item \\d+$`, `[A-Z]{3}-\\d{4}`, `error|failed`) use only syntax whose meaning is the same
in both languages once a few escapes are spelled out, so they are matched here instead.

`translate` accepts a pattern only when every token is in that subset, and rewrites the
tokens whose meaning differs: `$` is `\\Z` (Python's `$` also matches before a final
newline), `\\B` is spelled out with lookaround, `.` excludes JavaScript's four line
terminators, `\\d`, `\\w` and `\\s` are the ASCII and Unicode sets JavaScript defines,
`\\b` is ASCII. Without backreferences or
lookaround, whether a pattern matches is the same in two backtracking engines; anything
else (flags, lookaround, backreferences, `\\u` escapes, quantified groups, Annex B
leniencies such as a lone `{`) is left to JavaScript, which also reports invalid patterns.

A quantifier applies only to a single character or class here, so the work of a search is
at most (n+1)^(q+1) x b x (m+1) steps for a text of n characters, q quantifiers, b
combinations of alternatives and a pattern of m characters; `search` answers only when
that bound is at most MAX_STEPS (a search then ends within a fraction of a second, where
the sandbox would end a long one at its time limit) and when the text has no character
outside the Basic Multilingual Plane (JavaScript sees those as two UTF-16 units).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MAX_STEPS = 2_000_000
"""The largest bound on a search's backtracking steps that is matched in Python."""

_LINE_TERMINATORS = "\n\r\u2028\u2029"
_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_", "s": _SPACE}
_ESCAPES = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}
# Python's `\B` never matches an empty text (JavaScript's does): spelled out instead
_NOT_BOUNDARY = r"(?:(?<=\w)(?=\w)|(?<!\w)(?!\w))"
_CONTROL = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v"}
_SYNTAX = set("^$\\.*+?()[]{}|/")
_BOUNDED = re.compile(r"\{(\d{1,4})(,(\d{1,4})?)?\}")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Translation:
    """A pattern as Python runs it, with what bounds the cost of a search."""

    compiled: re.Pattern[str]
    quantifiers: int
    alternatives: int
    length: int

    def steps(self, text_length: int) -> int:
        """An upper bound on the backtracking steps of a search in a text this long."""
        return (text_length + 1) ** (self.quantifiers + 1) * self.alternatives * (self.length + 1)


def _literal(char: str) -> str | None:
    """A pattern character as a Python literal; None when JavaScript may read it otherwise
    (outside the Basic Multilingual Plane, or a lone surrogate)."""
    if char > "\uffff" or "\ud800" <= char <= "\udfff":
        return None
    return re.escape(char)


def _class(pattern: str, start: int) -> tuple[str, int] | None:
    """The character class opening at `start` (a `[`): its Python text and the index after
    it; None when JavaScript may read it otherwise (or it does not close)."""
    i, parts = start + 1, ["["]
    if pattern.startswith("^", i):
        parts.append("^")
        i += 1
    if pattern.startswith("]", i):  # `[]` and `[^]`: JavaScript's own meanings
        return None
    first = True
    previous: str | None = None  # the last single character, a range's possible start
    while i < len(pattern):
        char, after = pattern[i], pattern[i + 1 : i + 2]
        i += 1
        if char == "]":
            parts.append("]")
            return "".join(parts), i
        if char == "-" and not first and after != "]":
            if previous is None or after in ("\\", "[", "") or after < previous:
                return None  # a range from a class escape, or reversed: JavaScript decides
            end = _literal(after)
            if end is None:
                return None
            parts.append("-" + end)
            previous, i = None, i + 1
            continue
        first = False
        if char == "\\":
            i += 1
            if after in _CLASS_ESCAPES:
                parts.append(_CLASS_ESCAPES[after])
                previous = None
                continue
            if after in _CONTROL:
                char = _CONTROL[after]
            elif after and (after in _SYNTAX or after == "-"):
                char = after
            else:
                return None
        text = _literal(char)
        if text is None:
            return None
        parts.append(text)
        previous = char
    return None


@lru_cache(maxsize=1024)
def translate(pattern: str) -> Translation | None:
    """`pattern` (a JavaScript RegExp source, no flags) as Python runs it identically, or
    None when it uses anything outside the shared subset (or is not a valid pattern)."""
    out: list[str] = []
    quantifiers, length = 0, len(pattern)
    groups: list[int] = [1]  # alternatives of each open group, the pattern's own first
    combinations = 1
    quantifiable = False
    i = 0
    while i < length:
        char = pattern[i]
        if char in "*+?{":
            if char == "{":
                bounded = _BOUNDED.match(pattern, i)
                if bounded is None:
                    return None
                low, high = bounded.group(1), bounded.group(3)
                if high is not None and int(high) < int(low):
                    return None
                out.append(bounded.group(0))
                i = bounded.end()
            else:
                out.append(char)
                i += 1
            if not quantifiable:
                return None
            if pattern.startswith("?", i):
                out.append("?")
                i += 1
            quantifiers += 1
            quantifiable = False
            continue
        i += 1
        quantifiable = False
        if char == "^":
            out.append("^")
        elif char == "$":
            out.append(r"\Z")
        elif char == "|":
            groups[-1] += 1
            out.append("|")
        elif char == "(":
            if pattern.startswith("?", i):
                if not pattern.startswith("?:", i):
                    return None
                i += 2
            groups.append(1)
            out.append("(?:")
        elif char == ")":
            if len(groups) == 1:
                return None
            combinations *= groups.pop()
            out.append(")")
        elif char == "[":
            parsed = _class(pattern, i - 1)
            if parsed is None:
                return None
            source, i = parsed
            out.append(source)
            quantifiable = True
        elif char == ".":
            out.append(f"[^{_LINE_TERMINATORS}]")
            quantifiable = True
        elif char == "\\":
            code = pattern[i : i + 1]
            i += 1
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
            elif code == "b":
                out.append(r"\b")
                continue
            elif code == "B":
                out.append(_NOT_BOUNDARY)
                continue
            elif code in _CONTROL:
                out.append(re.escape(_CONTROL[code]))
            elif code and code in _SYNTAX:
                out.append(re.escape(code))
            else:
                return None
            quantifiable = True
        elif char in "]}":
            return None
        else:
            literal = _literal(char)
            if literal is None:
                return None
            out.append(literal)
            quantifiable = True
    if len(groups) != 1:
        return None
    combinations *= groups[0]
    try:
        compiled = re.compile("".join(out), re.ASCII)
    except re.error:
        return None
    return Translation(compiled, quantifiers, combinations, length)


def search(pattern: str, text: str) -> bool | None:
    """`new RegExp(pattern).test(text)` when Python can answer it exactly and quickly;
    None when the JavaScript sandbox must."""
    translation = translate(pattern)
    if translation is None or translation.steps(len(text)) > MAX_STEPS:
        return None
    if not text.isascii() and _ASTRAL.search(text) is not None:
        return None
    return translation.compiled.search(text) is not None
