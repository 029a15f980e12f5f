"""Turn a promptfoo-style YAML config into a validated `Suite`, or a SuiteError.

Everything that can be checked without running an agent is checked here: YAML syntax,
the shape of each section, assertion types, provider files and ids, and the `gates:`
block. A suite that loads is a suite that can run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evals.errors import SuiteError
from evals.suite.fingerprint import expand_python_imports, fingerprint
from evals.suite.model import Assertion, Case, EvaluateOptions, Prompt, ProviderSpec, Suite
from evals.suite.yaml_lines import kind_name, line_of, load_yaml

DEFAULT_SUITE_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "suite.yaml", "evals.yaml")
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
    "prices",
    "trace",
    "id",
    "name",
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

    def error(self, message: str, node: Any = None, fix: str | None = None) -> SuiteError:
        return SuiteError(message, file=str(self.path), line=line_of(node), fix=fix)

    def file_ref(self, ref: str, node: Any, what: str) -> Path:
        """Resolve a `file://` reference relative to the suite and record it."""
        rel = ref[len("file://") :] if ref.startswith("file://") else ref
        rel = rel.split(":", 1)[0] if re.search(r"\.py:\w", rel) else rel
        target = (self.root / rel).resolve()
        if not target.exists():
            raise self.error(
                f"{what} file not found: {rel}",
                node,
                fix=f"create {target} or correct the path (relative to {self.root})",
            )
        self.files.append(target)
        return target

    def load(self) -> Suite:
        raw = load_yaml(self.path)
        if not isinstance(raw, dict):
            raise self.error(
                "the suite must be a YAML mapping", fix="start with keys such as prompts:, tests:"
            )
        prompts = self.prompts(raw.get("prompts", ["{{prompt}}"]), raw)
        providers = self.providers(raw.get("providers", raw.get("targets")), raw)
        default_test = raw.get("defaultTest") or {}
        if not isinstance(default_test, dict):
            raise self.error("defaultTest must be a mapping", raw)
        cases = self.cases(raw.get("tests"), default_test, raw)
        options = self.evaluate_options(raw.get("evaluateOptions") or {})
        labels = [p.label for p in providers]
        from evals.gates.config import parse_gates

        gates = parse_gates(raw.get("gates"), labels, file=str(self.path), line=line_of(raw))
        version = raw.get("version")
        files = expand_python_imports(self.files)
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
            files=files,
            fingerprint=fingerprint(files, self.root),
            default_test=default_test,
        )

    def suite_id_default(self) -> str:
        if self.path.stem in {Path(n).stem for n in DEFAULT_SUITE_NAMES}:
            return self.root.resolve().name
        return self.path.stem

    def prompts(self, value: Any, parent: Any) -> list[Prompt]:
        items = value if isinstance(value, list) else [value]
        out: list[Prompt] = []
        for item in items:
            if isinstance(item, str) and item.startswith("file://"):
                out.extend(self.prompt_file(item, parent))
            elif isinstance(item, str):
                out.append(Prompt(id=item, label=item, raw=item))
            elif isinstance(item, dict) and ("raw" in item or "id" in item):
                raw_text = item.get("raw", item.get("id"))
                if isinstance(raw_text, str) and raw_text.startswith("file://"):
                    loaded = self.prompt_file(raw_text, item)
                    label = item.get("label")
                    out.extend(
                        Prompt(id=p.id, label=label or p.label, raw=p.raw, path=p.path)
                        for p in loaded
                    )
                else:
                    label = str(item.get("label") or raw_text)
                    out.append(Prompt(id=str(item.get("id") or label), label=label, raw=raw_text))
            else:
                raise self.error(
                    "each prompt must be a string or a mapping with raw/label",
                    item if isinstance(item, dict) else parent,
                    fix="write prompts: ['Answer: {{question}}']",
                )
        if not out:
            raise self.error("prompts is empty", parent, fix="add at least one prompt")
        return out

    def prompt_file(self, ref: str, node: Any) -> list[Prompt]:
        path = self.file_ref(ref, node, "prompt")
        text = path.read_text(encoding="utf-8")
        rel = ref[len("file://") :]
        if path.suffix == ".json":
            return [Prompt(id=ref, label=f"{rel}: {text[:40]}", raw=text, path=str(path))]
        parts = [p.strip() for p in re.split(r"^---$", text, flags=re.M)] if text else [text]
        return [
            Prompt(id=f"{ref}#{i}" if len(parts) > 1 else ref, label=f"{rel}: {p}", raw=p)
            for i, p in enumerate(parts)
            if p or len(parts) == 1
        ]

    def providers(self, value: Any, parent: Any) -> list[ProviderSpec]:
        from evals.agents.registry import check_provider

        if value is None:
            raise self.error(
                "no providers: nothing to evaluate",
                parent,
                fix="add providers: [file://agent.py] (or echo to try the suite)",
            )
        items = value if isinstance(value, list) else [value]
        out: list[ProviderSpec] = []
        for item in items:
            spec = self.provider_spec(item, parent)
            try:
                check_provider(spec, self)
            except SuiteError as exc:
                exc.file = exc.file or str(self.path)
                exc.line = exc.line or spec.line
                raise
            out.append(spec)
        labels = [p.label for p in out]
        dupes = sorted({label for label in labels if labels.count(label) > 1})
        if dupes:
            raise self.error(
                f"two providers share the label {dupes[0]!r}",
                parent,
                fix="give each provider a distinct label: (for example baseline, candidate)",
            )
        return out

    def provider_spec(self, item: Any, parent: Any) -> ProviderSpec:
        if isinstance(item, str):
            return ProviderSpec(id=item, label=item, line=line_of(parent))
        if isinstance(item, dict) and "id" in item:
            config = item.get("config") or {}
            return ProviderSpec(
                id=str(item["id"]),
                label=str(item.get("label") or item["id"]),
                config=dict(config),
                transform=item.get("transform"),
                delay_ms=float(item.get("delay") or 0),
                line=line_of(item),
            )
        if isinstance(item, dict) and len(item) == 1:
            ((pid, opts),) = item.items()
            opts = opts or {}
            return ProviderSpec(
                id=str(pid),
                label=str(opts.get("label") or opts.get("id") or pid),
                config=dict(opts.get("config") or {}),
                transform=opts.get("transform"),
                delay_ms=float(opts.get("delay") or 0),
                line=line_of(item),
            )
        raise self.error(
            "a provider must be a string or a mapping with an id",
            item if isinstance(item, dict) else parent,
            fix="write providers: [{id: file://agent.py, label: baseline}]",
        )

    def test_items(self, value: Any, parent: Any) -> list[Any]:
        if value is None:
            return [{}]
        if isinstance(value, str) and value.startswith("file://"):
            value = [value]
        if not isinstance(value, list):
            raise self.error(
                f"tests must be a list, not {kind_name(value)}",
                value if line_of(value) else parent,
                fix="write tests: as a YAML list, each item starting with '- '",
            )
        items: list[Any] = []
        for entry in value:
            if isinstance(entry, str) and entry.startswith("file://"):
                path = self.file_ref(entry, parent, "tests")
                loaded = load_yaml(path)
                if not isinstance(loaded, list):
                    raise SuiteError(
                        "a tests file must hold a YAML list of tests",
                        file=str(path),
                        fix="make the top level a list ('- vars: ...')",
                    )
                items.extend(loaded)
            else:
                items.append(entry)
        return items

    def cases(self, value: Any, default_test: dict[str, Any], parent: Any) -> list[Case]:
        cases: list[Case] = []
        seen_ids: dict[str, int] = {}
        for index, test in enumerate(self.test_items(value, parent)):
            if not isinstance(test, dict):
                raise self.error(
                    f"test #{index + 1} must be a mapping, not {kind_name(test)}",
                    parent,
                    fix="each test is a mapping with vars: and assert:",
                )
            case = self.case(index, test, default_test)
            if case.id in seen_ids:
                seen_ids[case.id] += 1
                case.id = f"{case.id}-{seen_ids[case.id]}"
            else:
                seen_ids[case.id] = 1
            cases.append(case)
        return cases

    def case(self, index: int, test: dict[str, Any], default_test: dict[str, Any]) -> Case:
        metadata = {**(default_test.get("metadata") or {}), **(test.get("metadata") or {})}
        description = str(test.get("description") or "")
        case_id = str(metadata.get("id") or slug(description) or f"case-{index + 1}")
        assert_list = list(default_test.get("assert") or []) + list(test.get("assert") or [])
        vars_ = {**(default_test.get("vars") or {}), **(test.get("vars") or {})}
        threshold = test.get("threshold", default_test.get("threshold"))
        priority = metadata.get("priority")
        if priority is not None and str(priority) not in {"P0", "P1", "P2", "P3"}:
            raise self.error(
                f"metadata.priority must be P0, P1, P2 or P3, not {priority!r}",
                test,
                fix="use P0 for cases whose regression must block a release",
            )
        return Case(
            index=index,
            id=case_id,
            description=description or case_id,
            vars=vars_,
            asserts=[self.assertion(a, test) for a in assert_list],
            threshold=None if threshold is None else float(threshold),
            metadata=metadata,
            options={**(default_test.get("options") or {}), **(test.get("options") or {})},
            providers=_as_list(test.get("providers") or test.get("provider")),
            prompts=_as_list(test.get("prompts")),
            line=line_of(test),
        )

    def assertion(self, item: Any, test: Any) -> Assertion:
        from graders.registry import check_assertion_type

        if not isinstance(item, dict) or "type" not in item:
            raise self.error(
                "each assertion needs a type",
                item if isinstance(item, dict) else test,
                fix="write - type: contains\n         value: expected text",
            )
        kind = str(item["type"])
        check_assertion_type(kind, file=str(self.path), line=line_of(item))
        value = item.get("value")
        if isinstance(value, str) and value.startswith("file://"):
            self.file_ref(value, item, "assertion")
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
