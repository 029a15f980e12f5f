"""A package's public names listed once, in its `__init__.pyi`, and loaded on first use.

A facade (`evals`, `evals.kits`, `evals.store`, `evals.testing`, `evals.reports`) writes
its names as `from .module import Name as Name` lines of its stub: type checkers and
editors read the stub, and `public_names` gives the package the module `__getattr__` and
`__dir__` (PEP 562) that import each name's module when the name is first used, so
importing the package imports none of its modules. This is what scientific Python's
`lazy_loader.attach_stub` does; it lives here so the harness needs no package for it.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _origins(package: str, stub: Path) -> dict[str, tuple[str, str]]:
    """Each name the stub imports: the module it comes from and its name there."""
    origins = {}
    for node in ast.parse(stub.read_text(encoding="utf-8"), str(stub)).body:
        if isinstance(node, ast.ImportFrom):
            if node.level != 1 or not node.module:
                raise ValueError(f"{stub}: write `from .module import Name as Name` lines")
            for alias in node.names:
                origins[alias.asname or alias.name] = (f"{package}.{node.module}", alias.name)
    return origins


def public_names(
    package: str, init_file: str, *eager: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The `__getattr__`, `__dir__` and `__all__` of `package` (its `__name__` and
    `__file__`): the names its `__init__.pyi` imports, loaded on first use, and the
    `eager` names the package defines itself."""
    origins = _origins(package, Path(init_file).with_suffix(".pyi"))
    names = sorted({*origins, *eager})

    def __getattr__(name: str) -> Any:
        if name not in origins:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = origins[name]
        value = getattr(importlib.import_module(module), attribute)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__, names
