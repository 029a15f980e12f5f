"""A package's public names listed once, in its `__init__.pyi`, and loaded on first use.

A facade (`evals`, `evals.kits`, `evals.store`, `evals.testing`, `evals.reports`) writes
its names as `from .module import Name as Name` lines of its stub: type checkers and
editors read the stub, and `public_names` gives the package the module `__getattr__` and
`__dir__` (PEP 562) that import each name's module when the name is first used. The stub
itself is read at the first such use (or when `__all__` is asked for), so importing the
package reads no file and imports no module. This is what scientific Python's
`lazy_loader.attach_stub` does; it lives here so the harness needs no package for it.
"""

from __future__ import annotations

import importlib
import os
import sys

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _origins(package: str, stub: str) -> dict[str, tuple[str, str]]:
    """Each name the stub imports: the module it comes from and its name there."""
    import ast

    with open(stub, encoding="utf-8") as file:
        tree = ast.parse(file.read(), stub)
    origins = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level != 1 or not node.module:
                raise ValueError(f"{stub}: write `from .module import Name as Name` lines")
            for alias in node.names:
                origins[alias.asname or alias.name] = (f"{package}.{node.module}", alias.name)
    return origins


def public_names(
    package: str, init_file: str, *eager: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package` (its `__name__` and `__file__`): the
    names its `__init__.pyi` imports, each loaded on first use, and `__all__`: those names
    and the `eager` ones the package defines itself, sorted."""
    stub = os.path.splitext(init_file)[0] + ".pyi"
    read: dict[str, tuple[str, str]] = {}

    def origins() -> dict[str, tuple[str, str]]:
        if not read:
            read.update(_origins(package, stub))
        return read

    def __dir__() -> list[str]:
        return sorted({*origins(), *eager})

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = __dir__()
        elif name in origins():
            module, attribute = origins()[name]
            value = getattr(importlib.import_module(module), attribute)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__, __dir__
