"""Templates, regexes and JavaScript checks run in a sandbox with limits.

Hostile text in prompts, datasets or assertions cannot reach Python, files, the network
or the environment: the classic Jinja2 and JavaScript escapes execute nothing (a marker
file is never created), and a template that loops or allocates without end becomes an
error row within the run's timeout instead of hanging or exhausting the process.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evals.common import jsengine
from evals.common.templating import TemplateError, render
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite


def _escapes(marker: Path) -> list[str]:
    touch = f"touch {marker}"
    return [
        "{{ cycler.__init__.__globals__.os.popen('" + touch + "').read() }}",
        "{{ joiner.__init__.__globals__.os.popen('" + touch + "').read() }}",
        "{{ namespace.__init__.__globals__.os.popen('" + touch + "').read() }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os }}",
        '{{ "".constructor.constructor("return process")().mainModule.require("child_process")'
        '.execSync("' + touch + '") }}',
        '{{ range.constructor("return this")().process.binding("spawn_sync") }}',
        '{{ "".constructor.constructor("return require(\'fs\')")().writeFileSync("'
        + str(marker)
        + '", "x") }}',
        '{{ "".constructor.constructor("return import(\'' + str(marker) + "')\")() }}",
        '{{ "".constructor.constructor("Object.prototype.polluted = \'yes\'")() }}',
        "{{ this.constructor.constructor('return globalThis')().__host_filter }}",
    ]


def _run(suite_path: Path, timeout_s: float | None = None):
    options = RunOptions(use_store=False, progress=False, timeout_s=timeout_s)
    return run_evaluation(load_suite(suite_path), options)


def test_escapes_in_prompts_execute_nothing(write_suite, tmp_path):
    marker = tmp_path / "pwned"
    # each on two lines (a blank line in quotes is a newline): a one-line prompt holding
    # '/' is a file path to promptfoo
    prompts = "\n".join(f"  - {_yaml_quote(p + chr(10) * 2)}" for p in _escapes(marker))
    path = write_suite(f"prompts:\n{prompts}\nproviders: [echo]\ntests: [{{vars: {{q: 1}}}}]\n")
    result = _run(path)
    assert not marker.exists()
    assert len(result.records) == len(_escapes(marker))
    for record in result.records:
        assert "pwned" not in str(record.response.output or "").replace(str(marker), "")


def test_escapes_in_dataset_values_and_assertions_execute_nothing(write_suite, tmp_path):
    marker = tmp_path / "pwned"
    rows = "\n".join(f"{_csv_quote(p)},{_csv_quote(p)}" for p in _escapes(marker))
    scripts = [
        f"require('fs').writeFileSync('{marker}', 'x')",
        f"process.mainModule.require('child_process').execSync('touch {marker}')",
    ]
    checks = "".join(f"\n    - type: javascript\n      value: {_yaml_quote(s)}" for s in scripts)
    path = write_suite(
        "prompts: ['Q: {{ question }}']\nproviders: [echo]\n"
        f"defaultTest:\n  assert:{checks}\ntests: file://data.csv\n",
        files={"data.csv": "question,__expected\n" + rows + "\n"},
    )
    result = _run(path)
    assert not marker.exists()
    assert len(result.records) == len(_escapes(marker))
    assert all(not r.passed for r in result.records)


def test_prototype_pollution_does_not_reach_later_renders():
    with pytest.raises(TemplateError):
        render('{{ "".constructor.constructor("Object.prototype.x = 1; throw 0")() }}', {})
    render('{{ "".constructor.constructor("Object.prototype.polluted = \'yes\'")() }}', {})
    assert render("[{{ o.polluted }}][{% if o.polluted %}yes{% endif %}]", {"o": {}}) == "[][]"


def test_javascript_sees_no_host():
    probe = (
        "{{ ''.constructor.constructor('return [typeof require, typeof process, typeof std,"
        " typeof os, typeof fetch, typeof XMLHttpRequest, typeof __host_filter].join()')() }}"
    )
    assert render(probe, {}) == ",".join(["undefined"] * 7)


@pytest.mark.slow
@pytest.mark.parametrize(
    "bomb",
    [
        "{% for i in range(10**12) %}x{% endfor %}",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        '{% set s = "xx" %}{% for i in range(40) %}{% set s = s + s %}{% endfor %}{{ s }}',
        "{{ ''.constructor.constructor('while (true) {}')() }}",
        "{{ ''.constructor.constructor('var a = []; while (true) a.push(new Array(1e5))')() }}",
    ],
    ids=["range-memory", "nested-loops", "doubling-string", "endless-loop", "allocation"],
)
def test_a_template_bomb_is_an_error_row_within_the_timeout(write_suite, bomb):
    path = write_suite(
        f"prompts: [{_yaml_quote(bomb)}, 'fine {{{{ q }}}}']\nproviders: [echo]\n"
        "tests: [{vars: {q: 1}}]\n"
    )
    started = time.monotonic()
    result = _run(path, timeout_s=1.0)
    elapsed = time.monotonic() - started
    bombed, fine = sorted(result.records, key=lambda r: r.prompt_index)
    assert bombed.status == "error"
    # a sandbox limit (time, memory, output, range size) or, first, the run's own timeout
    if bombed.error_kind == "timeout":
        assert "rendering the prompt took longer than the timeout of 1 s" in (bombed.error or "")
    else:
        assert bombed.error_kind == "template_error"
        assert "prompt template error" in (bombed.error or "")
    assert fine.status == "pass" and fine.response.output == "fine 1"
    assert elapsed < 15  # one second of JavaScript, plus start-up on a busy machine


@pytest.mark.slow
def test_limits_stop_javascript_assertions_and_the_next_call_starts_clean(write_suite, monkeypatch):
    monkeypatch.setattr(jsengine, "DEFAULT_TIME_LIMIT_S", 0.3)
    path = write_suite(
        """\
        prompts: ['{{ q }}']
        providers: [echo]
        tests:
          - vars: {q: spin}
            assert: [{type: javascript, value: '(() => { while (true) {} })()'}]
          - vars: {q: ok}
            assert: [{type: javascript, value: "output === 'ok'"}]
        """
    )
    spun, ok = sorted(_run(path, timeout_s=5.0).records, key=lambda r: r.case_index)
    assert spun.status == "error" and spun.error_kind == "grader_error"
    assert "ran longer than 0.3 s" in (spun.error or "")
    assert ok.passed


def test_env_reaches_author_templates_only(write_suite, monkeypatch):
    # a name that does not look secret: the value is configuration and is shown unmasked
    monkeypatch.setenv("EVALS_TEST_REGION", "eu-west")
    path = write_suite(
        """\
        prompts: ['{{ env.EVALS_TEST_REGION }}|{{ question }}']
        providers: [echo]
        tests:
          - file://data.csv
          - file://more.yaml
        """,
        files={
            "data.csv": "question\n{{ env.EVALS_TEST_REGION }}\n",
            "more.yaml": "- vars: {question: 'x{{ env.EVALS_TEST_REGION }}'}\n",
        },
    )
    outputs = sorted(r.response.output for r in _run(path).records)
    assert outputs == [
        "eu-west|x{{ env.EVALS_TEST_REGION }}",
        "eu-west|{{ env.EVALS_TEST_REGION }}",
    ]


def test_a_python_filter_runs_in_author_templates_but_not_from_test_data(write_suite):
    path = write_suite(
        """\
        nunjucksFilters: {shout: file://filters.py}
        prompts: ['{{ q | shout }} and {{ data }}']
        providers: [echo]
        tests:
          - vars: {q: hi, data: '{{ q | shout }}'}
        """,
        files={"filters.py": "def shout(text):\n    return str(text).upper()\n"},
    )
    (record,) = _run(path).records
    assert record.status == "error"
    assert "Python" in (record.error or "")


def test_the_time_limit_follows_the_run_timeout():
    jsengine.set_time_limit(0.2)
    try:
        started = time.monotonic()
        with pytest.raises(jsengine.JavaScriptLimitError):
            jsengine.call("assertion", "(() => { while (true) {} })()", "x", {})
        assert time.monotonic() - started < 5
    finally:
        jsengine.set_time_limit(jsengine.DEFAULT_TIME_LIMIT_S)


def _yaml_quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _csv_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'
