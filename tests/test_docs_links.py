"""Every relative link of the README and docs/ leads somewhere: the file exists, and a
`#fragment` names one of its headings (as GitHub makes their anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE = re.compile(r"`[^`\n]+`")  # an inline code span: its brackets are no link


def anchors(page: Path) -> set[str]:
    """The anchors of `page`: those GitHub gives its headings (lower case, punctuation but
    `-` and `_` dropped, spaces as `-`; a repeated heading gets `-1`, `-2`, ...) and its
    `<a id="...">` anchors."""
    found: set[str] = set()
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        plain = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
        slug = re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")
        name, n = slug, 0
        while name in found:
            n += 1
            name = f"{slug}-{n}"
        found.add(name)
    return found | set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", text))


def links(page: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_lead_to_a_file_and_a_heading(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        missing = not file.exists()
        if missing or (fragment and file.suffix == ".md" and fragment not in anchors(file)):
            broken.append(target)
    assert not broken, broken
