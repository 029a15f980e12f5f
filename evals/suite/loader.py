"""Turn a promptfoo-style YAML config into a validated `Suite`, or a SuiteError.

Everything that can be checked without running an agent is checked here: YAML syntax,
the shape of each section, assertion types, provider files and ids, and the `gates:`
block. A suite that loads is a suite that can run.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path
from typing import Any

from evals.common.files import is_file_ref, is_python_ref, ref_body, split_ref
from evals.model.errors import SuiteError
from evals.model.suite import Assertion, Case, EvaluateOptions, Prompt, ProviderSpec, Suite
from evals.suite.fingerprint import (
    agent_fingerprint,
    case_fingerprint,
    expand_python_imports,
    fingerprint,
    suite_document,
)
from evals.suite.prompts import load_prompts
from evals.suite.test_cases import check_templates, expand_tests
from evals.suite.tests_files import test_entries
from evals.suite.vars import env_ref_names, render_env_refs
from evals.suite.yaml_lines import file_of, kind_name, line_of, load_yaml
from evals.tracing.redact import secret_values

DEFAULT_SUITE_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "suite.yaml", "evals.yaml")
PRIORITIES = ("P0", "P1", "P2", "P3")
"""The priority levels of `metadata.priority` the gates read (P0 cases block on their own)."""
KNOWN_TOP_LEVEL = {
    "description",
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "evaluateOptions",
    "version",
    "gates",
    "env",
    "scenarios",
    "outputPath",
    "sharing",
    "nunjucksFilters",
    "derivedMetrics",
    "tags",
    "metadata",
    "extensions",
    "writeLatestResults",
    "commandLineOptions",
    "redteam",
    "tools",
    "policy",
    "budget",
    "scorecard",
    "permissions",
    "prices",
    "trace",
    "id",
    "name",
    "limits",
    "pass_env",
}


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

    def error(self, message: str, node: Any = None, fix: str | None = None) -> SuiteError:
        return SuiteError(message, file=self.file_of(node), line=line_of(node), fix=fix)

    def file_of(self, node: Any) -> str:
        """The file a node was read from: a dataset's for its tests, else the suite."""
        return file_of(node) or str(self.path)

    def file_ref(self, ref: str, node: Any, what: str) -> Path:
        """Resolve a `file://` reference relative to the suite and record it."""
        rel, _ = split_ref(ref)
        target = (self.root / rel).resolve()
        if not target.exists():
            raise self.error(
                f"{what} file not found: {rel}",
                node,
                fix=f"create {target} or correct the path (relative to {self.root})",
            )
        self.files.append(target)
        return target

    def resolve_files(self, ref: str, node: Any, what: str) -> list[Path]:
        """Resolve a `file://` reference that may be a glob; each match is recorded."""
        rel = ref_body(ref)
        if not glob.has_magic(rel):
            return [self.file_ref(ref, node, what)]
        matches = sorted(Path(p).resolve() for p in glob.glob(str(self.root / rel), recursive=True))
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
            raise self.error(
                "the suite must be a YAML mapping", fix="start with keys such as prompts:, tests:"
            )
        document = suite_document(raw)
        config_env = {str(k): str(v) for k, v in (raw.get("env") or {}).items()}
        self.env = {**os.environ, **config_env}
        referenced = env_ref_names(raw)
        raw = render_env_refs(raw, self.env)
        self.register_filters(raw.get("nunjucksFilters"), raw)
        prompts = self.prompts(raw.get("prompts", ["{{prompt}}"]), raw)
        declared = raw.get("providers", raw.get("targets"))
        providers: list[ProviderSpec] = []
        if cases_elsewhere is None or declared is not None:
            providers = self.providers(declared, raw)
        default_test = self.mapping_file(raw.get("defaultTest"), raw, "defaultTest") or {}
        if not isinstance(default_test, dict):
            raise self.error("defaultTest must be a mapping", raw)
        cases = self.cases(raw, default_test) if cases_elsewhere is None else []
        self.check_scorecard(raw, cases)
        options = self.evaluate_options(raw.get("evaluateOptions") or {})
        labels = [p.label for p in providers] or list(cases_elsewhere or ())
        from evals.suite.gates import parse_gates

        gates = parse_gates(raw.get("gates"), labels, file=str(self.path), line=line_of(raw))
        from evals.suite.limits import parse_limits, parse_pass_env

        limits = parse_limits(raw, str(self.path))
        pass_env = parse_pass_env(raw, str(self.path))
        version = raw.get("version")
        suite_files = expand_python_imports(f for f in self.files if f != self.path)
        for case in cases:
            case.fingerprint = case_fingerprint(case, self.root)
        for spec in providers:
            spec.fingerprint = agent_fingerprint(
                spec, self.root, self.provider_files.get(spec.label, [])
            )
        return Suite(
            path=self.path,
            suite_id=str(raw.get("id") or raw.get("name") or self.suite_id_default()),
            description=str(raw.get("description") or ""),
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
            secrets=secret_values(self.env, [p.config for p in providers], referenced),
            prompts_fingerprint=fingerprint(
                [Path(p.path) for p in prompts if p.path],
                self.root,
                [(p.id, p.label, p.raw) for p in prompts],
            ),
            limits=limits,
            pass_env=pass_env,
        )

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
        try:
            out = load_prompts(value, self.resolve_files, self.root, str(self.path))
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
            raise self.error("prompts is empty", parent, fix="add at least one prompt")
        check_templates(out, str(self.path))
        return out

    def register_filters(self, value: Any, parent: Any) -> None:
        """Make `nunjucksFilters: {name: filter.js | file://filter.py[:fn]}` available.

        A JavaScript file (as in promptfoo) exports the filter function and runs in the
        template sandbox; a Python file's function is called with the filter's arguments.
        """
        if not value:
            return
        if not isinstance(value, dict):
            raise self.error(
                "nunjucksFilters must map filter names to JavaScript or Python files",
                parent,
                fix="write nunjucksFilters: {shout: filters/shout.js}",
            )
        from evals.common.files import load_function
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
                path = self.file_ref(text, value, what)
                try:
                    register_script_filter(str(name), path.read_text(encoding="utf-8"))
                except TemplateError as exc:
                    raise self.error(
                        f"{what} does not load: {exc}",
                        value,
                        fix="export the filter function: module.exports = function (value) {...}",
                    ) from None
                continue
            path_text, fn_name = split_ref(text)
            path_text = path_text if path_text.endswith(".py") else path_text + ".py"
            path = self.file_ref("file://" + path_text, value, what)
            filters[str(name)] = load_function(path, fn_name or str(name), "nunjucks filter")
        register_filters(filters)

    def derived_metrics(self, value: Any, parent: Any) -> list[tuple[str, str]]:
        """`derivedMetrics: [{name, value}]`, each value a Python expression over named scores."""
        from evals.suite.derived import check_expression

        if not value:
            return []
        if not isinstance(value, list) or not all(
            isinstance(m, dict) and "name" in m and "value" in m for m in value
        ):
            raise self.error(
                "derivedMetrics must be a list of {name, value} mappings",
                value if line_of(value) else parent,
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
            spec = self.checked_provider(item, parent)
            self.provider_files[spec.label] = self.files[named:]
            out.append(spec)
        del self.files[suite_files:]
        labels = [p.label for p in out]
        dupes = sorted({label for label in labels if labels.count(label) > 1})
        if dupes:
            raise self.error(
                f"two providers share the label {dupes[0]!r}",
                parent,
                fix="give each provider a distinct label: (for example baseline, candidate)",
            )
        return out

    def checked_provider(self, item: Any, parent: Any) -> ProviderSpec:
        """A provider entry as a ProviderSpec whose id, files and config are valid."""
        from evals.agents.registry import check_provider

        spec = self.provider_spec(item, parent)
        try:
            check_provider(spec, self)
        except SuiteError as exc:
            exc.file = exc.file or str(self.path)
            exc.line = exc.line or spec.line
            raise
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
            return self.provider_options(str(pid), opts or {}, item)
        raise self.error(
            "a provider must be a string or a mapping with an id",
            item if isinstance(item, dict) else parent,
            fix="write providers: [{id: file://agent.py, label: baseline}]",
        )

    def provider_options(self, pid: str, opts: dict[str, Any], node: Any) -> ProviderSpec:
        """A ProviderSpec from a provider's options (label, id, config, transform, delay,
        prompts)."""
        name = str(opts.get("id") or pid)
        prompts = opts.get("prompts")
        return ProviderSpec(
            id=pid,
            label=str(opts.get("label") or (name if name != pid else default_label(pid))),
            config=dict(opts.get("config") or {}),
            transform=opts.get("transform"),
            delay_ms=float(opts.get("delay") or 0),
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
            raise self.error(
                f"tests must be a list, not {kind_name(value)}",
                parent,
                fix="write tests: as a YAML list, each item starting with '- '",
            )
        return test_entries(value, self.resolve_files, parent)

    def cases(self, raw: dict[str, Any], default_test: dict[str, Any]) -> list[Case]:
        tests = raw.get("tests")
        if tests == [] and not raw.get("scenarios"):
            raise SuiteError(
                "tests: [] lists no test: nothing to evaluate",
                file=str(self.path),
                line=line_of(raw, "tests"),
                fix="add a test (- vars: {...}), or leave tests: out for one test without vars",
            )
        items = self.test_items(tests, raw) if tests or not raw.get("scenarios") else []
        for index, test in enumerate(items):
            if not isinstance(test, dict):
                raise self.error(
                    f"test #{index + 1} must be a mapping, not {kind_name(test)}",
                    raw,
                    fix="each test is a mapping with vars: and assert:",
                )
        merged = expand_tests(items, raw.get("scenarios"), default_test, self.root, str(self.path))
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
        metadata = dict(test.get("metadata") or {})
        self.check_priority(test.get("metadata"), test)
        description = str(test.get("description") or "")
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
        )

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
        """The test's `assertScoringFunction`: a `file://x.py[:fn]` reference, checked here."""
        ref = test.get("assertScoringFunction")
        if ref is None:
            return None
        if not (is_file_ref(ref) and is_python_ref(ref)):
            raise self.error(
                f"assertScoringFunction must be a file://x.py:fn reference, not {ref!r}",
                test,
                fix="write assertScoringFunction: file://scoring.py:score (a Python function "
                "taking named_scores and context)",
            )
        self.file_ref(ref, test, "assertScoringFunction")
        return ref

    def check_case_transforms(self, options: dict[str, Any], test: Any) -> None:
        from evals.common.transforms import OUTPUT_PARAMS, check_transform

        source = options.get("transform") or options.get("postprocess")
        if source is None:
            return
        try:
            check_transform(source, OUTPUT_PARAMS, self.root, "options.transform")
        except SuiteError as exc:
            exc.file = exc.file or self.file_of(test)
            exc.line = exc.line or line_of(test)
            raise

    def assertion(self, item: Any, test: Any) -> Assertion:
        from evals.graders.registry import check_assertion_type, check_assertion_value

        if not isinstance(item, dict) or "type" not in item:
            raise self.error(
                "each assertion needs a type",
                item if isinstance(item, dict) else test,
                fix="write - type: contains\n         value: expected text",
            )
        kind = str(item["type"])
        where = self.file_of(item)
        check_assertion_type(kind, file=where, line=line_of(item))
        value = item.get("value")
        check_assertion_value(kind, value, file=where, line=line_of(item))
        if is_file_ref(value):
            self.file_ref(value, item, "assertion")
        if item.get("transform") is not None:
            from evals.common.transforms import OUTPUT_PARAMS, check_transform

            try:
                check_transform(item["transform"], OUTPUT_PARAMS, self.root, "assertion transform")
            except SuiteError as exc:
                exc.file, exc.line = exc.file or where, exc.line or line_of(item)
                raise
        return Assertion(
            type=kind,
            value=value,
            threshold=None if item.get("threshold") is None else float(item["threshold"]),
            weight=float(item.get("weight", 1.0)),
            metric=item.get("metric"),
            provider=item.get("provider"),
            transform=item.get("transform"),
            config=dict(item.get("config") or {}),
            raw=dict(item),
            line=line_of(item),
        )

    def evaluate_options(self, value: Any) -> EvaluateOptions:
        if not isinstance(value, dict):
            raise self.error("evaluateOptions must be a mapping", value)
        try:
            return EvaluateOptions(
                repeat=int(value.get("repeat", 1)),
                max_concurrency=int(value.get("maxConcurrency", 4)),
                timeout_ms=None if value.get("timeoutMs") is None else float(value["timeoutMs"]),
                delay_ms=float(value.get("delay", 0)),
            )
        except (TypeError, ValueError) as exc:
            raise self.error(
                f"evaluateOptions has a non-numeric value: {exc}",
                value,
                fix="repeat, maxConcurrency, timeoutMs and delay are numbers",
            ) from None


def default_label(provider_id: str) -> str:
    """A provider's name without a label: promptfoo names a Python file provider
    `python:<path>:<function>` (`default` when the id names no function)."""
    if provider_id.startswith("file://"):
        from evals.common.files import split_ref

        path, function = split_ref(provider_id)
        if path.endswith(".py"):
            return f"python:{path}:{function or 'default'}"
    return provider_id


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
