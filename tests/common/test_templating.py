"""Prompt templating: Nunjucks semantics, and a Python fast path that renders the same."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.common import jsengine
from evals.common.jsvalues import js_string
from evals.common.templating import TemplateError, check_template, placeholders, render

NODE = shutil.which("node")

_names = st.sampled_from(["a", "b", "question", "x_1"])
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.one_of(st.integers(0, 3), st.text(max_size=3), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_literal = st.text(alphabet=st.characters(blacklist_characters="{}\r"), max_size=12)
_placeholder = st.builds(
    lambda n, pad: "{{" + " " * pad + n + " " * pad + "}}", _names, st.integers(0, 2)
)
_templates = st.lists(st.one_of(_literal, _placeholder), min_size=1, max_size=6).map("".join)


def _nunjucks(template: str, variables: dict) -> str:
    return jsengine.call("render", template, variables, None, False)


@pytest.mark.slow
@settings(max_examples=300)
@given(_templates, st.dictionaries(_names, _values))
def test_placeholder_templates_render_as_nunjucks_does(template, variables):
    assert placeholders(template) is not None
    assert render(template, variables) == _nunjucks(template, variables)


# Doubles whose digits need care: ties QuickJS-ng writes with 17 significant digits where
# Node writes 16, and large integers written in full.
NODE_DIGITS = [
    (2.0**-24, "5.960464477539063e-8"),
    (-(2.0**-24), "-5.960464477539063e-8"),
    (7.120236347223045e-307, "7.120236347223045e-307"),
    (8.473148957215937e18, "8473148957215937000"),
    (-6.922449102327895e20, "-692244910232789500000"),
]


@pytest.mark.parametrize(("number", "written"), NODE_DIGITS)
def test_nunjucks_prints_numbers_with_nodes_digits(number, written):
    assert _nunjucks("{{ n }}", {"n": number}) == written
    assert _nunjucks("{{ n | abs if false else n }}", {"n": number}) == written
    assert js_string(number) == written  # the fast path's Number::toString agrees


def _random_doubles(count: int, seed: int) -> list[float]:
    chosen = random.Random(seed)
    doubles = [2.0**k for k in range(-1074, 1024)] + [10.0**k for k in range(-323, 309)]
    while len(doubles) < count:
        (value,) = struct.unpack("d", struct.pack("Q", chosen.getrandbits(64)))
        if value == value and abs(value) != float("inf"):
            doubles.append(value)
    return doubles


@pytest.mark.slow
@pytest.mark.skipif(NODE is None, reason="needs node")
def test_nunjucks_prints_every_double_as_node_does():
    """Every power of two and ten, and random bit patterns, against Node's String()."""
    assert NODE is not None
    doubles = _random_doubles(30_000, seed=20261202)
    script = (
        "const v = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(v.map(String)));"
    )
    answer = subprocess.run(
        [NODE, "-e", script], input=json.dumps(doubles), capture_output=True, text=True, check=True
    )
    rendered = jsengine.call(
        "render", "{% for n in ns %}{{ n }}\n{% endfor %}", {"ns": doubles}, None, False
    )
    assert rendered.split("\n")[:-1] == json.loads(answer.stdout)


# Cases promptfoo's Nunjucks renders differently from Jinja2 (recorded with node and
# nunjucks 3.2.4: tests/compat/configs/nunjucks_js_semantics has the CLI's own goldens).
NUNJUCKS_CASES = [
    ("{{ 2.5 | round }}", {}, "3"),
    ("{{ -7 % 3 }}", {}, "-1"),
    ("{{ q | escape }}", {"q": '"x"'}, "&quot;x&quot;"),
    ('{{ "ab" * 2 }}', {}, "NaN"),
    ('{{ 1 + "2" }}', {}, "12"),
    ("{{ 1 / 0 }}", {}, "Infinity"),
    ("{% if [] %}T{% else %}F{% endif %}", {}, "T"),
    ("{% if {} %}T{% else %}F{% endif %}", {}, "T"),
    ('{% if 1 == "1" %}T{% else %}F{% endif %}', {}, "T"),
    ("{{ obj | dump }}", {"obj": {"a": 1, "b": [1, 2]}}, '{"a":1,"b":[1,2]}'),
    ("{{ xs }}", {"xs": [1, None, [2, 3]]}, "1,,2,3"),
    ("{{ n }}", {"n": 1.0}, "1"),
    ("{{ n }}", {"n": 1e21}, "1e+21"),
    ("{{ o }}", {"o": {"a": 1}}, "[object Object]"),
    ("{{ missing }}|{{ missing.deeper }}", {}, "|"),
    ('{{ "a,b" | load }}', {}, ""),
]


@pytest.mark.parametrize(("template", "variables", "expected"), NUNJUCKS_CASES[:-1])
def test_templates_render_with_nunjucks_semantics(template, variables, expected):
    assert render(template, variables) == expected


def test_a_template_that_fails_to_render_is_a_template_error():
    with pytest.raises(TemplateError, match="Template render error"):
        render('{{ "not json" | load }}', {})
    with pytest.raises(TemplateError, match="filter not found"):
        render("{{ x | nosuchfilter }}", {"x": 1})


def test_a_syntax_error_names_its_line():
    with pytest.raises(TemplateError) as info:
        check_template("line one\n{% if %}\n")
    assert info.value.line == 2


def test_env_is_seen_only_when_passed():
    assert render("{{ env.HOME }}", {}, {"HOME": "/home/x"}) == "/home/x"
    assert render("{{ env.HOME }}", {}) == ""
    assert render("{{ env }}", {"env": "a var"}, {"HOME": "/home/x"}) == "a var"


def test_templates_cannot_include_files(tmp_path: Path):
    (tmp_path / "secret.txt").write_text("secret")
    with pytest.raises(TemplateError):
        render("{% include '" + str(tmp_path / "secret.txt") + "' %}", {})


def test_json_crosses_the_engine_unchanged():
    value = {"text": 'é \u2028 "q" \\ {{ }}', "n": [1, 2.5, None, True]}
    assert json.loads(render("{{ v | dump }}", {"v": value})) == value


def test_long_renders_built_by_concatenation_cross_back():
    text = render("{% for i in range(300) %}x{{ i }}{% endfor %}{{ tail }}", {"tail": "!"})
    assert text == "".join(f"x{i}" for i in range(300)) + "!"
    assert render("{{ a ~ b }}", {"a": "p" * 500, "b": "q" * 500}) == "p" * 500 + "q" * 500
