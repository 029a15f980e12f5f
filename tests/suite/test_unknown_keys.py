"""Unknown keys are refused at load, at their line, with the closest known key; every key of
promptfoo's own config schema is accepted, and those evals ignores are warned about once."""

from __future__ import annotations

import json
import re

import pytest

from evals.cli import main
from evals.suite import keys, load_suite
from tests import tiers

HEAD = "prompts: ['{{q}}']\nproviders: [echo]\n"


@pytest.mark.parametrize(
    ("text", "files", "where", "message", "hint"),
    [
        (
            HEAD + "tests:\n  - vars: {q: hi}\n    asert: [{type: contains, value: bye}]\n",
            {},
            "suite.yaml:5",
            "unknown key 'asert' in test #1",
            "did you mean 'assert'?",
        ),
        (
            "promts: ['{{q}}']\nproviders: [echo]\ntests: [{vars: {q: hi}}]\n",
            {},
            "suite.yaml:1",
            "unknown key 'promts' in the suite",
            "did you mean 'prompts'?",
        ),
        (
            HEAD + "tests:\n  - vars: {q: hi}\n    assert:\n      - type: contains\n"
            "        vaule: hi\n",
            {},
            "suite.yaml:7",
            "unknown key 'vaule' in the 'contains' assertion",
            "did you mean 'value'?",
        ),
        (
            HEAD
            + "defaultTest:\n  asserts: [{type: contains, value: hi}]\ntests: [{vars: {q: hi}}]\n",
            {},
            "suite.yaml:4",
            "unknown key 'asserts' in defaultTest",
            "did you mean 'assert'?",
        ),
        (
            HEAD + "tests: file://cases.yaml\n",
            {
                "cases.yaml": "- vars: {q: hi}\n  assert: [{type: contains, value: hi}]\n"
                "- vars: {q: ho}\n  asert: [{type: contains, value: bye}]\n"
            },
            "cases.yaml:4",
            "unknown key 'asert' in test #2",
            "did you mean 'assert'?",
        ),
        (
            HEAD + "tests: file://cases.json\n",
            {
                "cases.json": '[\n  {"vars": {"q": "hi"}},\n  {"vars": {"q": "x"},\n'
                '   "descripton": "typo"}\n]\n'
            },
            "cases.json:3",
            "unknown key 'descripton' in test #2",
            "did you mean 'description'?",
        ),
        (
            HEAD + "tests: file://cases.csv\n",
            {"cases.csv": "q,__expeted\nhi,hi\n"},
            "cases.csv:1",
            "unknown column '__expeted'",
            "did you mean '__expected'?",
        ),
        (
            HEAD + "gates: {min_pass_rat: 0.8}\ntests: [{vars: {q: hi}}]\n",
            {},
            "suite.yaml:3",
            "unknown key 'min_pass_rat' in gates",
            "did you mean 'min_pass_rate'?",
        ),
        (
            HEAD + "scenarios:\n  - config: [{vars: {q: hi}}]\n    tets: [{vars: {q: x}}]\n",
            {},
            "suite.yaml:5",
            "unknown key 'tets' in scenario #1",
            "did you mean 'tests'?",
        ),
        (
            HEAD + "evaluateOptions: {repat: 3}\ntests: [{vars: {q: hi}}]\n",
            {},
            "suite.yaml:3",
            "unknown key 'repat' in evaluateOptions",
            "did you mean 'repeat'?",
        ),
        (
            "prompts: ['{{q}}']\nproviders:\n  - id: echo\n    lable: baseline\n"
            "tests: [{vars: {q: hi}}]\n",
            {},
            "suite.yaml:4",
            "unknown key 'lable' in provider 'echo'",
            "did you mean 'label'?",
        ),
    ],
)
def test_an_unknown_key_stops_the_run_at_its_line_with_the_closest_key(
    write_suite, tmp_path, capsys, text, files, where, message, hint
):
    """Before: `asert:` graded nothing and passed (exit 0); a dataset's misspelled key and
    a CSV's misspelled column were dropped the same way."""
    path = write_suite(text, files=files)
    store = tmp_path / "runs.db"

    code = main(["run", str(path), "--store", f"sqlite:///{store}", "--no-progress"])

    err = capsys.readouterr().err
    assert code == 2
    assert f"{tmp_path / where.split(':')[0]}:{where.split(':')[1]}: {message}" in err
    assert hint in err
    assert not store.exists()


def test_a_valid_promptfoo_config_with_every_kind_of_key_loads(write_suite, capsys):
    """promptfoo's own keys (those evals ignores included), YAML anchors under definition
    keys, `$ref` targets and METEOR's parameters load; what evals ignores is said once."""
    text = """\
        # yaml-language-server: $schema=https://promptfoo.dev/config-schema.json
        x-checks: &checks
          - {type: icontains, value: hi}
        shared: &shared {q: hi}
        assertionTemplates:
          greets: {type: contains, value: hi}
        description: every key
        tags: {team: support}
        outputPath: out.json
        sharing: false
        writeLatestResults: true
        metadata: {owner: me}
        tracing: {enabled: false}
        commandLineOptions: {maxConcurrency: 2}
        env: {GREETING: hi}
        nunjucksFilters: {}
        evaluateOptions: {repeat: 1, maxConcurrency: 2, cache: false, showProgressBar: false}
        prompts: ['{{q}}']
        providers:
          - id: echo
            label: a
            delay: 0
            env: {X: y}
        defaultTest:
          options: {anything: goes}
          metadata: {also: anything}
        tests:
          - description: one
            vars: *shared
            assert: *checks
            threshold: 0.5
            metadata: {tags: [smoke]}
            options: {transform: output.trim()}
          - vars: {q: hi}
            assert:
              - $ref: '#/assertionTemplates/greets'
              - {type: meteor, value: hi, alpha: 0.5, beta: 2, gamma: 0.3, threshold: 0.1}
              - type: assert-set
                weight: 1
                assert: [{type: contains, value: h, metric: m, weight: 2}]
        scenarios:
          - description: more
            config: [{vars: {q: hi}}]
            tests: [{assert: [{type: contains, value: hi}]}]
    """
    path = write_suite(text)
    suite = load_suite(path)

    assert len(suite.cases) == 3
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    for key in ("outputPath", "sharing", "writeLatestResults", "tags", "metadata", "tracing"):
        assert err.count(f"warning: {key} is a promptfoo setting evals ignores") == 1, key
    assert "warning: commandLineOptions is a promptfoo setting evals ignores" in err
    assert "evaluateOptions.cache" in err and "evaluateOptions.showProgressBar" in err
    assert "warning: provider env is a promptfoo setting evals ignores" in err


def _schema_keys(source: str, name: str) -> set[str]:
    """The keys of `const NAME = z.object({...})` in promptfoo's bundled validators."""
    start = source.index(f"const {name} = z.object({{")
    body = source[start : source.index("\n});", start)]
    return set(re.findall(r"^\t([A-Za-z$_][\w$]*): ", body, re.MULTILINE))


@pytest.mark.promptfoo
def test_every_key_of_promptfoos_schema_is_accepted():
    """Cross-checked against the installed promptfoo's own zod schema: no key it defines is
    refused (`TestSuiteConfigSchema` with the keys `UnifiedConfigSchema` adds)."""
    cli = tiers.promptfoo_cli()
    assert cli is not None
    package = next(d for d in cli.resolve().parents if (d / "dist" / "src").is_dir())
    bundle = next(
        path.read_text(encoding="utf-8")
        for path in sorted((package / "dist" / "src").glob("*.js"))
        if "const TestCaseSchema = z.object({" in path.read_text(encoding="utf-8")
    )
    expected = {
        "TestSuiteConfigSchema": keys.TOP_LEVEL,
        "TestCaseSchema": keys.TEST,
        "AssertionSchema": keys.ASSERTION,
        "AssertionSetSchema": keys.ASSERT_SET,
        "ScenarioSchema": keys.SCENARIO,
        "ProviderOptionsSchema": keys.PROVIDER,
        "EvaluateOptionsSchema": keys.EVALUATE_OPTIONS,
        "TestGeneratorConfigSchema": keys.TEST_GENERATOR,
    }
    for schema, ours in expected.items():
        theirs = _schema_keys(bundle, schema)
        assert theirs, schema
        assert theirs <= ours, (schema, sorted(theirs - ours))
    assert {"evaluateOptions", "commandLineOptions", "targets"} <= keys.TOP_LEVEL
    report = json.dumps(sorted(keys.IGNORED))
    assert "outputPath" in report
