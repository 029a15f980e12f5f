"""Template injection: the classic Jinja2 escapes never execute, from data or agent output.

Each payload would create a marker file outside the case directory, print `uid=` (the
output of `id`) or read a planted secret if it ran. From CSV, JSON, JSONL and YAML
datasets, from the suite file itself, and from an agent's output, error and trajectory,
the evaluation must end with no marker, no `uid=`, no secret and no traceback; each
payload either appears literally where it was put or is rejected (an error row of kind
`template_error`, or exit 2 naming the dataset).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hostile.harness import (
    ALL_SECRETS,
    OUTSIDE_DIR,
    TRACEBACK,
    Case,
    Correct,
    make_workspace,
    query,
    run_evals,
)

# Each payload touches @OUTSIDE@/<name> if it runs; `id` prints uid=...
PAYLOADS = {
    "cycler-popen": "{{ cycler.__init__.__globals__.os.popen('touch MARK; id').read() }}",
    "joiner-system": "{{ joiner.__init__.__globals__.os.system('touch MARK') }}",
    "namespace-system": "{{ namespace.__init__.__globals__.os.system('touch MARK') }}",
    "lipsum-popen": "{{ lipsum.__globals__['os'].popen('touch MARK; id').read() }}",
    "subclasses-popen": "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
    "{% if c.__name__ == 'Popen' %}{{ c(['touch', 'MARK']).wait() }}{% endif %}{% endfor %}",
    "builtins-import": "{{ self.__init__.__globals__.__builtins__.__import__('os')"
    ".system('touch MARK') }}",
    "attr-filter": "{{ (cycler|attr('__init__')|attr('__globals__'))['os'].system('touch MARK') }}",
    "format-string": "{{ '{0.__init__.__globals__[os].system}'.format(cycler) }}"
    "{{ cycler.__init__.__globals__['os'].system('touch MARK') }}",
    "env-read": "{{ env.HOSTILE_API_KEY }} {{ env.HOSTILE_PLAIN_SECRET }}",
}


def payload(name: str) -> str:
    """A payload with its marker path filled in."""
    return PAYLOADS[name].replace("MARK", f"{OUTSIDE_DIR}/{name}")


GOOD = """\
def call_api(prompt, options, context):
    return {"output": "ok " + prompt}
"""

DATA_SUITE = """\
prompts: ['Q: {{q}}']
providers: [{id: file://good.py, label: good}]
tests: file://%s
gates: {}
"""


def _csv() -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["q", "__description"])
    for name in PAYLOADS:
        writer.writerow([payload(name), name])
    return out.getvalue()


def _tests() -> list[dict[str, Any]]:
    return [{"description": name, "vars": {"q": payload(name)}} for name in PAYLOADS]


DATA_SOURCES = {
    "csv": ("tests.csv", _csv),
    "json": ("tests.json", lambda: json.dumps(_tests())),
    "jsonl": ("tests.jsonl", lambda: "\n".join(json.dumps(t) for t in _tests())),
    "yaml": ("tests.yaml", lambda: yaml.safe_dump(_tests())),
}

OUTPUT_AGENT = """\
import json

PAYLOADS = json.loads(%r)


def answers(prompt, options, context):
    text = PAYLOADS[context["vars"]["name"]]
    return {
        "output": text,
        "metadata": {"echo": text},
        "trajectory": [{"kind": "tool", "name": "search", "arguments": {"query": text}}],
    }


def fails(prompt, options, context):
    return {"error": PAYLOADS[context["vars"]["name"]]}


def judge(prompt, options, context):
    return {"output": json.dumps({"pass": True, "score": 1, "reason": "judged"})}
"""

OUTPUT_SUITE = """\
prompts: ['{{name}}']
providers:
  - {id: 'file://agent.py:answers', label: answers}
  - {id: 'file://agent.py:fails', label: fails}
defaultTest:
  options: {provider: 'file://agent.py:judge'}
  assert:
    - {type: contains, value: '{{name}}'}
    - {type: llm-rubric, value: 'The answer is polite'}
tests:
%s
gates: {}
"""

INLINE_SUITE = """\
prompts: ['Q: {{q}}']
providers: [{id: file://good.py, label: good}]
tests:
%s
gates: {}
"""


def _inline_tests() -> str:
    return "\n".join(
        f"  - description: {name}\n    vars: {{q: {json.dumps(payload(name))}}}"
        for name in PAYLOADS
    )


def _run(tmp_path: Path, hostile_url: str, files: dict[str, str]) -> dict[str, Any]:
    case = Case("injection", "injection", files, Correct("no execution"))
    ws = make_workspace(tmp_path, case, hostile_url)
    argv = ["run", "suite.yaml", "--store", str(ws.store), "--no-progress"]
    for name in ("report.json", "report.html", "report.md", "report.yaml"):
        argv += ["-o", name]
    done = run_evals(ws, *argv, timeout=60)
    artifacts = "".join(
        p.read_bytes().decode("utf-8", "replace")
        for p in ws.root.rglob("*")
        if p.is_file() and p.resolve() not in ws.inputs
    )
    return {
        "code": done.returncode,
        "stdout": done.stdout.decode("utf-8", "replace"),
        "stderr": done.stderr.decode("utf-8", "replace"),
        "markers": sorted(p.name for p in ws.outside.iterdir()),
        "artifacts": artifacts,
        "runs": query(ws.store, "SELECT * FROM runs"),
        "ws": ws,
    }


def _nothing_ran(result: dict[str, Any]) -> None:
    streams = result["stdout"] + result["stderr"]
    assert not result["markers"], f"payloads executed: {result['markers']}"
    assert "uid=" not in streams + result["artifacts"], "`id` ran: uid= in an artifact"
    leaked = [s for s in ALL_SECRETS if s in streams + result["artifacts"]]
    assert not leaked, f"secrets read by a payload: {leaked}"
    assert TRACEBACK not in streams, result["stderr"][-2000:]


def _literal_or_rejected(result: dict[str, Any], dataset: str, masked: str = "") -> None:
    """Each payload is stored literally or its run rejected; the payload named `masked`
    (the suite file's own `{{ env.X }}` references, which the author may write) is
    substituted and stored with the values masked."""
    if result["code"] == 2:
        assert dataset in result["stderr"], result["stderr"][-500:]
        return
    assert result["code"] in (0, 1), result["stderr"][-1000:]
    by_case = {r["case_id"]: r for r in result["runs"]}
    assert set(by_case) == set(PAYLOADS), sorted(by_case)
    for name, run in by_case.items():
        literal = payload(name).replace(OUTSIDE_DIR, str(result["ws"].outside))
        rejected = run["status"] == "error" and run["error_kind"] == "template_error"
        if name == masked:
            assert "[REDACTED]" in run["prompt"] and "{{" not in run["prompt"], run["prompt"]
            continue
        assert rejected or literal in run["prompt"], (
            f"{name}: neither literal nor rejected: {run['status']} {run['error_kind']} "
            f"{run['prompt'][:200]!r}"
        )


@pytest.mark.parametrize("source", list(DATA_SOURCES))
def test_dataset_payloads_never_run(tmp_path: Path, hostile_url: str, source: str) -> None:
    name, content = DATA_SOURCES[source]
    result = _run(
        tmp_path, hostile_url, {"suite.yaml": DATA_SUITE % name, "good.py": GOOD, name: content()}
    )
    _nothing_ran(result)
    _literal_or_rejected(result, name)


def test_suite_file_payloads_never_run(tmp_path: Path, hostile_url: str) -> None:
    """Even the suite author's templates render in the sandbox (env only where written)."""
    result = _run(
        tmp_path,
        hostile_url,
        {"suite.yaml": INLINE_SUITE % _inline_tests(), "good.py": GOOD},
    )
    _nothing_ran(result)
    _literal_or_rejected(result, "suite.yaml", masked="env-read")


def test_agent_output_payloads_never_run(tmp_path: Path, hostile_url: str) -> None:
    """An agent's output, error and trajectory are data through grading and reports."""
    payloads = {name: payload(name) for name in PAYLOADS}
    tests = "\n".join(f"  - description: {n}\n    vars: {{name: {n}}}" for n in PAYLOADS)
    agent = OUTPUT_AGENT % json.dumps(payloads)
    result = _run(tmp_path, hostile_url, {"suite.yaml": OUTPUT_SUITE % tests, "agent.py": agent})
    _nothing_ran(result)
    outside = str(result["ws"].outside)
    answers = {r["case_id"]: r for r in result["runs"] if r["agent"] == "answers"}
    fails = {r["case_id"]: r for r in result["runs"] if r["agent"] == "fails"}
    assert set(answers) == set(fails) == set(PAYLOADS)
    for name in PAYLOADS:
        literal = payloads[name].replace(OUTSIDE_DIR, outside)
        assert json.loads(answers[name]["output"]) == literal, name
        assert fails[name]["error_kind"] == "agent_error"
        assert literal[:40] in fails[name]["error"], (name, fails[name]["error"][:200])
