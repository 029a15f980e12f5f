"""The public API of evals.kits: every name resolves lazily, and type checkers see the same
names as the running code."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import evals.kits

KITS = Path(evals.kits.__file__)


def _type_checking_names() -> set[str]:
    tree = ast.parse(KITS.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    )
    return {
        alias.asname or alias.name
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_type_checkers_see_exactly_the_public_names() -> None:
    assert _type_checking_names() == set(evals.kits.__all__)


@pytest.mark.parametrize("name", evals.kits.__all__)
def test_every_public_name_resolves(name: str) -> None:
    value = getattr(evals.kits, name)

    assert value is not None
    if inspect.isclass(value) or inspect.isfunction(value):
        assert value.__module__.startswith(("evals.kits.", "evals.vendors."))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'run_agent'"):
        _ = evals.kits.run_agent  # type: ignore[attr-defined]


def test_importing_the_kits_loads_no_sdk() -> None:
    code = (
        "import sys, evals.kits\n"
        "sdks = ('openai', 'anthropic', 'httpx2', 'pydantic')\n"
        "print(sorted(m for m in sdks if m in sys.modules))"
    )
    answer = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert answer.stdout.strip() == "[]"
