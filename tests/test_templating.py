"""Prompt templating: the placeholder fast path renders exactly what Jinja renders."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evals.common.templating import _compile, render

_names = st.sampled_from(["a", "b", "question", "x_1"])
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    st.lists(st.one_of(st.integers(0, 3), st.text(max_size=3), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_literal = st.text(alphabet=st.characters(blacklist_characters="{}\r"), max_size=12)
_placeholder = st.builds(
    lambda n, pad: "{{" + " " * pad + n + " " * pad + "}}", _names, st.integers(0, 2)
)
_templates = st.lists(st.one_of(_literal, _placeholder), min_size=1, max_size=6).map("".join)


@given(_templates, st.dictionaries(_names, _values))
def test_placeholder_templates_render_as_jinja_does(template, variables):
    assert render(template, variables) == _compile(template).render(**variables)


def test_templates_with_filters_and_tags_still_use_jinja():
    assert render("{{ a | upper }}", {"a": "x"}) == "X"
    assert render("{% if a %}yes{% endif %}", {"a": 1}) == "yes"
    assert render("{{ missing }}!", {}) == "!"
