"""The public API: what users import from `evals` and its facades (`evals.kits`,
`evals.store`, `evals.testing`, `evals.reports`). Each facade's names are listed once, in
its `__init__.pyi`: type checkers read the stub, the running code loads each name from it
on first use, and `__all__` is exactly those names."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

FACADES = ["evals", "evals.kits", "evals.store", "evals.testing", "evals.reports"]
HOMES = {"evals.kits": ("evals.kits.", "evals.vendors.")}


def _stub_names(module: ModuleType) -> set[str]:
    """The names the facade's stub declares: imports and annotated constants."""
    stub = Path(str(module.__file__)).with_suffix(".pyi")
    names = set()
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@pytest.mark.parametrize("facade", FACADES)
def test_all_is_exactly_the_names_type_checkers_see(facade: str) -> None:
    module = importlib.import_module(facade)

    assert set(module.__all__) == _stub_names(module)
    assert sorted(module.__all__) == list(module.__all__)
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize(
    ("facade", "name"),
    [(f, n) for f in FACADES for n in importlib.import_module(f).__all__],
)
def test_every_public_name_resolves_to_the_facade_s_own_package(facade: str, name: str) -> None:
    value = getattr(importlib.import_module(facade), name)

    assert value is not None
    if inspect.isclass(value) or inspect.isfunction(value):
        assert value.__module__.startswith(HOMES.get(facade, (f"{facade}.",)))


@pytest.mark.parametrize("facade", FACADES)
def test_an_unknown_name_is_an_attribute_error(facade: str) -> None:
    with pytest.raises(AttributeError, match="has no attribute 'run_agent'"):
        _ = importlib.import_module(facade).run_agent


def _loaded_after(code: str) -> list[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    answer = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert answer.returncode == 0, answer.stderr
    return answer.stdout.split()


def test_importing_evals_loads_none_of_its_modules_but_the_stub_reader() -> None:
    loaded = _loaded_after("import evals")

    assert [m for m in loaded if m.startswith("evals.")] == ["evals.common", "evals.common.stubs"]


def test_importing_the_kits_loads_no_sdk() -> None:
    loaded = _loaded_after("import evals.kits")

    assert {"openai", "anthropic", "httpx2", "pydantic"}.isdisjoint(loaded)


def test_the_docs_list_exactly_the_public_names_of_evals() -> None:
    import evals

    docs = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
    section = docs.read_text(encoding="utf-8").split("## The public API", 1)[1]
    listed = section.split("\nThe facades", 1)[0]
    names = set(re.findall(r"`(\w+)`", listed)) - {"evals", "_"}

    assert names == set(evals.__all__) - {"__version__"}


def test_the_statistics_facade_names_each_function_where_it_lives() -> None:
    """`evals.stats` stays below `evals.common`, so it keeps its own lazy map: the names
    type checkers see, `__all__` and the map agree, module by module."""
    import evals.stats

    tree = ast.parse(Path(str(evals.stats.__file__)).read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n)
    )
    seen = {
        alias.asname or alias.name: str(node.module).removeprefix("evals.stats.")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }

    assert seen == evals.stats._MODULES
    assert sorted(evals.stats.__all__) == sorted(seen)
