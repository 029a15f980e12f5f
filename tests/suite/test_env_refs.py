"""`{{ env.NAME }}` in a config is replaced at load, as promptfoo does; the rest is untouched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.suite import load_suite
from evals.suite.vars import render_env_refs
from evals.suite.yaml_lines import line_of, parse_yaml_text
from evals.tracing.redact import MIN_SECRET_LENGTH

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


@pytest.mark.slow
@given(json_values)
def test_a_config_without_references_comes_back_as_the_same_object(value: object) -> None:
    rendered = render_env_refs(value, ENV)

    assert rendered == value
    if "{{" not in repr(value):
        assert rendered is value


def _plain_rebuild(value: object) -> object:
    """Every string's references replaced, every container rebuilt (no shortcut)."""
    if isinstance(value, str):
        return re.sub(r"\{\{\s*env\.(\w+)\s*\}\}", lambda m: ENV.get(m[1], m[0]), value)
    if isinstance(value, list):
        return [_plain_rebuild(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain_rebuild(item) for key, item in value.items()}
    return value


referencing_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(["{{ env.MODEL }}", "at {{env.HOST}}/x", "{{ env.NOPE }}", "env.MODEL"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@pytest.mark.slow
@given(referencing_values)
def test_references_are_replaced_as_a_plain_rebuild_replaces_them(value: object) -> None:
    rendered = render_env_refs(value, ENV)

    assert rendered == _plain_rebuild(value)
    if isinstance(value, (dict, list)) and rendered is not value:
        assert type(rendered) is type(value)
    assert value == _plain_rebuild(value) or rendered is not value


def test_a_short_secret_read_by_a_prompt_file_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`{{ env.X }}` in a prompt file counts as a reference, as it does in the suite file:
    a short secret (under the length from which unreferenced values are masked) is masked."""
    short = "Zq9k#w"
    assert len(short) < MIN_SECRET_LENGTH
    monkeypatch.setenv("SERVICE_PASSWORD", short)
    (tmp_path / "prompt.txt").write_text("pin {{ env.SERVICE_PASSWORD }}: {{q}}", encoding="utf-8")
    inline = tmp_path / "inline.yaml"
    inline.write_text(
        "prompts: ['pin {{ env.SERVICE_PASSWORD }}: {{q}}']\nproviders: [echo]\n"
        "tests: [{vars: {q: hi}}]\n",
        encoding="utf-8",
    )
    from_file = tmp_path / "from_file.yaml"
    from_file.write_text(
        "prompts: ['file://prompt.txt']\nproviders: [echo]\ntests: [{vars: {q: hi}}]\n",
        encoding="utf-8",
    )
    unreferenced = tmp_path / "unreferenced.yaml"
    unreferenced.write_text(
        "prompts: ['{{q}}']\nproviders: [echo]\ntests: [{vars: {q: hi}}]\n", encoding="utf-8"
    )

    assert short in load_suite(inline).secrets
    assert short in load_suite(from_file).secrets
    assert short not in load_suite(unreferenced).secrets
