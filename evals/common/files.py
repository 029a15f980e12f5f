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

import importlib.machinery
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


_CODE_FILE = re.compile(r"^(.*?\.(?:py|js|cjs|mjs|ts|cts|mts|rb)):([^/\\]+)$")


def is_file_ref(value: object) -> TypeGuard[str]:
    """True for a string that is a `file://` reference."""
    return isinstance(value, str) and value.startswith(FILE_PREFIX)


def ref_body(ref: str) -> str:
    """The reference without its `file://` prefix (a function part, if any, is kept)."""
    return ref.removeprefix(FILE_PREFIX)


def split_ref(ref: str) -> tuple[str, str | None]:
    """(path, function) of `file://path.py:function`; function None when not named.

    The `file://` (or `python:`) prefix is optional, and a colon names a function only
    after a code file (`.py`, `.js`, `.cjs`, `.mjs`, `.ts`, `.cts`, `.mts`, `.rb`), so
    `file://data.json` is a plain path.
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


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles a user's file from its source on every import.

    A bytecode cache is valid for a source of the same size and the same whole second, so
    a file edited twice within a second would run its older version; and a suite's folder
    (shipped to workers, checked by digest) stays free of `__pycache__` folders.
    """

    def get_code(self, fullname: str) -> Any:
        """The code object of the file's current source."""
        return self.source_to_code(self.get_data(self.path), self.path)


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
    spec = importlib.util.spec_from_file_location(name, path, loader=_SourceLoader(name, str(path)))
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


_UTF_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
SAVE_AS_UTF8 = "save the file as UTF-8 (in most editors: Save As, encoding UTF-8)"


def read_text(path: Path, what: str = "the file", *, keep_line_endings: bool = False) -> str:
    """The text of a file the suite reads (the suite, datasets, prompts, var files).

    Files are UTF-8; a leading byte-order mark is dropped and line endings read as
    `\n` (as `Path.read_text` reads them), unless `keep_line_endings`: files promptfoo
    reads as written (Markdown and Jinja2 prompts, CSV files, whose quoted cells keep a
    Windows `\r\n`) keep theirs. Anything else is a SuiteError
    naming the file, the line and byte of the first bad byte, and the fix, so no reader
    of user files ever shows a UnicodeDecodeError. `what` names the file in messages.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SuiteError(
            f"{what} does not exist", file=str(path), fix="check the path (relative to the suite)"
        ) from None
    except IsADirectoryError:
        raise SuiteError(
            f"{what} is a directory", file=str(path), fix="name a file, not a directory"
        ) from None
    except OSError as exc:
        raise SuiteError(
            f"{what} cannot be read: {exc.strerror or exc}",
            file=str(path),
            fix="check the file's permissions",
        ) from None
    for bom, encoding in _UTF_BOMS:
        if data.startswith(bom):
            raise SuiteError(
                f"{what} is {encoding} text, not UTF-8", file=str(path), fix=SAVE_AS_UTF8
            )
    if len(data) >= 2 and (data[0] == 0) != (data[1] == 0):
        raise SuiteError(
            f"{what} looks like UTF-16 text (NUL bytes between its letters), not UTF-8",
            file=str(path),
            fix=SAVE_AS_UTF8,
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise SuiteError(
            f"{what} is not valid UTF-8: byte 0x{data[start]:02x} at line {line}, "
            f"column {column} (byte offset {start}); it looks like another encoding "
            "(Latin-1, Windows-1252, UTF-16) or a binary file",
            file=str(path),
            line=line,
            fix=SAVE_AS_UTF8,
        ) from None
    if "\r" in text and not keep_line_endings:  # universal newlines, as Path.read_text reads them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def default_label(provider_id: str) -> str:
    """A provider's name without a label: promptfoo names a Python file provider
    `python:<path>:<function>` (`default` when the id names no function), whether written
    `file://x.py` or `python:x.py`."""
    if provider_id.startswith(("file://", "python:")):
        path, function = split_ref(provider_id)
        if path.endswith(".py"):
            return f"python:{path}:{function or 'default'}"
    return provider_id
