"""The Porter stemmer of the `natural` package, which promptfoo's `meteor` stems with.

natural's stemmer is not the textbook algorithm: it leaves words shorter than three letters
alone, lower-cases the rest, turns `-logi` into `-log` and `-bli` into `-ble` in step 2, and
measures and replaces with its own regular expressions. This is a line-by-line port of
natural 8.1.1's `porter_stemmer.js` (MIT licence), run on the word's UTF-16 code units so
that lengths and character classes are JavaScript's. Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evals.common.jsvalues import utf16_units

# JavaScript's `.` (no line terminators) and `$` (end of input only).
_DOT = "[^\n\r\u2028\u2029]"
_GROUPS = (re.compile("[^aeiouy]+y"), re.compile("[aeiou]+"), re.compile("[^V]+"))
_CHARS = (re.compile("[^aeiouy]y"), re.compile("[aeiou]"), re.compile("[^V]"))
_DOUBLE_CONSONANT = re.compile(r"([^aeiou])\1\Z")
_ED_ING = re.compile(r"(ed|ing)\Z")
_NOT_WXY_THEN_ONE = re.compile(rf"[^wxy]{_DOT}\Z")
_STEP4 = (
    re.compile(
        rf"^({_DOT}+?)(al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ou|ism|ate|iti|ous|ive|ize)\Z"
    ),
    re.compile(rf"^({_DOT}+?)(s|t)(ion)\Z"),
)
_Patterns = Sequence[tuple[str, str, str]]
_STEP1B: _Patterns = (("at", "", "ate"), ("bl", "", "ble"), ("iz", "", "ize"))
_STEP2: _Patterns = tuple(
    (suffix, "", replacement)
    for suffix, replacement in (
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
        ("izer", "ize"), ("abli", "able"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"),
        ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
        ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
        ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
    )
)  # fmt: skip
_STEP3: _Patterns = (
    ("icate", "", "ic"), ("ative", "", ""), ("alize", "", "al"), ("iciti", "", "ic"),
    ("ical", "", "ic"), ("ful", "", ""), ("ness", "", ""),
)  # fmt: skip


def _categorize(token: str, patterns: tuple[re.Pattern[str], ...]) -> str:
    first, vowels, consonants = patterns
    return consonants.sub("C", vowels.sub("V", first.sub("CV", token)))


def _measure(token: str | None) -> float:
    if not token:
        return -1
    groups = _categorize(token, _GROUPS)
    groups = groups[1:] if groups.startswith("C") else groups
    groups = groups[:-1] if groups.endswith("V") else groups
    return len(groups) / 2


def _replace_suffix(token: str, suffix: str, replacement: str) -> str | None:
    """natural's attemptReplace with a plain suffix (None when the token lacks it)."""
    if not token.endswith(suffix):
        return None
    return token[: len(token) - len(suffix)] + replacement


def _replace_patterns(token: str, patterns: _Patterns, threshold: float | None) -> str:
    """natural's attemptReplacePatterns: measured on the original token, applied in turn."""
    replacement = token
    for suffix, stem_part, new in patterns:
        if threshold is None or _measure(_replace_suffix(token, suffix, stem_part)) > threshold:
            replacement = _replace_suffix(replacement, suffix, new) or replacement
    return replacement


def _step1a(token: str) -> str:
    if token.endswith("sses") or token.endswith("ies"):
        return token[:-2]
    if token[-1:] == "s" and token[-2:-1] != "s" and len(token) > 2:
        return token[:-1]
    return token


def _step1b_tail(token: str) -> str | None:
    if "V" not in _categorize(token, _GROUPS):
        return None
    result = _replace_patterns(token, _STEP1B, None)
    if result != token:
        return result
    if _DOUBLE_CONSONANT.search(token) and token[-1:] not in ("l", "s", "z"):
        return token[:-1]
    if (
        _measure(token) == 1
        and _categorize(token, _CHARS)[-3:] == "CVC"
        and token[-1:] not in ("w", "x", "y")
    ):
        return token + "e"
    return token


def _step1b(token: str) -> str:
    if token[-3:] == "eed":
        return token[:-1] if _measure(token[:-3]) > 0 else token
    match = _ED_ING.search(token)
    if match is None:
        return token
    stripped = token[: match.start()]
    result = _step1b_tail(stripped) if stripped else stripped
    return result or token


def _step1c(token: str) -> str:
    groups = _categorize(token, _GROUPS)
    if token[-1:] == "y" and "V" in groups[:-1]:
        return token[:-1] + "i"
    return token


def _step4(token: str) -> str:
    for pattern, parts in zip(_STEP4, ((1,), (1, 2)), strict=True):
        match = pattern.search(token)
        result = "".join(match.group(i) for i in parts) if match else ""
        if _measure(result) > 1:
            return result
    return token


def _step5a(token: str) -> str:
    m = _measure(token[:-1] if token.endswith("e") else token)
    chars = _categorize(token, _CHARS)
    cvc = chars[max(len(chars) - 4, 0) :][:3] == "CVC"
    if m > 1 or (m == 1 and not (cvc and _NOT_WXY_THEN_ONE.search(token))):
        return token[:-1] if token.endswith("e") else token
    return token


def _step5b(token: str) -> str:
    if _measure(token) > 1 and token.endswith("ll"):
        return token[:-1]
    return token


def _to_units(text: str) -> str:
    """The text as one character per UTF-16 code unit (JavaScript's view of a string)."""
    if all(ord(c) < 0x10000 for c in text):
        return text
    return "".join(map(chr, utf16_units(text)))


def _from_units(units: str) -> str:
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def stem(word: str) -> str:
    """natural's PorterStemmer.stem: the word's stem, lower-cased (short words as given)."""
    if len(_to_units(word)) < 3:
        return word
    token = _step1c(_step1b(_step1a(_to_units(word.lower()))))
    token = _step5b(
        _step5a(_step4(_replace_patterns(_replace_patterns(token, _STEP2, 0), _STEP3, 0)))
    )
    return _from_units(token)
