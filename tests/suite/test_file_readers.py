"""The readers of suite files: encodings, YAML aliases and duplicate keys, CSV edge cases,
var types and `file://` vars from datasets."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evals.common.files import read_text
from evals.model.errors import SuiteError
from evals.suite import tests_files
from evals.suite.csv_tests import read_csv_tests
from evals.suite.vars import check_file_vars, json_vars
from evals.suite.yaml_lines import MAX_ALIAS_NODES, load_yaml, mark_origin, parse_yaml_text

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(TEXT)
def test_utf8_text_reads_back_with_universal_newlines(tmp_path: Path, text: str) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    if text[:1] == "\ufeff":
        expected = expected[1:]
    if len(text.encode()) >= 2 and (text.encode()[0] == 0) != (text.encode()[1] == 0):
        with pytest.raises(SuiteError, match="UTF-16"):
            read_text(path)
        return
    assert read_text(path) == expected


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.text("abc \n", max_size=10), max_size=5), st.sampled_from([0xE9, 0xFF, 0x81]))
def test_a_bad_byte_is_reported_at_its_line(tmp_path: Path, lines: list[str], byte: int) -> None:
    before = "\n".join(lines)
    path = tmp_path / "f.yaml"
    path.write_bytes(b"x" + before.encode() + bytes([byte]) + b"tail\n")
    with pytest.raises(SuiteError) as caught:
        read_text(path)
    assert caught.value.line == before.count("\n") + 1
    assert "UTF-8" in caught.value.message and caught.value.fix


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_files_are_refused(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "suite.yaml"
    path.write_bytes("prompts: [hi]\n".encode(encoding))
    with pytest.raises(SuiteError, match=r"UTF-(16|32)") as caught:
        load_yaml(path)
    assert caught.value.file == str(path)


def _nested_aliases(width: int, depth: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    for level in range(1, depth):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.integers(1, 9), st.booleans())
def test_aliases_are_refused_exactly_beyond_the_budget(width: int, depth: int, merge: bool) -> None:
    """The count is the number of values the aliases stand for, on both YAML paths
    (the event builder, and PyYAML's composer that `<<` merge keys go through)."""
    text = ("m: &m {a: 1}\nn: {<<: *m}\n" if merge else "") + _nested_aliases(width, depth)
    expanded, size = (3 if merge else 0), width + 1  # *m: a mapping of one pair
    for _ in range(1, depth):  # each level's aliases stand for the level below, whole
        expanded += width * size
        size = 1 + width * size
    if expanded > MAX_ALIAS_NODES + 5:
        with pytest.raises(yaml.MarkedYAMLError, match="alias"):
            parse_yaml_text(text)
    elif expanded < MAX_ALIAS_NODES - 5:
        document = parse_yaml_text(text)
        assert len(document[f"l{depth - 1}"]) == width


def test_duplicate_keys_name_both_lines() -> None:
    with pytest.raises(yaml.MarkedYAMLError) as caught:
        parse_yaml_text("a: 1\nb:\n  c: 2\n  c: 3\n")
    assert "first at line 3, again at line 4" in str(caught.value)
    with pytest.raises(yaml.MarkedYAMLError, match="duplicate key '1'"):
        parse_yaml_text("x: {1: a, '1': b}\n")  # js-yaml compares keys as strings
    assert parse_yaml_text("b: &b {a: 1}\nx: {<<: *b, a: 2}\n")["x"] == {"a": 2}


def test_a_nul_byte_in_yaml_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("a: 1\nb: x\x00y\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="U\\+0000") as caught:
        load_yaml(path)
    assert caught.value.line == 2


def test_csv_unclosed_quote_and_huge_cells(tmp_path: Path) -> None:
    path = tmp_path / "tests.csv"
    path.write_text('q,r\na,b\nc,"d\ne,f\n', encoding="utf-8")
    with pytest.raises(SuiteError, match="quote") as caught:
        read_csv_tests(path)
    assert caught.value.line == 3
    path.write_text('q\n"multi\nline"\n' + "x" * 300_000 + "\n", encoding="utf-8")
    tests = read_csv_tests(path)
    assert [t["vars"]["q"] for t in tests] == ["multi\nline", "x" * 300_000]
    assert [getattr(t, "line", None) for t in tests] == [2, 4]


@pytest.mark.parametrize("cell", ["high", "1e", "--1", "nan"])
def test_a_csv_threshold_must_be_a_number(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "tests.csv"
    path.write_text(f"q,__threshold\nhi,{cell}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="__threshold"):
        read_csv_tests(path)


def test_dataset_tests_name_their_file_and_row(tmp_path: Path) -> None:
    path = tmp_path / "tests.jsonl"
    path.write_text('{"vars": {"q": 1}}\n\n{"vars": {"q": 2}, "metadata": {"a": 1}}\n')
    tests = tests_files.tests_in_file(path, path.parent)
    assert [t.line for t in tests] == [1, 3]
    assert {t.file for t in tests} == {str(path)}
    assert tests[1]["metadata"].file == str(path)
    path.write_text('{"vars": {}}\n"text"\n')
    with pytest.raises(SuiteError, match="mapping") as caught:
        tests_files.tests_in_file(path, path.parent)
    assert caught.value.line == 2


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.dictionaries(st.text(max_size=4), st.text(max_size=6) | st.integers()), max_size=6),
    st.lists(st.sampled_from(["", " ", "\n", "\n\n", "\t", "\r\n"]), min_size=8, max_size=8),
)
def test_json_dataset_tests_name_their_line(
    tmp_path: Path, variables: list[dict[str, object]], gaps: list[str]
) -> None:
    """Each test of a JSON array names the line it starts on, however the file is laid out
    (one line, indented, blank lines, strings holding brackets and commas)."""
    text, expected = "[", []
    for index, values in enumerate(variables):
        text += gaps[index % 8]
        expected.append(text.replace("\r\n", "\n").count("\n") + 1)
        text += json.dumps({"vars": values}, indent=2 if index % 2 else None)
        text += gaps[(index + 3) % 8] + ("," if index < len(variables) - 1 else "")
    path = tmp_path / "tests.json"
    path.write_bytes((text + gaps[5] + "]").encode())

    assert [t.line for t in tests_files.tests_in_file(path, path.parent)] == expected


def test_a_json_dataset_row_that_is_not_a_test_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tests.json"
    path.write_text('[\n  {"vars": {"q": "a"}},\n\n  {"vars": {"q": "[1, 2]"}},\n  7\n]\n')
    with pytest.raises(SuiteError, match="test #3 must be a mapping") as caught:
        tests_files.tests_in_file(path, path.parent)
    assert caught.value.line == 5


def test_vars_must_be_json_values() -> None:
    variables = parse_yaml_text("q: 2024-01-02\nn: {1: a}\nok: [1, x]\n")
    checked = json_vars(variables, "suite.yaml")
    assert checked == {"q": "2024-01-02", "n": {"1": "a"}, "ok": [1, "x"]}
    assert json_vars({"a": "b"}, "s") == {"a": "b"}
    stamp = json_vars({"t": datetime.datetime(2024, 1, 2, 3, 4, 5)}, "s")
    assert stamp == {"t": "2024-01-02T03:04:05"}
    for text, kind in (
        ("!!binary aGk=", "binary"),
        ("!!set {a}", "set"),
        ("!!omap [a: 1]", "pairs"),
    ):
        variables = parse_yaml_text(f"x: 1\nq: {text}\n")
        with pytest.raises(SuiteError, match=kind) as caught:
            json_vars(variables, "tests.yaml")
        assert caught.value.line == 2 and caught.value.file == "tests.yaml"


def test_file_vars_from_data_stay_inside_the_suite_folder(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "data").mkdir(parents=True)
    (suite / "doc.txt").write_text("hello", encoding="utf-8")
    (suite / "data" / "near.txt").write_text("near", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    dataset = str(suite / "data" / "tests.csv")
    test = mark_origin({"vars": {"q": "x"}}, dataset, 2)
    check = {"root": suite, "test": test, "where": "suite.yaml", "checked": set()}
    check_file_vars({"q": "file://doc.txt"}, **check)  # type: ignore[arg-type]
    check_file_vars({"q": "file://data/near.txt"}, **check)  # type: ignore[arg-type]
    for ref in ("file://../secret.txt", f"file://{tmp_path}/secret.txt", "file:///etc/passwd"):
        with pytest.raises(SuiteError, match="outside") as caught:
            check_file_vars({"q": ref}, **check)  # type: ignore[arg-type]
        assert caught.value.file == dataset and caught.value.line == 2
    own = {"vars": {"q": "x"}}  # written in the suite: the author's choice
    check_file_vars({"q": f"file://{tmp_path}/secret.txt"}, suite, own, "suite.yaml", set())
    with pytest.raises(SuiteError, match="does not exist"):
        check_file_vars({"q": "file://missing.txt"}, **check)  # type: ignore[arg-type]
    (suite / "blob.txt").write_bytes(b"\xff\xfe\x81")
    with pytest.raises(SuiteError, match="UTF"):
        check_file_vars({"q": "file://blob.txt"}, **check)  # type: ignore[arg-type]
