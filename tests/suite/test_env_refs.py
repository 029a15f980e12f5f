"""`{{ env.NAME }}` in a config is replaced at load, as promptfoo does; the rest is untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evals.suite.vars import render_env_refs
from evals.suite.yaml_lines import line_of, parse_yaml_text

ENV = {"MODEL": "gpt-x", "HOST": "example.org"}


def test_references_are_replaced_and_unknown_names_kept() -> None:
    config = parse_yaml_text(
        "providers:\n"
        "  - id: 'openai:{{ env.MODEL }}'\n"
        "    config: {url: 'https://{{env.HOST}}/v1', key: '{{ env.MISSING }}'}\n"
        "tests:\n"
        "  - vars: {q: plain}\n"
    )

    rendered = render_env_refs(config, ENV)

    provider = rendered["providers"][0]
    assert provider["id"] == "openai:gpt-x"
    assert provider["config"] == {"url": "https://example.org/v1", "key": "{{ env.MISSING }}"}
    assert line_of(provider, "config") == 3
    assert rendered["tests"] is config["tests"]  # untouched parts are not copied


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet="abc{} .env"),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@given(json_values)
def test_a_config_without_references_comes_back_as_the_same_object(value: object) -> None:
    rendered = render_env_refs(value, ENV)

    assert rendered == value
    if "{{" not in repr(value):
        assert rendered is value
