"""XML checks: `is-xml` and `contains-xml`, graded as promptfoo 0.121 does.

`is-xml` requires the whole output to be a well-formed XML document (a strict parser, as
promptfoo's saxes); `contains-xml` looks for balanced tag runs inside the text. Required
elements are dotted paths (`root.item.0.name`) into the element tree as promptfoo's
fast-xml-parser builds it: elements by name, repeated elements as lists, attributes as `@_x`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from xml.parsers import expat

from evals.common.jsvalues import js_string
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import outcome
from evals.graders.output import output_string
from evals.graders.registry import register
from evals.graders.values import assertion_value
from evals.model.results import Grade

_NAME = re.compile(r"[^\s/>=<!?\"']+")
_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[(?P<cdata>.*?)\]\]>|<\?(?P<pi>[^\s?]+)(?P<piattrs>.*?)\?>|<![^>]*>"
    r"|</\s*(?P<close>[^\s>]+)\s*>"
    r"|<(?P<open>[^\s/>!?]+)(?P<attrs>(?:[^>\"']|\"[^\"]*\"|'[^']*')*?)(?P<self>/?)>",
    re.S,
)
_ATTRIBUTE = re.compile(r"([^\s=/]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+)))?")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def _scalar(text: str) -> Any:
    """fast-xml-parser's value parsing: numeric text becomes a number, the rest stays text."""
    stripped = text.strip()
    if _NUMBER.match(stripped) and not re.match(r"^[+-]?0\d", stripped):
        number = float(stripped)
        return int(number) if number.is_integer() and "." not in stripped else number
    return stripped


def _attributes(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for match in _ATTRIBUTE.finditer(text):
        name, *values = match.groups()
        value = next((v for v in values if v is not None), None)
        found[f"@_{name}"] = True if value is None else _scalar(value)
    return found


@dataclass(slots=True)
class _Frame:
    name: str
    children: dict[str, Any]
    text: list[str]


def _add(children: dict[str, Any], name: str, value: Any) -> None:
    if name not in children:
        children[name] = value
    elif isinstance(children[name], list):
        children[name].append(value)
    else:
        children[name] = [children[name], value]


def _close(frame: _Frame) -> Any:
    text = "".join(frame.text).strip()
    if not frame.children:
        return _scalar(text) if text else ""
    if text:
        frame.children["#text"] = _scalar(text)
    return frame.children


def element_tree(xml: str) -> dict[str, Any]:
    """The element tree of well-formed markup in fast-xml-parser's object shape."""
    stack = [_Frame("", {}, [])]
    position = 0
    for match in _TOKEN.finditer(xml):
        stack[-1].text.append(xml[position : match.start()])
        position = match.end()
        if match.group("cdata") is not None:
            stack[-1].text.append(match.group("cdata"))
        elif match.group("pi") is not None:
            _add(stack[0].children, f"?{match.group('pi')}", _attributes(match.group("piattrs")))
        elif match.group("close") is not None:
            if len(stack) == 1 or stack[-1].name != match.group("close"):
                raise ValueError(f"Unexpected closing tag '{match.group('close')}'")
            frame = stack.pop()
            _add(stack[-1].children, frame.name, _close(frame))
        elif match.group("open") is not None:
            attributes = _attributes(match.group("attrs"))
            if match.group("self"):
                _add(stack[-1].children, match.group("open"), attributes or "")
            else:
                stack.append(_Frame(match.group("open"), attributes, []))
    stack[-1].text.append(xml[position:])
    if len(stack) > 1:
        raise ValueError(f"Unclosed tag '{stack[-1].name}'")
    return _close(stack[0]) or {}


def _has_path(value: Any, path: list[str]) -> bool:
    current = value
    for key in path:
        if isinstance(current, list):
            if not key.isdigit() or str(int(key)) != key or int(key) >= len(current):
                return False
            current = current[int(key)]
        elif isinstance(current, dict):
            if key not in current:
                return False
            current = current[key]
        else:
            return False
    return True


@dataclass(slots=True)
class XmlCheck:
    """The outcome of checking one XML text: valid, well-formed, and why not."""

    valid: bool
    reason: str
    well_formed: bool = True


def check_candidate(xml: str, required: list[str] | None) -> XmlCheck:
    """promptfoo's validateXmlCandidate: build the tree and look for the required paths."""
    try:
        tree = element_tree(xml)
    except ValueError as exc:
        return XmlCheck(False, f"XML parsing failed: {exc}", well_formed=False)
    missing = [path for path in required or [] if not _has_path(tree, path.split("."))]
    if missing:
        return XmlCheck(False, f"XML is missing required elements: {', '.join(missing)}")
    return XmlCheck(True, "XML is valid and contains all required elements")


class _InternalSubset(Exception):
    pass


def strict_xml_error(xml: str) -> str | None:
    """Why `xml` is not one well-formed document (None when it is); DTD subsets are refused."""
    parser = expat.ParserCreate()

    def on_doctype(name: str, system_id: str | None, public_id: str | None, internal: int) -> None:
        if internal:
            raise _InternalSubset

    parser.StartDoctypeDeclHandler = on_doctype
    try:
        parser.Parse(xml, True)
    except _InternalSubset:
        return "DTD internal subsets are not supported by is-xml validation"
    except expat.ExpatError as exc:
        message = expat.ErrorString(exc.code)
        return f"XML parsing failed: {exc.lineno}:{exc.offset + 1}: {message}."
    return None


def validate_xml(xml: str, required: list[str] | None) -> XmlCheck:
    """promptfoo's validateXml: strictly well-formed, then the required elements."""
    problem = strict_xml_error(xml)
    if problem is not None:
        return XmlCheck(False, problem, well_formed=False)
    return check_candidate(xml, required)


def _tag_at(text: str, start: int) -> re.Match[str] | None:
    match = _TOKEN.match(text, start)
    if match is None or match.group("cdata") is not None:
        return None
    return match


def xml_candidates(text: str) -> list[tuple[int, int]]:
    """promptfoo's extractXmlCandidates: balanced tag runs, sibling groups first."""
    stack: list[tuple[str, int]] = []
    found: list[tuple[int, int, int | None]] = []
    i = 0
    while i < len(text):
        if text[i] != "<":
            i += 1
            continue
        tag = _tag_at(text, i)
        if tag is None:
            i += 1
            continue
        parent = stack[-1][1] if stack else None
        if tag.group("open") is not None:
            if tag.group("self"):
                found.append((tag.start(), tag.end(), parent))
            else:
                stack.append((tag.group("open"), tag.start()))
        elif tag.group("close") is not None:
            if stack and stack[-1][0] == tag.group("close"):
                _, start = stack.pop()
                found.append((start, tag.end(), stack[-1][1] if stack else None))
            else:
                stack.clear()
        i = tag.end()
    return _ordered(found)


def _ordered(found: list[tuple[int, int, int | None]]) -> list[tuple[int, int]]:
    starts = {start for start, _, _ in found}
    ordered: list[tuple[int, int]] = []
    by_parent: dict[int | None, list[tuple[int, int]]] = {}
    for start, end, parent in found:
        by_parent.setdefault(parent, []).append((start, end))
    for parent, siblings in by_parent.items():
        if len(siblings) <= 1 or (parent is not None and parent in starts):
            continue
        siblings.sort()
        group = (siblings[0][0], siblings[-1][1])
        if group not in ordered:
            ordered.append(group)
    outermost = sorted(
        ((s, e) for s, e, p in found if p is None or p not in starts),
        key=lambda span: (span[0], -span[1]),
    )
    ordered.extend(span for span in outermost if span not in ordered)
    return ordered


def contains_xml_check(text: str, required: list[str] | None) -> XmlCheck:
    """promptfoo's containsXml: some candidate in the text is valid XML with the paths."""
    candidates = xml_candidates(text)
    if not candidates:
        return XmlCheck(False, "No XML content found in the output")
    containers: list[tuple[int, int]] = []
    for start, end in candidates:
        if any(start >= s and end <= e for s, e in containers):
            continue
        result = check_candidate(text[start:end], required)
        if result.valid:
            return result
        if result.well_formed:
            containers.append((start, end))
    return XmlCheck(False, "No valid XML content found matching the requirements")


def required_elements(value: Any) -> list[str] | None:
    """The dotted element paths an is-xml/contains-xml value asks for."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")] if value else None
    if isinstance(value, list) and value:
        return [js_string(v) for v in value]
    if isinstance(value, dict) and value:
        listed = value.get("requiredElements")
        if isinstance(listed, list):
            return [js_string(v) for v in listed]
        raise GraderError("xml assertion must contain a string, array value, or no value")
    return None


@register("is-xml", "contains-xml", layer="final", promptfoo=True)
def xml(ctx: GradeContext) -> Grade:
    """The output is (`is-xml`) or contains (`contains-xml`) XML with the required elements."""
    required = required_elements(assertion_value(ctx))
    check = validate_xml if ctx.assertion.base_type == "is-xml" else contains_xml_check
    result = check(output_string(ctx), required)
    return outcome(ctx, result.valid != ctx.inverse, result.reason)
