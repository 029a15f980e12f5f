"""Turn a promptfoo-style YAML config into a validated `Suite`, or a SuiteError.

Everything that can be checked without running an agent is checked here: YAML syntax,
the shape of each section, assertion types, provider files and ids, and the `gates:`
block. A suite that loads is a suite that can run.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evals.common.files import (
    default_label,
    is_file_ref,
    is_python_ref,
    read_text,
    ref_body,
    split_ref,
)
from evals.common.paths import LinkLoop, glob_paths, resolve
from evals.graders.registry import check_assertion_value, unknown_type_hint
from evals.model.bounds import COUNT, FINITE, NON_NEGATIVE, Bounds
from evals.model.errors import SuiteError
from evals.model.plan import SIMULATED_USER
from evals.model.suite import Assertion, Case, EvaluateOptions, Prompt, ProviderSpec, Suite
from evals.suite import checks, keys
from evals.suite.csv_tests import csv_delimiter
from evals.suite.fingerprint import (
    agent_fingerprint,
    case_fingerprint,
    expand_python_imports,
    fingerprint,
    fingerprint_gap,
    suite_document,
)
from evals.suite.prompts import PromptSources, load_prompts
from evals.suite.refs import dereference_suite
from evals.suite.test_cases import check_templates, expand_tests
from evals.suite.tests_files import scenario_entries, test_entries
from evals.suite.vars import env_ref_names, render_env_refs
from evals.suite.yaml_lines import file_of, kind_name, line_of, load_yaml
from evals.tracing.redact import Redactor, secret_values

DEFAULT_SUITE_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "suite.yaml", "evals.yaml")
PRIORITIES = ("P0", "P1", "P2", "P3")
TURN_WORDS = ("last", "each")
"""The words an assertion's `turn:` takes besides a turn number."""
"""The priority levels of `metadata.priority` the gates read (P0 cases block on their own)."""


ERROR_ROWS = "every run it applies to is an error row, as in promptfoo"


def resolve_suite_path(target: str | Path) -> Path:
    """Accept a suite file or a directory holding one of the default suite names."""
    path = Path(target)
    if path.is_dir():
        for name in DEFAULT_SUITE_NAMES:
            if (path / name).is_file():
                return path / name
        raise SuiteError(
            "no suite file in this directory",
            file=str(path),
            fix=f"add one of {', '.join(DEFAULT_SUITE_NAMES)} or pass the YAML file itself",
        )
    if not path.exists():
        raise SuiteError("suite file not found", file=str(path), fix="check the path")
    return path


class _Loader:
    """Stateful helper: collects referenced files while it validates each section."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.root = path.parent
        self.files: list[Path] = [path]
        self.env: dict[str, str] = dict(os.environ)
        self.provider_files: dict[str, list[Path]] = {}
        self.masker = Redactor()
        self.notices: list[str] = []
        self.ignored: list[str] = []

    def notice(
        self, node: Any, message: str, fix: str | None = None, line: int | None = None
    ) -> None:
        """A problem promptfoo reports on the rows it affects rather than at load: the suite
        loads, those runs become error rows (or failed checks), and `evals validate` and
        `evals run` say so before any run. `line` stands in when `node` has none."""
        where, line = self.file_of(node), line_of(node) or line
        text = f"{where}:{line}: {message}" if line else f"{where}: {message}"
        self.notices.append(f"{text}\n  fix: {fix}" if fix else text)

    def deferred(self, node: Any, exc: SuiteError, consequence: str) -> None:
        """`notice` of a SuiteError that promptfoo turns into error rows (`consequence`)."""
        self.notice(node, f"{exc.message}: {consequence}", exc.fix)

    def optional_file(self, ref: str, node: Any, what: str, consequence: str) -> None:
        """Record the file a `file://` reference names, or give notice that it is missing
        (promptfoo reads it when a run needs it and fails that run)."""
        rel, _ = split_ref(ref)
        try:
            target = resolve(self.root / rel)
        except LinkLoop:
            target = self.root / rel
        if target.exists():
            self.files.append(target)
        else:
            self.notice(
                node,
                f"{what} file not found: {rel}: {consequence}",
                f"create {target} or correct the path (relative to {self.root})",
            )

    def error(self, message: str, node: Any = None, fix: str | None = None) -> SuiteError:
        return SuiteError(message, file=self.file_of(node), line=line_of(node), fix=fix)

    def file_of(self, node: Any) -> str:
        """The file a node was read from: a dataset's for its tests, else the suite."""
        return file_of(node) or str(self.path)

    @contextmanager
    def located(self, line: int | None) -> Iterator[None]:
        """Errors about the suite file raised inside, without a line of their own, get `line`
        (the line of the section being read)."""
        try:
            yield
        except SuiteError as exc:
            if exc.file in (None, str(self.path)):
                exc.file = str(self.path)
                exc.line = exc.line or line
            raise

    @contextmanager
    def at(self, node: Any, line: int | None = None) -> Iterator[None]:
        """Errors raised inside that name no file are placed at `node`: its file, and
        `line` or its own line."""
        try:
            yield
        except SuiteError as exc:
            if exc.file is None:
                exc.file, exc.line = self.file_of(node), exc.line or line or line_of(node)
            raise

    def file_ref(self, ref: str, node: Any, what: str) -> Path:
        """Resolve a `file://` reference relative to the suite and record it."""
        rel, _ = split_ref(ref)
        try:
            target = resolve(self.root / rel)
        except LinkLoop:
            raise self.error(
                f"{what} file {rel} is a loop of symbolic links",
                node,
                fix="point the reference at the file itself",
            ) from None
        if not target.exists():
            raise self.error(
                f"{what} file not found: {rel}",
                node,
                fix=f"create {target} or correct the path (relative to {self.root})",
            )
        if not target.is_file():
            kind = "a directory" if target.is_dir() else "not a regular file (a device or pipe)"
            raise self.error(
                f"{what} file {rel} is {kind}",
                node,
                fix=f"name a file, or a glob such as file://{rel.rstrip('/')}/*.yaml"
                if target.is_dir()
                else "name a regular file",
            )
        self.files.append(target)
        return target

    def resolve_files(self, ref: str, node: Any, what: str) -> list[Path]:
        """Resolve a `file://` reference that may be a glob; each match is recorded."""
        rel = ref_body(ref)
        if not glob.has_magic(rel):
            return [self.file_ref(ref, node, what)]
        matches = []
        for match in glob_paths(rel, self.root):
            try:
                matches.append(resolve(match))
            except LinkLoop:
                continue  # a link in a loop names no file: the glob does not match it
        matches.sort()
        if not matches:
            raise self.error(
                f"no {what} file matches {rel}",
                node,
                fix=f"correct the pattern (relative to {self.root}) or add matching files",
            )
        self.files.extend(matches)
        return matches

    def mapping_file(self, value: Any, node: Any, what: str) -> Any:
        """A section given as `file://x.yaml` (or .json), loaded; other values unchanged."""
        if is_file_ref(value):
            return load_yaml(self.file_ref(value, node, what))
        return value

    def load(self, cases_elsewhere: tuple[str, ...] | None = None) -> Suite:
        """The suite; with `cases_elsewhere` (the labels of agents given elsewhere), only
        its settings: no cases are read and providers may be absent."""
        raw = load_yaml(self.path)
        if not isinstance(raw, dict):
            raise SuiteError(
                f"the suite must be a YAML mapping, not {kind_name(raw)}",
                file=str(self.path),
                line=line_of(raw) or (None if raw is None else 1),
                fix="start with keys such as prompts:, providers:, tests: (not '- ' items)",
            )
        known = keys.TOP_LEVEL | keys.ref_targets(raw)
        if set(raw) - known:  # keys that only hold YAML anchors are definitions
            known |= keys.definition_keys(read_text(self.path, "the suite"))
        raw = dereference_suite(raw, self.path)
        keys.refuse_unknown(raw, known, "the suite", file=str(self.path), line=1)
        document = suite_document(raw)
        self.env = {**os.environ, **self.config_env(raw)}
        referenced = env_ref_names(raw)
        raw = render_env_refs(raw, self.env)
        from evals.suite.blocks import check_blocks

        check_blocks(raw, str(self.path))
        # promptfoo reads the delimiter before the env: block applies: the process environment
        with csv_delimiter(os.environ, str(self.path)):
            with self.located(line_of(raw, "nunjucksFilters")):
                self.register_filters(raw.get("nunjucksFilters"), raw)
            with self.located(line_of(raw, "prompts")):
                prompts = self.prompts(raw.get("prompts", ["{{prompt}}"]), raw)
            # a prompt file's `{{ env.X }}` reads the environment as the suite file's does
            referenced |= env_ref_names([p.raw for p in prompts if p.path])
            declared = raw.get("providers", raw.get("targets"))
            providers: list[ProviderSpec] = []
            if cases_elsewhere is None or declared is not None:
                providers = self.providers(declared, raw)
            secrets = secret_values(self.env, [p.config for p in providers], referenced)
            # a description may read a secret through {{ env.X }}: masked before a case id is
            # made of its words
            self.masker = Redactor(secrets=secrets)
            self.refuse_secret_labels(providers)
            default_test = self.default_test(raw)
            cases = self.cases(raw, default_test) if cases_elsewhere is None else []
        self.check_scorecard(raw, cases)
        options = self.evaluate_options(raw)
        labels = [p.label for p in providers] or list(cases_elsewhere or ())
        from evals.suite.gates import parse_gates

        gates = parse_gates(
            raw.get("gates"), labels, file=str(self.path), line=line_of(raw, "gates")
        )
        from evals.suite.limits import parse_limits, parse_pass_env

        limits = parse_limits(raw, str(self.path))
        pass_env = parse_pass_env(raw, str(self.path))
        from evals.suite.report_settings import parse_report_settings

        reports = parse_report_settings(raw, str(self.path))
        from evals.suite.environment import parse_environment

        environment = parse_environment(raw, str(self.path), self.file_ref)
        version = raw.get("version")
        suite_files = expand_python_imports(f for f in self.files if f != self.path)
        for case in cases:
            case.fingerprint = case_fingerprint(case, self.root)
        for spec in providers:
            code = self.provider_files.get(spec.label, [])
            spec.fingerprint = agent_fingerprint(spec, self.root, code)
            spec.fingerprint_gap = fingerprint_gap(spec, self.root, code)
        return Suite(
            path=self.path,
            suite_id=str(raw.get("id") or raw.get("name") or self.suite_id_default()),
            description=self.masker.text(str(raw.get("description") or "")),
            version=None if version is None else str(version),
            prompts=prompts,
            providers=providers,
            cases=cases,
            evaluate_options=options,
            gates=gates,
            env={str(k): str(v) for k, v in (raw.get("env") or {}).items()},
            raw=raw,
            files=[self.path, *suite_files],
            fingerprint=fingerprint(suite_files, self.root, document),
            default_test=default_test,
            derived_metrics=self.derived_metrics(raw.get("derivedMetrics"), raw),
            secrets=secrets,
            prompts_fingerprint=fingerprint(
                [Path(p.path) for p in prompts if p.path],
                self.root,
                [(p.id, p.label, p.raw) for p in prompts],
            ),
            limits=limits,
            pass_env=pass_env,
            environment=environment,
            reports=reports,
            notices=self.notices,
            warnings=keys.ignored_keys(raw, self.ignored),
        )

    def config_env(self, raw: dict[str, Any]) -> dict[str, str]:
        """The suite's `env:` block: variable names mapped to single values."""
        value = raw.get("env")
        if value is None:
            return {}
        block = checks.mapping(
            value,
            "env",
            file=str(self.path),
            line=line_of(raw, "env"),
            example="env: {API_BASE: https://example.com, RETRIES: 3}",
        )
        for name, item in block.items():
            if isinstance(item, (dict, list)):
                raise SuiteError(
                    f"env.{name} must be a single value (text, number or boolean), "
                    f"not {kind_name(item)}",
                    file=str(self.path),
                    line=line_of(block, str(name)) or line_of(raw, "env"),
                    fix=f"write env: {{{name}: value}}, one value per variable",
                )
        return {str(k): str(v) for k, v in block.items()}

    def default_test(self, raw: dict[str, Any]) -> dict[str, Any]:
        """`defaultTest:` (inline or `file://`), shaped as a test; empty when absent."""
        line = line_of(raw, "defaultTest")
        with self.located(line):
            value = self.mapping_file(raw.get("defaultTest"), raw, "defaultTest")
        if value is None:
            return {}
        default_test = checks.mapping(
            value,
            "defaultTest",
            file=str(self.path),
            line=line_of(value) or line,
            example="defaultTest: {vars: {language: en}, assert: [{type: is-json}]}",
        )
        self.check_test(default_test, "defaultTest", line)
        return default_test

    def check_test(self, test: dict[str, Any], name: str, line: int | None) -> None:
        """The shape of a test's sections: vars, options and metadata are mappings, assert
        a list, threshold a finite number; `line` is used where the test has none."""
        file = self.file_of(test)
        line = line_of(test) or (line if file == str(self.path) else None)
        keys.refuse_unknown(test, keys.TEST, name, file=file, line=line)
        for key, example in (
            ("vars", "vars: {question: What is 2 + 2?}"),
            ("options", "options: {transform: output.trim()}"),
            ("metadata", "metadata: {priority: P1, tags: [smoke]}"),
        ):
            if test.get(key) is not None:
                checks.mapping(
                    test[key],
                    f"{name}.{key}",
                    file=file,
                    line=line_of(test, key) or line,
                    example=example,
                )
        if test.get("assert") is not None:
            checks.sequence(
                test["assert"],
                f"{name}.assert",
                file=file,
                line=line_of(test, "assert") or line,
                example="assert: [{type: contains, value: Paris}] (a list: each item after '- ')",
            )
        checks.optional_number(
            test.get("threshold"),
            f"{name}.threshold",
            FINITE,
            file=file,
            line=line_of(test, "threshold") or line,
            example="0.8",
        )

    def check_scenarios(self, raw: dict[str, Any], value: Any) -> None:
        """`scenarios:` (`value`, its files read) is a list of {config: [...], tests: [...]}
        whose entries are tests."""
        if value is None:
            return
        file, line = str(self.path), line_of(raw, "scenarios")
        example = "scenarios: [{config: [{vars: {lang: en}}], tests: [{vars: {q: hi}}]}]"
        scenarios = checks.sequence(value, "scenarios", file=file, line=line, example=example)
        for number, scenario in enumerate(scenarios, start=1):
            name = f"scenario #{number}"
            checks.mapping(
                scenario, name, file=file, line=line_of(scenario) or line, example=example
            )
            keys.refuse_unknown(
                scenario, keys.SCENARIO, name, file=file, line=line_of(scenario) or line
            )
            for key in ("config", "tests"):
                if scenario.get(key) is None:
                    continue
                key_line = line_of(scenario, key) or line_of(scenario) or line
                entries = checks.sequence(
                    scenario[key],
                    f"{name}.{key}",
                    file=file,
                    line=key_line,
                    example=f"{key}: [{{vars: {{lang: en}}}}] (a list of mappings)",
                )
                for index, entry in enumerate(entries, start=1):
                    entry_name = f"{name}.{key} #{index}"
                    checks.mapping(
                        entry,
                        entry_name,
                        file=file,
                        line=line_of(entry) or key_line,
                        example=f"{key}: [{{vars: {{lang: en}}}}] (a list of mappings)",
                    )
                    self.check_test(entry, entry_name, key_line)

    def check_scorecard(self, raw: dict[str, Any], cases: list[Case]) -> None:
        """The `scorecard:` and `permissions:` blocks and each case's `metadata.min_scores`."""
        from evals.graders.base import GraderError
        from evals.graders.permissions import parse_permission_policy
        from evals.graders.scorecard import layer_of, parse_min_scores, parse_scorecard

        for key, parse, fix in (
            ("scorecard", lambda v: parse_scorecard(v, raw.get("budget")), "see docs/scorecard.md"),
            ("permissions", parse_permission_policy, "see docs/scorecard.md#permissions"),
        ):
            try:
                parse(raw.get(key))
            except GraderError as exc:
                raise SuiteError(str(exc), str(self.path), line_of(raw, key), fix) from None
        for case in cases:
            if "min_scores" not in case.metadata:
                continue
            node = case.metadata["min_scores"]
            try:
                minimums = parse_min_scores(node)
            except GraderError as exc:
                raise SuiteError(
                    f"case {case.id!r}: {exc}",
                    str(self.path),
                    line_of(node) or case.line,
                    "write min_scores: {final: 0.85, trajectory: 0.90, trace: 0.95}",
                ) from None
            graded = {layer_of(a) for a in case.asserts}
            for layer in minimums:
                if layer not in graded:
                    raise SuiteError(
                        f"case {case.id!r}: min_scores.{layer} has no {layer} assertion to score",
                        str(self.path),
                        line_of(node) or case.line,
                        f"add a {layer} assertion to the case or drop the minimum",
                    )

    def suite_id_default(self) -> str:
        if self.path.stem in {Path(n).stem for n in DEFAULT_SUITE_NAMES}:
            return self.root.resolve().name
        return self.path.stem

    def prompts(self, value: Any, parent: Any) -> list[Prompt]:
        sources = PromptSources(
            self.root,
            str(self.path),
            self.files.append,
            lambda text: self.notice(None, text, line=line_of(parent, "prompts")),
        )
        try:
            out = load_prompts(value, sources)
        except SuiteError as exc:
            if exc.file in (None, str(self.path)):
                raise
            where = f"{exc.file}:{exc.line}" if exc.line else exc.file
            raise SuiteError(
                f"prompt file {where}: {exc.message}",
                str(self.path),
                line_of(parent, "prompts"),
                exc.fix,
            ) from None
        if not out:
            raise SuiteError(
                "prompts is empty",
                file=str(self.path),
                line=line_of(parent, "prompts") or line_of(parent),
                fix="add at least one prompt",
            )
        check_templates(out, str(self.path))
        return out

    def register_filters(self, value: Any, parent: Any) -> None:
        """Make `nunjucksFilters: {name: filter.js | file://filter.py[:fn]}` available.

        A JavaScript file (as in promptfoo) exports the filter function and runs in the
        template sandbox; a Python file's function is called with the filter's arguments.
        The filters of a suite loaded before in this process are forgotten first.
        """
        engine = sys.modules.get("evals.common.jsengine")  # not loaded: nothing registered
        if engine is not None:
            engine.clear_filters()
        if not value:
            return
        if not isinstance(value, dict):
            raise SuiteError(
                "nunjucksFilters must map filter names to JavaScript or Python files",
                file=str(self.path),
                line=line_of(parent, "nunjucksFilters"),
                fix="write nunjucksFilters: {shout: filters/shout.js}",
            )
        from evals.common.files import load_function
        from evals.common.jsengine import JavaScriptError
        from evals.common.jsfiles import common_js
        from evals.common.templating import (
            TemplateError,
            register_filters,
            register_script_filter,
        )

        filters = {}
        for name, ref in value.items():
            text = str(ref)
            what = f"nunjucks filter {name!r}"
            if text.removeprefix("file://").endswith((".js", ".cjs", ".mjs")):
                for path in self.filter_files(text, value, what):
                    try:
                        source = common_js(path.read_text(encoding="utf-8"), path)
                        register_script_filter(str(name), source)
                    except (TemplateError, JavaScriptError) as exc:
                        raise self.error(
                            f"{what} does not load: {exc}",
                            value,
                            fix="export the filter function: "
                            "module.exports = function (value) {...}",
                        ) from None
                continue
            path_text, fn_name = split_ref(text)
            path_text = path_text if path_text.endswith(".py") else path_text + ".py"
            path = self.file_ref("file://" + path_text, value, what)
            filters[str(name)] = load_function(path, fn_name or str(name), "nunjucks filter")
        register_filters(filters)

    def filter_files(self, text: str, node: Any, what: str) -> list[Path]:
        """The files of a JavaScript filter: promptfoo globs the path (relative to the
        suite) and loads every match under the filter's name, so a path that matches
        nothing, `file://` ones included, leaves the filter undefined and the prompts
        using it fail to render (error rows)."""
        matches = [path for path in glob_paths(text, self.root) if path.is_file()]
        if not matches:
            written = " (promptfoo reads this path as written, without removing file://)"
            self.notice(
                node,
                f"{what}: no file matches {text}{written if is_file_ref(text) else ''}: "
                "prompts using the filter fail to render, as in promptfoo",
                "write the path relative to the suite, without file:// (filters/shout.js)",
            )
        self.files.extend(matches)
        return matches

    def derived_metrics(self, value: Any, parent: Any) -> list[tuple[str, str]]:
        """`derivedMetrics: [{name, value}]`, each value a Python expression over named scores."""
        from evals.suite.derived import check_expression

        if not value:
            return []
        if not isinstance(value, list) or not all(
            isinstance(m, dict) and "name" in m and "value" in m for m in value
        ):
            raise SuiteError(
                "derivedMetrics must be a list of {name, value} mappings",
                file=str(self.path),
                line=line_of(value) or line_of(parent, "derivedMetrics"),
                fix="write derivedMetrics: [{name: f1, value: '2 * p * r / (p + r)'}]",
            )
        metrics = []
        for metric in value:
            expression = str(metric["value"])
            problem = check_expression(expression)
            if problem:
                raise self.error(
                    f"derived metric {metric['name']!r} is not a valid expression: {problem}",
                    metric,
                    fix="write an arithmetic expression over metric names and __count",
                )
            metrics.append((str(metric["name"]), expression))
        return metrics

    def providers(self, value: Any, parent: Any) -> list[ProviderSpec]:

        if value is None or value == []:
            key = "targets" if "targets" in parent and "providers" not in parent else "providers"
            raise SuiteError(
                f"{key}: [] lists no provider: nothing to evaluate"
                if value == []
                else "no providers: nothing to evaluate",
                file=str(self.path),
                line=line_of(parent, key),
                fix="add providers: [file://agent.py] (or echo to try the suite)",
            )
        # Files the providers name are the agents' (their fingerprints), not the suite's.
        suite_files = len(self.files)
        items: list[Any] = []
        key_line = line_of(parent, "providers") or line_of(parent, "targets")
        for item in value if isinstance(value, list) else [value]:
            if is_file_ref(item) and item.endswith((".yaml", ".yml", ".json")):
                loaded = load_yaml(self.file_ref(item, parent, "providers"))
                loaded = render_env_refs(loaded, self.env)
                items.extend(loaded if isinstance(loaded, list) else [loaded])
            else:
                items.append(item)
        out: list[ProviderSpec] = []
        for item in items:
            named = len(self.files)
            with self.located(line_of(item) or key_line):
                spec = self.checked_provider(item, parent)
            if spec.id == SIMULATED_USER:
                raise SuiteError(
                    f"{SIMULATED_USER} is not an agent under test: it is a test's provider "
                    "that talks to the agent of each column",
                    file=str(self.path),
                    line=spec.line or key_line,
                    fix="move it to defaultTest.provider (or a test's provider:) and list the "
                    "agents to test under providers:",
                )
            self.provider_files[spec.label] = self.files[named:]
            out.append(spec)
        del self.files[suite_files:]
        seen: set[str] = set()
        for spec in out:
            if spec.label in seen:
                raise SuiteError(
                    f"two providers share the label {spec.label!r}",
                    file=str(self.path),
                    line=spec.line or key_line,
                    fix="give each provider a distinct label: (for example baseline, candidate)",
                )
            seen.add(spec.label)
        return out

    def refuse_secret_labels(self, providers: list[ProviderSpec]) -> None:
        """Refuse an agent whose name (its `label:`, else its id) holds a secret: the name
        identifies the agent in the store, every report, the gates and later comparisons,
        so it cannot be masked in some places and not in others."""
        for spec in providers:
            masked = self.masker.text(spec.label)
            if masked != spec.label:
                raise SuiteError(
                    f"the agent name {masked!r} holds a secret (the value of a secret "
                    "environment variable, a key under a secret config key, or a key's "
                    "shape); an agent's name is written to the store and every report",
                    file=str(self.path),
                    line=spec.line,
                    fix="give the provider a label: without the secret (the secret can stay "
                    "in its id or config, where it is used)",
                )

    def checked_provider(self, item: Any, parent: Any) -> ProviderSpec:
        """A provider entry as a ProviderSpec whose id, files and config are valid."""
        from evals.agents.registry import ProviderLoadError, check_provider
        from evals.common.transforms import OUTPUT_PARAMS, TransformLoadError, check_transform

        spec = self.provider_spec(item, parent)
        node = item if line_of(item) else parent
        try:
            check_provider(spec, self)
        except ProviderLoadError as exc:
            self.deferred(node, exc, "each of its runs is an error row, as in promptfoo")
        except SuiteError as exc:
            exc.file = exc.file or str(self.path)
            exc.line = exc.line or spec.line
            raise
        if spec.transform is not None:
            try:
                with self.at(node, line_of(item, "transform") if line_of(item) else None):
                    check_transform(spec.transform, OUTPUT_PARAMS, self.root, "provider transform")
            except TransformLoadError as exc:
                self.deferred(node, exc, ERROR_ROWS)
        return spec

    def provider_spec(self, item: Any, parent: Any) -> ProviderSpec:
        """A provider entry: an id string, `{id, label, ...}` or `{providerId: {...}}`.

        In the map form the key says which provider to load and an `id` inside names it
        (promptfoo's custom id); the label defaults to that name, as in promptfoo.
        """
        if isinstance(item, str):
            line = line_of(parent, "providers") or line_of(parent, "targets")
            return ProviderSpec(id=item, label=default_label(item), line=line)
        if isinstance(item, dict) and "id" in item:
            return self.provider_options(str(item["id"]), item, item)
        if isinstance(item, dict) and len(item) == 1:
            ((pid, opts),) = item.items()
            return self.provider_options(str(pid), {} if opts is None else opts, item)
        raise SuiteError(
            f"a provider must be a string or a mapping with an id, not {kind_name(item)}",
            file=str(self.path),
            line=line_of(item) or line_of(parent, "providers") or line_of(parent, "targets"),
            fix="write providers: [{id: file://agent.py, label: baseline}]",
        )

    def provider_options(self, pid: str, opts: Any, node: Any) -> ProviderSpec:
        """A ProviderSpec from a provider's options (label, id, config, transform, delay,
        prompts)."""
        file, line = str(self.path), line_of(node)
        opts = checks.mapping(
            opts,
            f"the options of provider {pid!r}",
            file=file,
            line=line,
            example=f"providers: [{{{pid}: {{label: baseline, config: {{temperature: 0}}}}}}]",
        )
        keys.refuse_unknown(opts, keys.PROVIDER, f"provider {pid!r}", file=file, line=line)
        self.ignored += [f"provider {key}" for key in ("env", "inputs") if key in opts]
        config = opts.get("config")
        if config is not None:
            checks.mapping(
                config,
                f"the config of provider {pid!r}",
                file=file,
                line=line_of(opts, "config") or line,
                example="config: {temperature: 0, worker: true}",
            )
        delay = checks.optional_number(
            opts.get("delay"),
            f"the delay of provider {pid!r}",
            NON_NEGATIVE,
            file=file,
            line=line_of(opts, "delay") or line,
            example="500 (milliseconds)",
            key="delay",
        )
        # a provider written as a mapping is named by its id as written (promptfoo's
        # `options.id`); only a bare string names a Python file python:FILE:FUNCTION
        name = str(opts.get("id") or pid)
        prompts = opts.get("prompts")
        return ProviderSpec(
            id=pid,
            label=str(opts.get("label") or name),
            config=dict(config or {}),
            transform=opts.get("transform"),
            delay_ms=delay or 0.0,
            line=line_of(node),
            prompts=None if prompts is None else [str(p) for p in _as_list(prompts) or []],
        )

    def test_items(self, value: Any, parent: Any) -> list[Any]:
        if isinstance(value, dict) and not isinstance(value.get("path"), str):
            raise self.error(
                f"tests must be a list, not {kind_name(value)}",
                value if line_of(value) else parent,
                fix="write tests: as a YAML list, each item starting with '- '",
            )
        if value is not None and not isinstance(value, (list, str, dict)):
            raise SuiteError(
                f"tests must be a list, not {kind_name(value)}",
                file=str(self.path),
                line=line_of(parent, "tests"),
                fix="write tests: as a YAML list, each item starting with '- '",
            )
        # a reference in the list is placed at the list (the suite's own line is 1)
        node = value if line_of(value) else None
        return test_entries(value, self.resolve_files, node, self.root)

    def cases(self, raw: dict[str, Any], default_test: dict[str, Any]) -> list[Case]:
        tests = raw.get("tests")
        if tests == [] and not raw.get("scenarios"):
            raise SuiteError(
                "tests: [] lists no test: nothing to evaluate",
                file=str(self.path),
                line=line_of(raw, "tests"),
                fix="add a test (- vars: {...}), or leave tests: out for one test without vars",
            )
        self.check_vars_paths(tests)
        with self.located(line_of(raw, "tests")):
            items = self.test_items(tests, raw) if tests or not raw.get("scenarios") else []
        for index, test in enumerate(items):
            if not isinstance(test, dict):
                raise SuiteError(
                    f"test #{index + 1} must be a mapping, not {kind_name(test)}",
                    file=str(self.path),
                    line=line_of(tests) or line_of(raw, "tests"),
                    fix="each test is a mapping with vars: and assert:",
                )
            self.check_test(test, f"test #{index + 1}", line_of(raw, "tests"))
        with self.located(line_of(raw, "scenarios")):
            value = raw.get("scenarios")
            node = value if line_of(value) else None
            scenarios = scenario_entries(value, self.resolve_files, node, self.root)
        self.check_scenarios(raw, scenarios)
        merged = expand_tests(
            items, scenarios, default_test, self.root, str(self.path), self.notice
        )
        cases: list[Case] = []
        seen_ids: dict[str, int] = {}
        for index, (test, test_vars) in enumerate(merged):
            case = self.case(index, test, test_vars)
            if case.id in seen_ids:
                seen_ids[case.id] += 1
                case.id = f"{case.id}-{seen_ids[case.id]}"
            else:
                seen_ids[case.id] = 1
            cases.append(case)
        return cases

    def check_vars_paths(self, tests: Any) -> None:
        """Notice of a test whose `vars` names files (a path or a list of paths) that match
        no file: promptfoo then gives the test no vars. A path written with `file://` never
        matches: promptfoo reads it as part of the path."""
        for test in tests if isinstance(tests, list) else []:
            value = test.get("vars") if isinstance(test, dict) else None
            paths = [value] if isinstance(value, str) else value
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                continue
            for path in paths:
                if not is_file_ref(path) and _matches(path, self.root):
                    continue
                written = " (it reads file:// as part of the path)" if is_file_ref(path) else ""
                self.notice(
                    test,
                    f"vars names {path!r}, which matches no file: promptfoo gives the test "
                    f"no vars{written}",
                    "write the test's vars as a mapping, or name a YAML or JSON file of vars "
                    "without file:// (vars: vars.yaml)",
                )

    def check_priority(self, metadata: Any, test: Any) -> None:
        """A `metadata.priority` written as a priority level must be one the gates know.

        Free-form values (promptfoo metadata such as `priority: high`) are kept as they are;
        `P9` or `p0` look like levels but no gate would read them, so they are refused.
        """
        if not isinstance(metadata, dict):
            return
        value = metadata.get("priority")
        if not isinstance(value, str) or not re.fullmatch(r"[Pp]\d+", value.strip()):
            return
        if value.strip() in PRIORITIES:
            return
        raise SuiteError(
            f"metadata.priority {value!r} is not a priority level the gates read",
            file=self.file_of(test),
            line=line_of(metadata, "priority") or line_of(metadata) or line_of(test),
            fix=f"write priority: one of {', '.join(PRIORITIES)} (P0 cases block on their own)",
        )

    def case(self, index: int, test: dict[str, Any], test_vars: dict[str, Any]) -> Case:
        """A case from a test already merged with defaultTest, for one vars combination."""
        self.check_priority(test.get("metadata"), test)
        # the id, tags and metadata, like the description, are written everywhere and may
        # hold what the suite read through {{ env.X }}
        metadata = self.masker.scrub(dict(test.get("metadata") or {}))
        description = self.masker.text(str(test.get("description") or ""))
        case_id = str(metadata.get("id") or slug(description) or f"case-{index + 1}")
        threshold = test.get("threshold")
        options = dict(test.get("options") or {})
        self.check_case_transforms(options, test)
        return Case(
            index=index,
            id=case_id,
            description=description or case_id,
            vars=test_vars,
            asserts=[self.assertion(a, test) for a in test.get("assert") or []],
            threshold=None if threshold is None else float(threshold),
            metadata=metadata,
            options=options,
            providers=_as_list(test.get("providers")),
            prompts=_as_list(test.get("prompts")),
            line=line_of(test),
            provider_output=test.get("providerOutput"),
            scoring_function=self.scoring_function(test),
            provider=None if test.get("provider") is None else self.test_provider(test),
            test=self.masked_test(promptfoo_test(test, test_vars)),
        )

    def masked_test(self, test: dict[str, Any]) -> dict[str, Any]:
        """The promptfoo test of a case with its description and metadata masked (the
        reports' rows and the graders' `test` show them)."""
        for key in ("description", "metadata"):
            if key in test:
                test[key] = self.masker.scrub(test[key])
        return test

    def test_provider(self, test: dict[str, Any]) -> ProviderSpec:
        """A test's own `provider:` (an id or a provider mapping), called for its runs."""
        value = test["provider"]
        if not isinstance(value, (str, dict)):
            raise self.error(
                f"a test's provider must be a provider id or mapping, not {kind_name(value)}",
                test,
                fix="write provider: {id: file://agent.py, label: other}",
            )
        return self.checked_provider(value, test)

    def scoring_function(self, test: dict[str, Any]) -> str | None:
        """The test's `assertScoringFunction`: a `file://x.py[:fn]` or `file://x.js[:fn]`
        reference, checked here. A JavaScript file is loaded now, as promptfoo loads it
        before the run (a missing file or one exporting no function stops it); a Python
        file is called when a test is graded, so a missing one fails those tests."""
        from evals.common.jsfiles import JS_FILES

        ref = test.get("assertScoringFunction")
        if ref is None:
            return None
        if is_file_ref(ref) and split_ref(ref)[0].endswith(JS_FILES):
            self.javascript_scoring_function(ref, test)
            return ref
        if not (is_file_ref(ref) and is_python_ref(ref)):
            raise self.error(
                f"assertScoringFunction must be a file://x.py:fn or file://x.js:fn reference, "
                f"not {ref!r}",
                test,
                fix="write assertScoringFunction: file://scoring.py:score (a Python or "
                "JavaScript function taking the named scores and a context)",
            )
        self.optional_file(ref, test, "assertScoringFunction", "its tests fail with the error")
        return ref

    def javascript_scoring_function(self, ref: str, test: dict[str, Any]) -> None:
        """Load a JavaScript scoring function as promptfoo does before the run."""
        from evals.common.jsengine import JavaScriptError
        from evals.common.jsfiles import ModuleFileMissing, call_scoring, error_text

        rel, name = split_ref(ref)
        path = (self.root / rel).resolve()
        try:
            call_scoring(path, name, None)
        except (JavaScriptError, ModuleFileMissing) as exc:
            raise self.error(
                f"assertScoringFunction {rel} does not load: {error_text(exc)}",
                test,
                fix="export the function: module.exports = (namedScores, context) => "
                "({pass, score, reason})",
            ) from None
        self.files.append(path)

    def check_case_transforms(self, options: dict[str, Any], test: Any) -> None:
        source = options.get("transform") or options.get("postprocess")
        if source is None:
            return
        from evals.common.transforms import OUTPUT_PARAMS, TransformLoadError, check_transform

        try:
            with self.at(test, line_of(options, "transform") or line_of(options)):
                check_transform(source, OUTPUT_PARAMS, self.root, "options.transform")
        except TransformLoadError as exc:
            self.deferred(test, exc, ERROR_ROWS)

    def assertion(self, item: Any, test: Any) -> Assertion:
        if not isinstance(item, dict) or "type" not in item:
            raise self.error(
                "each assertion needs a type",
                item if isinstance(item, dict) else test,
                fix="write - type: contains\n         value: expected text",
            )
        kind = str(item["type"])
        where = self.file_of(item)
        known = keys.assertion_keys(kind)
        keys.refuse_unknown(item, known, f"the {kind!r} assertion", file=where, line=line_of(item))
        hint = unknown_type_hint(kind, file=where, line=line_of(item))
        if hint is not None:
            self.notice(item, f"unknown assertion type {kind!r} ({hint}): {ERROR_ROWS}", hint)
        value = item.get("value")
        try:
            check_assertion_value(kind, value, file=where, line=line_of(item))
        except SuiteError as exc:
            if kind.removeprefix("not-") not in ("is-json", "contains-json"):
                raise
            self.deferred(item, exc, "its JSON outputs are error rows, as in promptfoo")
        if kind == "budget" and isinstance(value, dict) and not _templated(value):
            from evals.suite.blocks import check_budget

            check_budget(value, "value", where, line_of(item, "value") or line_of(item))
        if kind == "assert-set":
            children = checks.sequence(
                item.get("assert"),
                "the assert of an assert-set",
                file=where,
                line=line_of(item, "assert") or line_of(item),
                example="assert: [{type: contains, value: a}, {type: contains, value: b}]",
            )
            for child in children:
                self.assertion(child, item)
        if is_file_ref(value):
            self.optional_file(value, item, "assertion", "its checks fail or error as in promptfoo")
        if item.get("transform") is not None:
            from evals.common.transforms import OUTPUT_PARAMS, TransformLoadError, check_transform

            try:
                with self.at(item, line_of(item, "transform")):
                    check_transform(
                        item["transform"], OUTPUT_PARAMS, self.root, "assertion transform"
                    )
            except TransformLoadError as exc:
                self.deferred(item, exc, ERROR_ROWS)
        file, line = where, line_of(item)
        weight = checks.number(
            item.get("weight", 1.0),
            f"the weight of the {kind!r} assertion",
            NON_NEGATIVE,
            file=file,
            line=line_of(item, "weight") or line,
            example="2 (0 counts the assertion for nothing)",
            key="weight",
        )
        threshold = checks.optional_number(
            item.get("threshold"),
            f"the threshold of the {kind!r} assertion",
            FINITE,
            file=file,
            line=line_of(item, "threshold") or line,
            example="0.8",
            key="threshold",
        )
        config = item.get("config")
        if config is not None:
            checks.mapping(
                config,
                f"the config of the {kind!r} assertion",
                file=file,
                line=line_of(item, "config") or line,
                example="config: {model: gpt-4o-mini}",
            )
        return Assertion(
            type=kind,
            value=value,
            threshold=threshold,
            weight=weight,
            metric=item.get("metric"),
            provider=item.get("provider"),
            transform=item.get("transform"),
            config=dict(config or {}),
            raw=dict(item),
            line=line_of(item),
            turn=self.assertion_turn(item, kind),
        )

    def assertion_turn(self, item: dict[str, Any], kind: str) -> int | str | None:
        """An assertion's `turn:` (harness extension): a whole number other than 0, `last`
        or `each`; group assertions compare whole runs and take none."""
        value = item.get("turn")
        if value is None:
            return None
        from evals.graders.registry import GROUP_TYPES

        valid = value in TURN_WORDS or (
            isinstance(value, int) and not isinstance(value, bool) and value != 0
        )
        if not valid or kind in GROUP_TYPES:
            raise self.error(
                f"the turn of the {kind!r} assertion must be a turn number, last or each, "
                f"not {value!r}"
                if not valid
                else f"a {kind} assertion grades whole runs and takes no turn",
                item,
                fix="write turn: 2 (the answer to the second user message), turn: -1, "
                "turn: last or turn: each",
            )
        return value

    def evaluate_options(self, raw: dict[str, Any]) -> EvaluateOptions:
        """`evaluateOptions:` repeats, concurrency, timeout and delay, each range-checked."""
        value = raw.get("evaluateOptions")
        block = checks.mapping(
            {} if value is None else value,
            "evaluateOptions",
            file=str(self.path),
            line=line_of(raw, "evaluateOptions"),
            example="evaluateOptions: {repeat: 3, maxConcurrency: 4, timeoutMs: 30000}",
        )
        keys.refuse_unknown(
            block,
            keys.EVALUATE_OPTIONS,
            "evaluateOptions",
            file=str(self.path),
            line=line_of(raw, "evaluateOptions"),
        )

        def read(key: str, bounds: Bounds, example: str) -> float | None:
            return checks.optional_number(
                block.get(key),
                f"evaluateOptions.{key}",
                bounds,
                file=str(self.path),
                line=line_of(block, key) or line_of(raw, "evaluateOptions"),
                example=example,
            )

        repeat = read("repeat", COUNT, "3")
        concurrency = read("maxConcurrency", COUNT, "4")
        delay = read("delay", NON_NEGATIVE, "1000 (milliseconds between calls)")
        return EvaluateOptions(
            repeat=1 if repeat is None else int(repeat),
            max_concurrency=4 if concurrency is None else int(concurrency),
            timeout_ms=read("timeoutMs", NON_NEGATIVE, "30000 (milliseconds; 0: no timeout)"),
            delay_ms=delay or 0.0,
        )


_UNSET_WHEN_NONE = ("threshold", "prompts", "providers", "provider", "assertScoringFunction")


def promptfoo_test(merged: dict[str, Any], test_vars: dict[str, Any]) -> dict[str, Any]:
    """The test promptfoo grades a run of with `merged` (a test with defaultTest merged in)
    and one of its vars combinations: its keys in promptfoo's order, those promptfoo sets
    to undefined when neither the test nor defaultTest has them left out."""
    test = {k: v for k, v in merged.items() if v is not None or k not in _UNSET_WHEN_NONE}
    test["vars"] = test_vars
    return test


def _matches(pattern: str, root: Path) -> bool:
    """Whether a path or glob (relative to `root`) names at least one file."""
    try:
        return any(path.is_file() for path in glob_paths(pattern, root))
    except ValueError:  # a pattern pathlib cannot read (`a**b`)
        return False


def _templated(value: dict[Any, Any]) -> bool:
    """True when a mapping's values use templates: they are known only when graded."""
    return any(isinstance(v, str) and ("{{" in v or "{%" in v) for v in value.values())


def _as_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def slug(text: str) -> str:
    """A short stable id from a description: lowercase words joined by dashes."""
    words = re.findall(r"[\w]+", text.lower())
    return "-".join(words)[:80]


def load_suite(target: str | Path) -> Suite:
    """Load and validate a suite file (or a directory holding one).

    Raises SuiteError naming the file, line and fix for anything that would make a run
    fail for reasons other than the agent itself.
    """
    return _Loader(resolve_suite_path(target).resolve()).load()


def load_suite_settings(target: str | Path, agent_labels: tuple[str, ...] = ()) -> Suite:
    """A suite file's settings for cases written elsewhere (the pytest plugin's tests).

    Everything but `tests:` is read and validated as `load_suite` does: id, providers,
    evaluateOptions, gates and the blocks graders read (tools, policy, budget, prices).
    `providers:` may be absent; the gates then name `agent_labels`, the agents the
    caller was given. The returned suite has no cases.
    """
    return _Loader(resolve_suite_path(target).resolve()).load(cases_elsewhere=agent_labels)
