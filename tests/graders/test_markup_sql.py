"""XML, HTML and SQL assertions beyond the golden rows: element paths, text beside HTML
elements, whitelists, dialects."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from assertion_kit import run
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.graders.markup import element_tree, strict_xml_error, xml_candidates
from evals.graders.sql import column_list, parse_statements, sql_code_blocks, table_list
from evals.graders.structured import validate_html

ORDER = '<order id="7"><item><name>pen</name></item><item><name>ink</name></item></order>'


def test_required_paths_reach_repeated_elements_and_attributes() -> None:
    assert run("is-xml", ORDER, "order.item.1.name, order.@_id").passed
    grade = run("is-xml", ORDER, {"requiredElements": ["order.item.2.name"]})
    assert not grade.passed
    assert grade.reason == "XML is missing required elements: order.item.2.name"


def test_contains_xml_finds_the_fragment_inside_prose() -> None:
    text = f"Here you go:\n{ORDER}\nanything else?"
    assert run("contains-xml", text, ["order.item"]).passed
    assert not run("not-contains-xml", text).passed


def test_internal_dtd_subsets_are_refused() -> None:
    bomb = '<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>'
    grade = run("is-xml", bomb)
    assert not grade.passed
    assert grade.reason == "DTD internal subsets are not supported by is-xml validation"


def test_object_value_without_required_elements_is_an_error() -> None:
    grade = run("is-xml", ORDER, {"elements": ["x"]})
    assert grade.errored


@st.composite
def _trees(draw: st.DrawFn, depth: int = 0) -> ET.Element:
    element = ET.Element(draw(st.sampled_from(["a", "b", "c"])))
    if depth < 3:
        for _ in range(draw(st.integers(0, 3))):
            element.append(draw(_trees(depth + 1)))
    if not len(element):
        element.text = draw(st.sampled_from(["", "x", "12"]))
    return element


@pytest.mark.slow
@settings(deadline=None, max_examples=60)
@given(_trees())
def test_well_formed_documents_parse_and_every_child_path_exists(tree: ET.Element) -> None:
    text = ET.tostring(tree, encoding="unicode")
    assert strict_xml_error(text) is None
    built = element_tree(text)
    assert tree.tag in built
    for child in tree:
        assert run("is-xml", text, f"{tree.tag}.{child.tag}").passed
    assert (0, len(text)) in xml_candidates(text)


def test_table_list_names_statement_kind_and_skips_ctes() -> None:
    sql = "WITH c AS (SELECT id FROM users) INSERT INTO audit SELECT id FROM c"
    tables = table_list(parse_statements(sql, "MySQL"))
    assert tables == ["insert::null::audit", "select::null::users"]


def test_column_whitelist_resolves_aliases() -> None:
    statements = parse_statements("SELECT u.name FROM users u", "MySQL")
    assert column_list(statements) == ["select::users::name"]
    allowed = {"allowedColumns": ["select::users::name"]}
    assert run("is-sql", "SELECT u.name FROM users u", allowed).passed
    denied = run("is-sql", "SELECT u.email FROM users u", allowed)
    assert not denied.passed
    assert denied.reason == (
        "SQL references unauthorized column(s). Found: [select::users::email]. "
        "Allowed: [select::users::name]."
    )


def test_whitelist_entries_are_case_insensitive_patterns() -> None:
    assert run("is-sql", "SELECT * FROM Users", {"allowedTables": ["select::null::u.*"]}).passed


def test_dialect_changes_what_parses() -> None:
    postgres = "SELECT x::int FROM generate_series(1, 3) AS x"
    assert run("is-sql", postgres, {"databaseType": "PostgresQL"}).passed
    assert not run("is-sql", postgres).passed  # MySQL has no generate_series


def test_unknown_dialect_is_an_error() -> None:
    assert run("is-sql", "SELECT 1", {"databaseType": "Cobol"}).errored


def test_bare_expressions_are_not_sql() -> None:
    assert not run("is-sql", "hello").passed
    assert not run("is-sql", "1 + 1").passed


def test_contains_sql_reads_only_sql_or_untagged_fences() -> None:
    text = "```python\nprint(1)\n```\n~~~~\nSELECT 1 FROM t\n~~~~"
    assert sql_code_blocks(text) == ["SELECT 1 FROM t"]
    assert run("contains-sql", text).passed
    failing = run("contains-sql", "```sql\nSELEC 1\n```")
    assert not failing.passed
    assert failing.reason == "SQL statement does not conform to the provided MySQL database syntax."


@pytest.mark.parametrize(
    "text",
    [
        "<div>text</div> trailing",
        "<p>a</p> mid <p>b</p>",
        "<div>x</div>.",
        "leading <div>text</div>",
        "<p>a</p><!-- c --> tail",
    ],
)
def test_text_beside_top_level_elements_is_not_wrapped_html(text: str) -> None:
    assert validate_html(text) == (False, "Output must be wrapped in HTML tags")
    assert not run("is-html", text).passed


@pytest.mark.parametrize(
    "text",
    [
        "<ul><li>a</li></ul> ",
        "<p>a</p><!-- c -->",
        "<p>a <b>b</b> c</p>",
        "<html><body><p>a</p> tail</body></html>",
        "<body>lead <b>x</b></body>",
    ],
)
def test_text_inside_an_element_or_a_written_body_is_wrapped(text: str) -> None:
    assert validate_html(text) == (True, "Output is valid HTML")


@pytest.mark.slow
@given(
    st.lists(
        st.sampled_from(["<p>a</p>", "<div><i>b</i></div>", " ", "\n", "x", "<!-- c -->"]),
        min_size=1,
    )
)
def test_only_whitespace_beside_top_level_elements_keeps_html_wrapped(parts: list[str]) -> None:
    text = "".join(parts)
    beside = "".join(p for p in parts if not p.startswith("<")).strip()
    has_element = any(p.startswith("<p") or p.startswith("<div") for p in parts)
    valid, reason = validate_html(text)
    if beside:
        assert (valid, reason) == (False, "Output must be wrapped in HTML tags")
    else:
        assert valid is has_element
