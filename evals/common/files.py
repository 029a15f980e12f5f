"""`file://` references and the Python files they name: the one place that reads them.

A suite names a file as `file://path` and a Python function as `file://path.py:function`
(providers also as `python:path.py:function`). `is_file_ref` recognises a reference,
`ref_body` drops its prefix, `split_ref` takes it apart into path and function,
`is_python_ref` says whether it names Python code and `resolve_ref` finds the file next to
the suite. `load_function` imports the file and returns the function: every part of the
harness that runs user Python (providers, transforms, vars, test generators, Nunjucks
filters, Python assertions, scoring functions) loads it here, so a file is imported once
per version and its folder is importable from it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeGuard

from evals.common.interrupts import watch_sigint
from evals.model.errors import SuiteError

FILE_PREFIX = "file://"
_PREFIXES = (FILE_PREFIX, "python:")
_MODULES: dict[tuple[Path, int], ModuleType] = {}


_CODE_FILE = re.compile(r"^(.*?\.(?:py|js|cjs|mjs|rb)):([^/\\]+)$")


def is_file_ref(value: object) -> TypeGuard[str]:
    """True for a string that is a `file://` reference."""
    return isinstance(value, str) and value.startswith(FILE_PREFIX)


def ref_body(ref: str) -> str:
    """The reference without its `file://` prefix (a function part, if any, is kept)."""
    return ref.removeprefix(FILE_PREFIX)


def split_ref(ref: str) -> tuple[str, str | None]:
    """(path, function) of `file://path.py:function`; function None when not named.

    The `file://` (or `python:`) prefix is optional, and a colon names a function only
    after a code file (`.py`, `.js`, `.cjs`, `.mjs`, `.rb`), so `file://data.json` is a
    plain path.
    """
    body = ref
    for prefix in _PREFIXES:
        if body.startswith(prefix):
            body = body[len(prefix) :]
            break
    found = _CODE_FILE.match(body)
    if found:
        return found.group(1), found.group(2)
    return body, None


def is_python_ref(ref: str) -> bool:
    """True when a reference names a Python file (`x.py` or `x.py:function`)."""
    return split_ref(ref)[0].endswith(".py")


def resolve_ref(ref: str, root: Path) -> Path:
    """The absolute path of the file a reference names, relative to `root` (the suite's
    folder); a function part is dropped."""
    return (root / split_ref(ref)[0]).resolve()


def load_module(path: Path) -> ModuleType:
    """Import a Python file, with its folder importable; again only when the file changed.

    Raises what importing raises (the callers say which file it was and what it is for).
    """
    path = path.resolve()
    key = (path, path.stat().st_mtime_ns)
    module = _MODULES.get(key)
    if module is not None:
        return module
    name = f"evals_user_{abs(hash(str(path)))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _MODULES[key] = module
    return module


def load_function(path: Path, name: str, what: str, arguments: str = "") -> Callable[..., Any]:
    """The callable `name` (dotted for an attribute of an object) of a Python file.

    `what` says what the function is for (`provider`, `transformVars`, ...) and
    `arguments` what it is called with, for the fix; a missing file, an import that fails
    (whatever it raises, `SystemExit` and `KeyboardInterrupt` included) or a missing
    function is a SuiteError naming the file.
    """
    if not path.is_file():
        raise SuiteError(f"the {what} file does not exist", file=str(path))
    try:
        with watch_sigint() as sigint:
            target: Any = load_module(path)
    except BaseException as exc:  # SystemExit or KeyboardInterrupt at import: the file's fault
        if sigint.received:  # Ctrl-C of the harness while importing: an interruption
            raise
        raise SuiteError(
            f"importing the {what} failed: {type(exc).__name__}: {exc}",
            file=str(path),
            fix="run `python " + str(path) + "` to see the full error",
        ) from None
    for part in name.split("."):
        target = getattr(target, part, None)
    if not callable(target):
        raise SuiteError(
            f"the {what} has no function {name}()",
            file=str(path),
            fix=f"define {name}({arguments}) in the file, or name another function after ':'",
        )
    return target
