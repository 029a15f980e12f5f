"""Prompt files by extension, and the legacy prompts mapping, as promptfoo reads them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from evals.common.jsvalues import utf16_units
from evals.suite import load_suite
from evals.suite.prompts import js_prefix, prompts_from_file

SUITE = """\
    prompts: {prompts}
    providers: [echo]
    tests:
      - vars: {{name: Ann}}
"""


def test_markdown_and_jinja_files_are_one_untrimmed_prompt(tmp_path: Path) -> None:
    for name in ("p.md", "p.j2"):
        text = "  Intro {{ name }}\n\n---\n\nMore.\n\n"
        (tmp_path / name).write_text(text, encoding="utf-8")
        [prompt] = prompts_from_file(tmp_path / name, name, None)
        assert prompt.raw == text
        assert prompt.label == f"{name}: {text[:50]}..."
        [labelled] = prompts_from_file(tmp_path / name, name, "mine")
        assert labelled.label == "mine"


def test_a_text_file_is_still_split_and_trimmed(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text(" A \n---\n B \n", encoding="utf-8")
    prompts = prompts_from_file(tmp_path / "p.txt", "p.txt", "x")
    assert [(p.raw, p.label) for p in prompts] == [("A", "x: p.txt: A"), ("B", "x: p.txt: B")]


@given(st.text(max_size=80), st.integers(min_value=0, max_value=60))
def test_js_prefix_keeps_that_many_utf16_units(text: str, units: int) -> None:
    prefix = js_prefix(text, units)
    assert utf16_units(prefix) == utf16_units(text)[:units]


def test_the_legacy_mapping_labels_each_prompt(write_suite) -> None:
    path = write_suite(
        SUITE.format(prompts="{file://p.txt: greet, 'Hi {{ name }}': inline, file://p.md: md}"),
        {"p.txt": "Hello {{ name }}\n---\nBye {{ name }}\n", "p.md": "# {{ name }}\n"},
    )
    suite = load_suite(path)
    assert [(p.label, p.raw) for p in suite.prompts] == [
        ("greet: p.txt: Hello {{ name }}", "Hello {{ name }}"),
        ("greet: p.txt: Bye {{ name }}", "Bye {{ name }}"),
        ("inline", "Hi {{ name }}"),
        ("md", "# {{ name }}\n"),
    ]


def test_a_missing_file_in_the_mapping_names_its_line(write_suite, suite_error) -> None:
    path = write_suite("prompts:\n  file://a.txt: a\n  file://gone.txt: b\nproviders: [echo]\n")
    (path.parent / "a.txt").write_text("A", encoding="utf-8")
    error = suite_error(path)
    assert "gone.txt" in error.message
    assert error.line == 3
