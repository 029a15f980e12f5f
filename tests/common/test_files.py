"""`file://` references and the one loader of user Python."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.common.files import (
    default_label,
    is_file_ref,
    is_python_ref,
    load_function,
    load_module,
    ref_body,
    resolve_ref,
    split_ref,
)
from evals.model.errors import SuiteError

NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
PATH = st.lists(NAME, min_size=1, max_size=3).map("/".join)


@pytest.mark.slow
@given(PATH, NAME, st.sampled_from(["file://", "python:", ""]))
def test_a_function_reference_splits_after_py(path: str, function: str, prefix: str) -> None:
    assert split_ref(f"{prefix}{path}.py:{function}") == (f"{path}.py", function)
    assert split_ref(f"{prefix}{path}.py") == (f"{path}.py", None)


@pytest.mark.slow
@given(PATH, NAME, st.sampled_from([".py", ".json", ".yaml", ".txt"]))
def test_a_reference_names_its_file_next_to_the_suite(
    path: str, function: str, suffix: str
) -> None:
    ref = f"file://{path}{suffix}"
    named = f"{ref}:{function}" if suffix == ".py" else ref
    root = Path("/suites/demo")

    assert is_file_ref(named) and not is_file_ref(named[len("file://") :])
    assert ref_body(named) == named[len("file://") :]
    assert is_python_ref(named) == (suffix == ".py")
    assert resolve_ref(named, root) == root / f"{path}{suffix}"


def test_only_strings_with_the_prefix_are_references() -> None:
    assert not is_file_ref(None) and not is_file_ref(["file://x"]) and not is_file_ref("files://x")
    assert not is_python_ref("file://module.pyc") and is_python_ref("python:agent.py:call")


def test_a_data_file_reference_has_no_function() -> None:
    assert split_ref("file://data/cases.json") == ("data/cases.json", None)
    assert split_ref("file://C:/x.yaml") == ("C:/x.yaml", None)


def test_a_file_is_imported_once_per_version(tmp_path: Path) -> None:
    path = tmp_path / "user.py"
    path.write_text("class Box:\n    @staticmethod\n    def size():\n        return 1\n")

    first = load_function(path, "Box.size", "check")
    assert first() == 1
    assert load_module(path) is load_module(path)

    path.write_text("class Box:\n    @staticmethod\n    def size():\n        return 2\n")
    later = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(later, later))
    assert load_function(path, "Box.size", "check")() == 2


def test_what_is_missing_is_named_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "agent.py"
    with pytest.raises(SuiteError, match="the provider file does not exist") as missing:
        load_function(path, "call_api", "provider")
    assert missing.value.file == str(path)

    path.write_text("x = 1\n")
    with pytest.raises(SuiteError, match=r"has no function call_api\(\)") as absent:
        load_function(path, "call_api", "provider", "prompt, options, context")
    assert "call_api(prompt, options, context)" in (absent.value.fix or "")

    path.write_text("import not_a_module_anywhere\n")
    later = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(later, later))
    with pytest.raises(SuiteError, match="importing the provider failed: ModuleNotFoundError"):
        load_function(path, "call_api", "provider")


def test_python_providers_are_named_as_promptfoo_names_them():
    # the column names a report and the dashboard show for unlabeled Python providers
    assert [
        default_label(pid)
        for pid in ("python:agent.py", "python:agent.py:other", "file://agent.py", "echo")
    ] == ["python:agent.py:default", "python:agent.py:other", "python:agent.py:default", "echo"]
