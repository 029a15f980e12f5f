"""`__expected` cells of CSV tests read as promptfoo 0.121's assertionFromString reads them.

The cells below are rows of tests/compat/configs/csv_expected_lists, whose golden holds
the real promptfoo CLI's verdicts on them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.common.jsvalues import JS_WHITESPACE, js_trim
from evals.graders.base import GraderError
from evals.graders.output import parse_comma_separated
from evals.model.errors import SuiteError
from evals.suite import load_suite
from evals.suite.csv_tests import assertion_from_string, parse_finite_number, read_csv_tests

# Separators promptfoo skips around commas: JavaScript's `\s`, never Python-only spaces.
_SPACES = st.text(alphabet=st.sampled_from(JS_WHITESPACE), max_size=3)


@st.composite
def _quoted_list(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A list of any items written with promptfoo's quoting, and the items."""
    items = draw(st.lists(st.text(max_size=8), min_size=1, max_size=5))
    parts = []
    for item in items:
        quote = draw(st.sampled_from(['\\"', '""']))
        body = item.replace("\\", "\\\\").replace('"', quote)
        parts.append(f'{draw(_SPACES)}"{body}"{draw(_SPACES)}')
    separator = draw(st.sampled_from([",", ",,", ", ,"]))
    return separator.join(parts), items


@given(_quoted_list())
def test_quoted_items_come_back_exactly(case: tuple[str, list[str]]) -> None:
    text, items = case
    assert parse_comma_separated(text) == items


@given(st.text(alphabet=st.characters(blacklist_characters='"'), max_size=30))
def test_unquoted_items_split_on_every_comma_and_trim_like_javascript(text: str) -> None:
    expected = [js_trim(part) for part in text.split(",") if js_trim(part)]
    assert parse_comma_separated(text) == expected


@given(st.text(alphabet=st.characters(blacklist_characters='"\\'), max_size=20))
def test_a_quote_left_open_is_refused(text: str) -> None:
    with pytest.raises(GraderError, match="Unterminated quoted field"):
        parse_comma_separated(f'a, "{text}')


@pytest.mark.parametrize(
    ("cell", "items"),
    [
        ('q,\t"x,y"', ["q", "x,y"]),
        ("aaa\nbbb,zzz", ["aaa\nbbb", "zzz"]),
        ('"",x', ["", "x"]),
        ('"a\\"b"', ['a"b']),
        ('"A""B"', ['A"B']),
        ('" padded "', [" padded "]),
        ('" PADDED",padded', [" PADDED", "padded"]),
        (" a ,, b ,", ["a", "b"]),
    ],
)
def test_lists_the_promptfoo_cli_graded(cell: str, items: list[str]) -> None:
    assert assertion_from_string(f"contains-any:{cell}")["value"] == items


def test_text_after_a_closing_quote_is_refused() -> None:
    with pytest.raises(GraderError, match="Expected comma after quoted field"):
        parse_comma_separated('"a" b')


def test_javascript_trim_differs_from_python_strip() -> None:
    assert js_trim("\ufeff\u2003 a\xa0") == "a"
    assert js_trim("\x1ca\x85") == "\x1ca\x85"


@pytest.mark.parametrize(
    ("cell", "assertion"),
    [
        ("file://check.js", {"type": "javascript", "value": "file://check.js"}),
        ("file://check.CJS", {"type": "javascript", "value": "file://check.CJS"}),
        ("file://check.js:fn", {"type": "equals", "value": "file://check.js:fn"}),
        ("file://check.py", {"type": "python", "value": "check.py"}),
        ("file://check.py:get_assert", {"type": "python", "value": "check.py:get_assert"}),
        ("fn: output === 'abc'", {"type": "javascript", "value": "output === 'abc'"}),
        ("eval:output.length", {"type": "javascript", "value": "output.length"}),
        ("javascript: 1/2", {"type": "javascript", "value": "1/2"}),
        ("python: len(output)/6", {"type": "python", "value": "len(output)/6"}),
        ("grade: says abc", {"type": "llm-rubric", "value": " says abc"}),
        ("llm-rubric:xyz", {"type": "llm-rubric", "value": "xyz"}),
        ("levenshtein(2):aple", {"type": "levenshtein", "value": "aple", "threshold": 2.0}),
        ("not-rouge-n(0.2): a", {"type": "not-rouge-n", "value": "a", "threshold": 0.2}),
        ("levenshtein(\u0663):w", {"type": "equals", "value": "levenshtein(\u0663):w"}),
        ("similar:x", {"type": "similar", "value": "x", "threshold": 0.8}),
        ("similar:cosine:x", {"type": "similar", "value": "cosine:x", "threshold": 0.8}),
        ("starts-with:hi", {"type": "starts-with", "value": "hi", "threshold": 0.75}),
        ("is-json", {"type": "is-json", "value": None}),
        ("contains-json: {}", {"type": "contains-json", "value": " {}"}),
        ("not-regex:\\d ", {"type": "not-regex", "value": "\\d"}),
        ("contains-any:", {"type": "contains-any", "value": ""}),
        ("select-best:x", {"type": "equals", "value": "select-best:x"}),
        ("trajectory:tool-used:search", {"type": "trajectory:tool-used", "value": "search"}),
        ("equals:abc\x1c", {"type": "equals", "value": "abc\x1c"}),
        ("plain words", {"type": "equals", "value": "plain words"}),
    ],
)
def test_every_shorthand_of_assertion_from_string(cell: str, assertion: dict[str, object]) -> None:
    assert assertion_from_string(cell) == assertion


@pytest.mark.parametrize("cell", ["\u0663", "9" * 400, " 1e999", "0x10", "1_0"])
def test_thresholds_are_finite_ascii_numbers(cell: str) -> None:
    assert parse_finite_number(cell) is None


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ('"contains-any:""unterminated,x"', "Unterminated quoted field"),
        ('"icontains-all:""a"" b"', "Expected comma after quoted field"),
    ],
)
def test_a_malformed_list_stops_the_load_at_its_row(
    tmp_path: Path, cell: str, message: str
) -> None:
    path = tmp_path / "tests.csv"
    path.write_text(f"text,__expected\nok,contains:o\nx,{cell}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=message) as caught:
        read_csv_tests(path)
    assert caught.value.file == str(path)
    assert caught.value.line == 3
    assert "quote" in (caught.value.fix or "")


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_rows_end_at_any_line_break_and_a_quoted_cell_keeps_its_own(
    tmp_path: Path, newline: str
) -> None:
    # a spreadsheet saved on Windows: csv-parse keeps the cell's \r\n, and so must we
    path = tmp_path / "tests.csv"
    rows = ["question,__expected", '"two\r\nlines",contains:two', "one,contains:one", "x,y,z"]
    path.write_bytes(newline.join(rows).encode())
    with pytest.raises(SuiteError, match="3 cells") as caught:
        read_csv_tests(path)
    assert caught.value.line == 5  # the quoted \r\n is a line break in any editor
    path.write_bytes(newline.join(rows[:3]).encode())
    first, second = read_csv_tests(path)
    assert first["vars"] == {"question": "two\r\nlines"}
    assert (first.line, second.line) == (2, 4)


def test_promptfoo_csv_delimiter_splits_test_and_prompt_files(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "tests.csv").write_text(
        'question;__expected\n"a, b; c";contains:a, b\n', encoding="utf-8"
    )
    (tmp_path / "prompts.csv").write_text('prompt;label\n"Q: {{question}}";q\n', encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "prompts: [file://prompts.csv]\nproviders: [echo]\ntests: file://tests.csv\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PROMPTFOO_CSV_DELIMITER", ";")
    loaded = load_suite(suite)
    assert [p.label for p in loaded.prompts] == ["q"]
    (case,) = loaded.cases
    assert case.vars == {"question": "a, b; c"}
    assert [(a.type, a.value) for a in case.asserts] == [("contains", "a, b")]
    monkeypatch.setenv("PROMPTFOO_CSV_DELIMITER", "::")
    with pytest.raises(SuiteError, match="PROMPTFOO_CSV_DELIMITER") as caught:
        load_suite(suite)
    assert caught.value.file == str(suite)
