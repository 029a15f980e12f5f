"""Patterns matched in Python answer exactly as JavaScript's RegExp does.

Every comparison asks QuickJS itself, in a context of its own (not the harness's engine),
so the reference is JavaScript's own regular expression implementation.
"""

from __future__ import annotations

import json

import pytest
import quickjs
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.common import jsregex
from evals.common.jsengine import JavaScriptError, regex_test

_JS = quickjs.Context()
_JS.eval(
    """
    function tests(pattern, textsJson) {
      var re = new RegExp(pattern);
      return JSON.stringify(JSON.parse(textsJson).map(function (t) { return re.test(t); }));
    }
    function compiles(pattern) {
      try { new RegExp(pattern); return true; } catch (e) { return false; }
    }
    function everyUnit(pattern) {
      var re = new RegExp(pattern), out = [];
      for (var c = 0; c < 0x10000; c++) out.push(re.test(String.fromCharCode(c)) ? "1" : "0");
      return out.join("");
    }
    """
)


def js_tests(pattern: str, texts: list[str]) -> list[bool]:
    """`new RegExp(pattern).test(text)` for each text, in JavaScript."""
    return list(json.loads(_JS.get("tests")(pattern, json.dumps(texts))))


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\s$",
        r"^\S$",
        r"^\d$",
        r"^\D$",
        r"^\w$",
        r"^\W$",
        "^.$",
        r"\b",
        r"\B",
        r"^[\s\d]$",
        r"^[^\w]$",
    ],
)
def test_every_bmp_character_is_classed_as_in_javascript(pattern: str) -> None:
    translation = jsregex.translate(pattern)
    assert translation is not None
    expected = _JS.get("everyUnit")(pattern)
    python = "".join("1" if translation.compiled.search(chr(c)) else "0" for c in range(0x10000))
    differing = [hex(c) for c in range(0x10000) if python[c] != expected[c]]
    assert differing == []


_ATOMS = [
    "a",
    "b",
    "x",
    " ",
    "-",
    ".",
    r"\d",
    r"\D",
    r"\w",
    r"\W",
    r"\s",
    r"\S",
    r"\.",
    r"\\",
    r"\/",
    r"\n",
    r"\t",
    "[a-c]",
    "[^a]",
    r"[\d.-]",
    "[-x]",
    r"[\w\s]",
    "[a-]",
    "é",
    "\u2028",
    "[b-a]",
    r"[\d-x]",
    "[]",
    "[^]",
    r"\b",
    r"\B",
    "^",
    "$",
    "|",
    "(",
    ")",
    "(?:",
    "(?=",
    r"\1",
    "{",
    "}",
    "]",
    "*",
    "+",
    "?",
    "*?",
    "+?",
    "{2}",
    "{1,3}",
    "{2,}",
    "{3,1}",
    r"\u0041",
]
_TEXT = st.text(
    alphabet=st.sampled_from(list("abcx -.\\/\n\t1é9_\u2028\r\ufeff\xa0Z")), max_size=12
)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=7), st.lists(_TEXT, max_size=8))
def test_translated_patterns_match_as_in_javascript(atoms: list[str], texts: list[str]) -> None:
    pattern = "".join(atoms)
    translation = jsregex.translate(pattern)
    if translation is None:
        return
    assert _JS.get("compiles")(pattern), f"{pattern!r} is not a JavaScript pattern"
    python = [translation.compiled.search(text) is not None for text in texts]
    assert python == js_tests(pattern, texts), pattern


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a)\1",
        "(?=a)b",
        "(?!a)",
        "(?<n>a)",
        "a{2,1}",
        "a{",
        "}",
        "]",
        "[]",
        "[^]",
        r"\u0041",
        "(ab)*",
        "(a|b)+",
        "a**",
        "*a",
        "^*",
        r"\b+",
        "(",
        ")",
        "[a",
        r"[\d-z]",
        "[z-a]",
        r"\x41",
        "\U0001f600",
        r"\k<a>",
        r"[\b]",
        r"\-",
        "a\\",
    ],
)
def test_patterns_outside_the_shared_subset_are_left_to_javascript(pattern: str) -> None:
    assert jsregex.translate(pattern) is None
    assert jsregex.search(pattern, "ab") is None


def test_texts_outside_the_basic_plane_are_left_to_javascript() -> None:
    # JavaScript sees an emoji as two UTF-16 units: `^.$` does not match it there
    assert jsregex.search("^.$", "\U0001f600") is None
    assert regex_test("^.$", "\U0001f600") is False
    assert regex_test("^..$", "\U0001f600") is True


def test_a_search_that_could_backtrack_long_is_left_to_javascript() -> None:
    text = "1" * 200  # a bound of 201^3 x 8 steps; JavaScript takes about 200^3 / 6
    assert jsregex.translate(r"\d+\d+x") is not None
    assert jsregex.search(r"\d+\d+x", text) is None
    assert regex_test(r"\d+\d+x", text) is False
    assert jsregex.search(r"^item \d+$", "item 12") is True


def test_invalid_patterns_still_raise_javascripts_error() -> None:
    with pytest.raises(JavaScriptError, match="nothing to repeat"):
        regex_test("a**", "a")


def test_dollar_does_not_match_before_a_final_newline() -> None:
    assert regex_test("a$", "a\n") is False
    assert jsregex.search("a$", "a\n") is False
    assert jsregex.search("^a.c$", "a\rc") is False
