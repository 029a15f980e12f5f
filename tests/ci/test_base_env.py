"""Main's side's import path, and the project's installed code in the agent fingerprint."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evals.ci.base_env import mapped_import_path, requirement_files
from evals.model.suite import ProviderSpec
from evals.suite.fingerprint import agent_code, agent_fingerprint, environment_document


def test_the_import_path_moves_the_repositorys_folders_into_the_merge_base(
    tmp_path: Path,
) -> None:
    head, base = tmp_path / "head", tmp_path / "base"
    for folder in ("src", "evals-suite", "tools/lib", ".venv/lib/python3.11/site-packages"):
        (head / folder).mkdir(parents=True)
    harness = tmp_path / "elsewhere" / "evals"
    harness.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    entries = [
        str(head / "src"),
        str(head / "evals-suite"),
        str(head / "src"),  # twice: kept once
        str(tmp_path / "outside"),
        str(head / ".venv/lib/python3.11/site-packages"),
        "__editable__.calcbot-0.1.0.finder.__path_hook__",
        str(head / "tools/lib"),
    ]

    mapped = mapped_import_path(head, base, entries, harness)

    assert mapped == [str(base / "src"), str(base / "evals-suite"), str(base / "tools/lib")]


def test_the_harnesss_own_folder_is_never_moved(tmp_path: Path) -> None:
    head = tmp_path / "head"
    (head / "evals").mkdir(parents=True)
    (head / "src").mkdir()
    mapped = mapped_import_path(
        head, tmp_path / "base", [str(head), str(head / "src")], head / "evals"
    )
    assert mapped == [str(tmp_path / "base" / "src")]


def test_requirements_beside_the_project_and_the_suite_are_found(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "requirements.txt").write_text("httpx\n")
    (tmp_path / "suite" / "requirements.txt").write_text("openai\n")
    assert requirement_files(tmp_path, Path("suite")) == [
        tmp_path / "requirements.txt",
        tmp_path / "suite" / "requirements.txt",
    ]
    assert requirement_files(tmp_path / "suite", Path(".")) == [
        tmp_path / "suite" / "requirements.txt"
    ]


def _installed_copy(site: Path, project: Path, module: str, code: str) -> None:
    """`module` installed into the folder `site` as `pip install PROJECT` leaves it."""
    package = site / module
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(code, encoding="utf-8")
    info = site / f"{module}-0.1.0.dist-info"
    info.mkdir()
    (info / "top_level.txt").write_text(f"{module}\n", encoding="utf-8")
    url = {"url": project.resolve().as_uri(), "dir_info": {}}
    (info / "direct_url.json").write_text(json.dumps(url), encoding="utf-8")


@pytest.mark.parametrize("where", ["first", "second"])
def test_a_package_installed_from_the_project_is_the_agents_code_wherever_installed(
    tmp_path: Path, where: str
) -> None:
    module = f"evals_probe_calc_{where}"
    project = tmp_path / "project"
    suite = project / "suite"
    suite.mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "requirements.txt").write_text("httpx==0.27\n", encoding="utf-8")
    (suite / "agent.py").write_text(f"from {module} import answer\n", encoding="utf-8")
    # The same package installed into two environments at different places: the
    # fingerprint names its files by their place in site-packages.
    sites = [tmp_path / "env-a" / "site-packages", tmp_path / "zz-env-b" / "site-packages"]
    spec = ProviderSpec("file://agent.py", "calc")
    fingerprints = []
    for site in sites:
        _installed_copy(site, project, module, "def answer(q):\n    return q\n")
        sys.path.insert(0, str(site))
        try:
            from evals.suite import fingerprint

            fingerprint._ORIGINS.pop(module, None)
            code = agent_code(spec, suite)
            fingerprints.append(agent_fingerprint(spec, suite))
        finally:
            sys.path.remove(str(site))
            fingerprint._ORIGINS.pop(module, None)
        assert site / module / "__init__.py" in code
    assert fingerprints[0] == fingerprints[1]
    # An installed package of another origin is not the project's code.
    other = tmp_path / "env-c" / "site-packages"
    _installed_copy(other, tmp_path / "somewhere-else", module, "def answer(q):\n    return q\n")
    sys.path.insert(0, str(other))
    try:
        fingerprint._ORIGINS.pop(module, None)
        assert other / module / "__init__.py" not in agent_code(spec, suite)
    finally:
        sys.path.remove(str(other))
        fingerprint._ORIGINS.pop(module, None)


def test_the_projects_dependency_files_are_part_of_an_agent_with_code(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent.py").write_text("def call_api(p, o, c):\n    return {'output': p}\n")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\ndependencies = ["openai==1.0"]\n[tool.ruff]\nline-length = 100\n'
    )
    spec = ProviderSpec("file://agent.py", "agent")
    before = agent_fingerprint(spec, tmp_path)

    pyproject.write_text(pyproject.read_text().replace("line-length = 100", "line-length = 90"))
    assert agent_fingerprint(spec, tmp_path) == before  # configuring a linter changes nothing

    pyproject.write_text(pyproject.read_text().replace("openai==1.0", "openai==2.0"))
    bumped = agent_fingerprint(spec, tmp_path)
    assert bumped != before
    (tmp_path / "uv.lock").write_text("version = 1\n")
    assert agent_fingerprint(spec, tmp_path) != bumped
    assert set(environment_document(tmp_path, [tmp_path])) == {"pyproject.toml", "uv.lock"}
    # A provider without code of its own runs with the harness's packages, not these.
    remote = ProviderSpec("https://agent.example/api", "remote")
    unbumped = agent_fingerprint(remote, tmp_path)
    pyproject.write_text(pyproject.read_text().replace("openai==2.0", "openai==3.0"))
    assert agent_fingerprint(remote, tmp_path) == unbumped
    assert agent_fingerprint(spec, tmp_path) != bumped
