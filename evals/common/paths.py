"""Paths a suite or a dataset names: resolved, contained, and globbed without loops.

A dataset is data, so every file it makes the harness read (a `file://` var, a `$ref`, a
glob's matches) must resolve, symbolic links followed, inside the folders the suite
allows (its own folder and the dataset's); `resolve` turns a loop of symbolic links into
an error a loader can report, and `glob_paths` walks `**` without following symbolic
links to folders (as node-glob, and so promptfoo, walks it), so a link to a parent folder
cannot make a walk endless.
"""

from __future__ import annotations

import errno
import glob
from collections.abc import Iterable
from pathlib import Path


class LinkLoop(OSError):
    """A path whose symbolic links point at each other: it names no file."""


def resolve(path: Path) -> Path:
    """`path` made absolute with every symbolic link followed; LinkLoop for a loop."""
    try:
        return path.resolve()
    except RuntimeError:  # Python before 3.13 reports a loop this way
        raise LinkLoop(errno.ELOOP, "a loop of symbolic links", str(path)) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkLoop(errno.ELOOP, "a loop of symbolic links", str(path)) from None
        raise


def inside(path: Path, folders: Iterable[Path]) -> bool:
    """Whether a resolved `path` is one of `folders` (resolved) or lies beneath one."""
    return any(path == folder or folder in path.parents for folder in folders)


def glob_base(pattern: str, root: Path) -> Path:
    """The folder a glob starts from: its parts before the first one with a wildcard,
    relative to `root` (an absolute pattern starts from its own anchor)."""
    base = root
    for part in Path(pattern).parts:
        if glob.has_magic(part):
            break
        base = base / part
    return base


def glob_paths(pattern: str, root: Path) -> list[Path]:
    """The files and folders a glob names (relative to `root` unless absolute), sorted.

    As `glob.glob` matches, `*` and `**` never match a name starting with a dot unless
    the pattern spells that name; unlike it, `**` does not descend into symbolic links
    to folders.
    """
    path = Path(pattern)
    base, relative = root, path
    if path.is_absolute():
        base, relative = Path(path.anchor), path.relative_to(path.anchor)
    spelled = {part for part in relative.parts if part.startswith(".")}
    matches = []
    for match in base.glob(str(relative)):
        parts = match.relative_to(base).parts
        if all(not part.startswith(".") or part in spelled for part in parts):
            matches.append(match)
    return sorted(matches)
