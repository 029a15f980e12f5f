"""`evals compat-check`: config discovery, row pairing and the agreement count.

The end-to-end cases reuse goldens the real promptfoo CLI wrote for tests/compat, placed
where the tool keeps its goldens, so no promptfoo run is needed here.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.cli import main
from evals.common.jsvalues import js_stringify
from evals.compat.promptfoo_check import (
    error_line,
    find_configs,
    golden_path,
    harness_load,
    pair_rows,
)
from evals.compat.promptfoo_rows import canonical_value, row_differences

CONFIGS = Path(__file__).parent / "configs"


def _key(prompt: str, provider: str, variables: dict, repeat: int = 0) -> tuple:
    return (prompt, provider, json.dumps(variables, sort_keys=True), repeat)


def _staged(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A copy of a compat config with its golden stored where the tool looks for it."""
    directory = tmp_path / name
    shutil.copytree(CONFIGS / name, directory)
    config = directory / "promptfooconfig.yaml"
    goldens = tmp_path / "goldens"
    target = golden_path(config, goldens)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(directory / "golden.json", target)
    return config, goldens


def test_find_configs_keeps_promptfoo_configs_only(tmp_path):
    (tmp_path / "suite.yaml").write_text("prompts: [hi]\nproviders: [echo]\ntests: []\n")
    (tmp_path / "tests.yaml").write_text("- vars: {a: 1}\n")
    (tmp_path / "provider.yaml").write_text("id: echo\nlabel: x\n")
    (tmp_path / "broken.yaml").write_text("prompts: [\n")
    nested = tmp_path / "deeper"
    nested.mkdir()
    (nested / "c.json").write_text('{"prompts": ["x"], "targets": ["echo"], "scenarios": []}')
    found = find_configs([tmp_path])
    assert [p.name for p in found] == ["c.json", "suite.yaml"]
    assert find_configs([tmp_path / "broken.yaml"]) == [(tmp_path / "broken.yaml").resolve()]


def test_a_promptfoo_config_that_does_not_parse_is_still_compared(tmp_path):
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text("prompts: [hi\nproviders: [echo]\n")
    (folder / "notes.yaml").write_text("prompts: [\n")
    assert [p.name for p in find_configs([tmp_path])] == ["promptfooconfig.yaml"]


def test_redacted_vars_pair_with_the_real_values():
    expected = {_key("p", "echo", {"api_key": "[REDACTED]", "q": "a"}): "row"}
    actual = {_key("p", "echo", {"api_key": "secret", "q": "a"}): "ours"}
    pairs, notes = pair_rows(expected, actual)
    assert list(pairs.values()) == ["ours"]
    assert notes == []


def test_redaction_does_not_hide_a_different_value():
    expected = {_key("p", "echo", {"api_key": "[REDACTED]", "q": "a"}): "row"}
    actual = {_key("p", "echo", {"api_key": "secret", "q": "b"}): "ours"}
    pairs, notes = pair_rows(expected, actual)
    assert pairs == {}
    assert notes and notes[0].startswith("extra row")


def test_label_differences_pair_by_prompt_text_and_are_reported():
    expected = {
        _key("../p/a.txt: Hello {{ n }}", "echo", {"n": 1}): "a",
        _key("../p/b.txt: Bye {{ n }}", "echo", {"n": 1}): "b",
    }
    actual = {
        _key("/abs/p/b.txt: Bye {{ n }}", "echo", {"n": 1}): "ours-b",
        _key("/abs/p/a.txt: Hello {{ n }}", "echo", {"n": 1}): "ours-a",
    }
    pairs, notes = pair_rows(expected, actual)
    assert {k[0][:8]: v for k, v in pairs.items()} == {"../p/a.t": "ours-a", "../p/b.t": "ours-b"}
    assert len(notes) == 2 and all(n.startswith("row identity") for n in notes)


@pytest.mark.slow
@given(st.lists(st.tuples(st.sampled_from("pqr"), st.sampled_from("xy"), st.integers(0, 3))))
def test_identical_keys_always_pair_with_themselves(entries):
    rows = {_key(p, v, {"v": v}, r): (p, v, r) for p, v, r in entries}
    pairs, notes = pair_rows(rows, dict(rows))
    assert pairs == rows
    assert notes == []


def test_a_config_that_agrees_exits_zero(tmp_path, capsys):
    config, goldens = _staged(tmp_path, "prefix_suffix")
    assert main(["compat-check", str(config), "--goldens", str(goldens)]) == 0
    out = capsys.readouterr().out
    rows = len(json.loads((config.parent / "golden.json").read_text())["rows"])
    assert f"agreement: {rows}/{rows} rows (100.0 %)" in out


def test_a_difference_is_counted_and_listed(tmp_path, capsys):
    config, goldens = _staged(tmp_path, "echo_cost")
    stored = golden_path(config, goldens)
    golden = json.loads(stored.read_text())
    for row in golden["rows"]:  # a promptfoo that failed both rows
        row["success"], row["score"] = False, 0
        row["components"] = [{**c, "pass": False, "score": 0} for c in row["components"]]
    stored.write_text(json.dumps(golden))
    report = tmp_path / "report.json"
    args = ["compat-check", str(config), "--goldens", str(goldens), "--json", str(report)]
    args.append("--verbose")
    assert main(args) == 1
    data = json.loads(report.read_text())
    assert (data["rows"], data["agreeing"]) == (2, 0)
    assert "cost" in data["by_type"] and data["by_type"]["cost"] == {"differ": 2}
    assert "pass False != True" in capsys.readouterr().out


def test_a_missing_promptfoo_cli_is_an_input_error_when_a_golden_is_needed(tmp_path, capsys):
    config, _ = _staged(tmp_path, "prefix_suffix")
    missing = str(tmp_path / "no-promptfoo")
    args = ["compat-check", str(config), "--goldens", str(tmp_path / "empty"), "--promptfoo"]
    assert main([*args, missing]) == 2
    assert "promptfoo CLI" in capsys.readouterr().err


def _row(score, success=False, named=None):
    return {
        "success": success,
        "score": score,
        "namedScores": named or {},
        "components": [{"type": "javascript", "pass": success}],
        "failureReason": 0 if success else 1,
    }


def test_a_null_score_from_promptfoo_agrees_with_a_non_finite_one():
    """promptfoo's output file writes NaN and the infinities as null."""
    for ours in (float("nan"), float("inf"), float("-inf")):
        assert row_differences(_row(None), _row(ours)) == []
    assert row_differences(_row(None), _row(0.0)) == ["score None != 0.0"]
    assert row_differences(_row(0.5), _row(float("nan"))) == ["score 0.5 != nan"]


def test_a_null_named_score_agrees_with_nan_and_a_missing_one_differs():
    assert row_differences(_row(1.0, named={"m": None}), _row(1.0, named={"m": math.nan})) == []
    assert row_differences(_row(1.0, named={"m": 1.0}), _row(1.0)) == ["named score m: 1.0 != None"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
spaces = st.text(alphabet=" \t\n\r", max_size=3)


@given(value=json_values, before=spaces, after=spaces, indent=st.sampled_from([None, 1, 2]))
def test_a_var_holding_a_json_object_or_array_is_keyed_compactly(value, before, after, indent):
    """promptfoo's sanitizeForDb rewrites such a var (whitespace around it allowed) as its
    compact JSON.stringify; any other text stays as written."""
    text = before + json.dumps(value, indent=indent) + after
    expected = js_stringify(value) if isinstance(value, (dict, list)) else text
    assert canonical_value(text) == expected
    assert canonical_value({"v": [text]}) == {"v": [expected]}


def test_json_strings_inside_a_json_var_are_compacted_too_and_non_json_stays():
    assert canonical_value('{"n": 1.0, "s": "{ \\"b\\": [ 2 ] }"}') == '{"n":1,"s":"{\\"b\\":[2]}"}'
    for text in ('{"a": NaN}', "{'a': 1}", '{"a": 1,}', "null", " 1 ", '{"a": 1} {"b": 2}'):
        assert canonical_value(text) == text


def test_a_config_promptfoo_refuses_is_noted_with_its_error_and_the_harness_verdict(tmp_path):
    printed = (
        "Node.js 20 support in promptfoo ended July 30, 2026. Upgrade.\n"
        "file:///x/js-yaml.mjs:899\n\tthrow new YAMLException(message, mark);\n\n"
        "YAMLException: deficient indentation (2:1)\n\n 1 | prompts: [hi\n"
        "    at parseEvents (file:///x/js-yaml.mjs:2170:7)\nNode.js v20.20.2\n"
    )
    assert error_line(printed) == "YAMLException: deficient indentation (2:1)"
    assert error_line("no error named\nlast words\n") == "last words"
    broken = tmp_path / "promptfooconfig.yaml"
    broken.write_text("prompts: [hi\nproviders: [echo]\n")
    assert harness_load(broken, {}).startswith("evals refuses it too: ")
    assert "YAML" in harness_load(broken, {})
    fine = tmp_path / "fine.yaml"
    fine.write_text("prompts: [hi]\nproviders: [echo]\ntests: [{vars: {a: 1}}]\n")
    assert harness_load(fine, {}) == "evals loads it"
