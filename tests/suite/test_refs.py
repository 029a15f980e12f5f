"""`$ref` in suites and tests files, resolved at load as promptfoo's json-schema-ref-parser does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.suite import load_suite
from evals.suite.refs import pointer_tokens

TEMPLATES = """\
    assertionTemplates:
      health: {type: icontains, value: health, metric: h}
      long: {type: javascript, value: 'output.length > 3'}
    prompts: ['{{ text }}']
    providers: [echo]
"""


def test_assertion_templates_are_shared_by_tests_and_default_test(write_suite) -> None:
    path = write_suite(
        TEMPLATES
        + """\
    defaultTest:
      assert: [{$ref: '#/assertionTemplates/long'}]
    tests:
      - vars: {text: Health}
        assert:
          - $ref: '#/assertionTemplates/health'
          - {$ref: '#/assertionTemplates/health', type: not-icontains, weight: 2}
    """
    )
    [case] = load_suite(path).cases
    kinds = [(a.type, a.value, a.weight, a.metric) for a in case.asserts]
    assert kinds == [
        ("javascript", "output.length > 3", 1.0, None),
        ("icontains", "health", 1.0, "h"),
        ("not-icontains", "health", 2.0, "h"),
    ]


def test_a_missing_target_is_a_load_error_at_the_ref(write_suite, suite_error) -> None:
    path = write_suite(
        TEMPLATES
        + """\
    tests:
      - vars: {text: a}
        assert:
          - $ref: '#/assertionTemplates/healthy'
    """
    )
    error = suite_error(path)
    assert error.message == (
        'Missing $ref pointer "#/assertionTemplates/healthy". Token "healthy" does not exist.'
    )
    assert (error.file, error.line) == (str(path), 9)
    assert error.fix and "assertionTemplates" in error.fix


def test_a_circular_reference_is_refused(write_suite, suite_error) -> None:
    path = write_suite(
        "a: {b: {$ref: '#/a'}}\nprompts: [x]\nproviders: [echo]\ntests: [{vars: {$ref: '#/a'}}]\n"
    )
    error = suite_error(path)
    assert "circular" in error.message
    assert error.line == 1


def test_url_refs_are_refused_and_file_refs_are_read(write_suite, suite_error) -> None:
    url = write_suite(TEMPLATES + "    tests: [{$ref: 'https://example.com/t.yaml'}]\n")
    assert "names a URL" in suite_error(url).message
    path = write_suite(
        TEMPLATES + "    tests: [{$ref: 'shared/tests.yaml#/0'}]\n",
        {"shared/tests.yaml": "- vars: {$ref: '#/1/vars'}\n- vars: {text: from file}\n"},
    )
    [case] = load_suite(path).cases
    assert case.vars == {"text": "from file"}


def test_provider_schemas_keep_their_refs(write_suite) -> None:
    path = write_suite(
        """\
    defs: {city: {type: string}}
    prompts: [x]
    providers:
      - id: echo
        config:
          functions:
            - name: f
              parameters: {$ref: '#/defs/city'}
          other: {$ref: '#/defs/city'}
    tests: [{vars: {}}]
    """
    )
    [provider] = load_suite(path).providers
    assert provider.config["functions"][0]["parameters"] == {"$ref": "#/defs/city"}
    assert provider.config["other"] == {"type": "string"}


def test_a_tests_file_resolves_its_own_refs(write_suite) -> None:
    path = write_suite(
        TEMPLATES + "    tests: file://tests.yaml\n",
        {
            "tests.yaml": """\
            - vars: {text: Health}
              assert: [{$ref: '#/1/assert/0'}]
            - vars: {text: x}
              assert: [{type: contains, value: x}]
            """
        },
    )
    first = load_suite(path).cases[0]
    assert [(a.type, a.value) for a in first.asserts] == [("contains", "x")]


@given(st.lists(st.text(alphabet=st.characters(exclude_characters="%"), max_size=8), max_size=5))
def test_pointer_tokens_undo_rfc6901_escaping(tokens: list[str]) -> None:
    pointer = "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)
    assert pointer_tokens(pointer) == tokens


def test_a_reference_bomb_is_refused_at_the_line_where_it_goes_over(
    write_suite, suite_error
) -> None:
    rows = ["a: [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
        f"{name}: [" + ", ".join(["{$ref: '#/" + below + "'}"] * 9) + "]"
        for below, name in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    path = write_suite(
        "\n".join(rows)
        + "\nprompts: [x]\nproviders: [echo]\ntests: [{vars: {big: {$ref: '#/i'}}}]\n"
    )
    error = suite_error(path)
    assert "more than 100,000 values" in error.message
    assert error.line == 6  # `f:`: b to e stand for 82,980 values, f's nine refs go over


@pytest.mark.slow
def test_a_template_shared_by_thousands_of_tests_stays_within_the_budget(write_suite) -> None:
    tests = "".join(
        f"      - {{vars: {{text: t{i}}}, assert: [{{$ref: '#/assertionTemplates/health'}}]}}\n"
        for i in range(5_000)
    )
    path = write_suite(TEMPLATES + "    tests:\n" + tests)
    cases = load_suite(path).cases
    assert len(cases) == 5_000
    assert {(a.type, a.value) for c in cases for a in c.asserts} == {("icontains", "health")}


def test_a_ref_key_spelled_with_escapes_is_resolved(write_suite) -> None:
    path = write_suite(
        TEMPLATES
        + """\
    tests:
      - vars: {text: Health}
        assert: [{"\\x24r\\x65f": '#/assertionTemplates/health'}]
      - vars: {text: Health}
        assert: [{"\\u0024ref": '#/assertionTemplates/long'}]
    """
    )
    first, second = load_suite(path).cases
    assert [a.type for a in first.asserts] == ["icontains"]
    assert [a.type for a in second.asserts] == ["javascript"]


def test_a_suite_whose_text_holds_no_ref_is_left_as_loaded(tmp_path: Path) -> None:
    from evals.suite.refs import dereference_suite

    plain = tmp_path / "plain.yaml"
    plain.write_text("tests: [{vars: {q: a}}]\n")
    raw = {"tests": [{"vars": {"q": "a"}, "big": {"$ref": "#/missing"}}]}
    assert dereference_suite(raw, plain) is raw  # the data is not looked at: no `$ref` written
    anchored = tmp_path / "anchored.yaml"  # `$` anchors and `\d` in regexes are no `$ref`
    anchored.write_text("tests: [{assert: [{type: regex, value: '^item \\d+$'}]}]\n")
    assert dereference_suite(raw, anchored) is raw
