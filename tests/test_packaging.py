"""One import namespace: the distribution installs `evals` and nothing else at the top.

The folders graders/, reports/ and dashboard/ sit next to evals/ in the source tree and
import as `evals.graders`, `evals.reports` and `evals.dashboard` in every setting: from a
built wheel installed elsewhere (pyproject's package-dir), from the editable install, and
from a checkout (the links evals/graders, evals/reports and evals/dashboard).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import evals
import evals.dashboard
import evals.graders
import evals.reports

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"evals": "evals", "graders": "evals/graders", "reports": "evals/reports"}
FOLDERS["dashboard"] = "evals/dashboard"
SUITE = ROOT / "cases" / "trading-research"


def _source_files() -> set[str]:
    """Every file of the source folders, as the wheel should name it (the links in evals/
    are not followed: their folders are listed on their own)."""
    expected = set()
    for folder, target in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            inside_link = any((ROOT / p).is_symlink() for p in path.relative_to(ROOT).parents)
            if path.is_file() and path.suffix != ".pyc" and not inside_link:
                expected.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    return expected


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The distribution's wheel, built from a clean copy of this checkout's sources."""
    if importlib.util.find_spec("pip") is None:
        pytest.skip("needs pip in this venv (`python3 -m venv` makes one with pip)")
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(
            ROOT / folder, source / folder, symlinks=True, ignore=shutil.ignore_patterns("*.pyc")
        )
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("evals_harness-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed (without dependencies) into a directory of its own."""
    target = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run(
        [*pip, "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


def _python(code: str, cwd: Path, pythonpath: Path | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    answer = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert answer.returncode == 0, answer.stderr
    return answer.stdout


WHERE = (
    "import sys, evals.graders.registry, evals.reports.writers, evals.dashboard\n"
    "for name in ('evals', 'evals.graders', 'evals.reports', 'evals.dashboard'):\n"
    "    print(sys.modules[name].__file__)\n"
    "print(sorted({m.split('.')[0] for m in sys.modules} & {'graders', 'reports', 'dashboard'}))\n"
)


@pytest.mark.slow
def test_the_wheel_holds_one_top_level_package_with_every_source_file(wheel: Path) -> None:
    listed = zipfile.ZipFile(wheel).namelist()
    names = set(listed)
    tops = {name.split("/")[0] for name in names}
    (info,) = (top for top in tops if top.endswith(".dist-info"))

    assert tops - {info} == {"evals"}
    assert zipfile.ZipFile(wheel).read(f"{info}/top_level.txt").decode().split() == ["evals"]
    missing = _source_files() - names
    assert not missing, f"files the wheel does not install: {sorted(missing)[:10]}"
    assert len(listed) == len(names), "the wheel holds a file twice"
    assert "evals/py.typed" in names


def test_the_installed_distribution_exposes_only_evals() -> None:
    distribution = importlib.metadata.distribution("evals-harness")

    assert (distribution.read_text("top_level.txt") or "").split() == ["evals"]
    entry_points = {(e.group, e.name): e.value for e in distribution.entry_points}
    assert entry_points == {
        ("console_scripts", "evals"): "evals.cli:console",
        ("pytest11", "evals"): "evals.testing.plugin",
    }


def test_a_checkout_links_the_folders_into_the_evals_namespace() -> None:
    for folder in ("graders", "reports", "dashboard"):
        link = ROOT / "evals" / folder
        assert link.is_symlink() and os.readlink(link) == f"../{folder}"
        assert not (ROOT / folder).is_symlink()
    assert Path(evals.graders.__file__).resolve() == ROOT / "graders" / "__init__.py"
    assert Path(evals.reports.__file__).resolve() == ROOT / "reports" / "__init__.py"
    assert Path(evals.dashboard.__file__).resolve() == ROOT / "dashboard" / "__init__.py"
    for folder in ("graders", "reports", "dashboard"):  # (tests/dashboard may be `dashboard`)
        loaded = sys.modules.get(folder)
        assert loaded is None or Path(loaded.__file__ or "").parent != ROOT / folder


@pytest.mark.slow
def test_an_installed_wheel_imports_from_its_own_folders(installed: Path, tmp_path: Path) -> None:
    lines = _python(WHERE, tmp_path, installed).splitlines()

    for line, name in zip(lines, ("", "graders/", "reports/", "dashboard/"), strict=False):
        assert line == str(installed / "evals" / name / "__init__.py").replace("//", "/")
    assert lines[-1] == "[]"


@pytest.mark.slow
def test_a_checkout_wins_over_an_installed_wheel_with_the_same_folders(installed: Path) -> None:
    lines = _python(WHERE, ROOT, installed).splitlines()

    assert [str(Path(line).resolve()) for line in lines[:4]] == [
        str(ROOT / "evals" / "__init__.py"),
        str(ROOT / "graders" / "__init__.py"),
        str(ROOT / "reports" / "__init__.py"),
        str(ROOT / "dashboard" / "__init__.py"),
    ]
    assert lines[-1] == "[]"


@pytest.mark.slow
def test_an_installed_wheel_runs_a_suite_from_another_directory(
    installed: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(installed)
    command = [sys.executable, "-m", "evals", "run", str(SUITE), "--repeat", "1"]
    answer = subprocess.run(
        [*command, "--no-progress", "-o", "report.md"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )

    assert answer.returncode in (0, 1), answer.stderr
    assert "Gate verdict" in answer.stdout
    assert (tmp_path / "report.md").read_text(encoding="utf-8").startswith("#")
    assert (tmp_path / ".evals").is_dir()


PYTEST_PROJECT = {
    "agent.py": "def agent(prompt, options, context):\n    return {'output': prompt}\n",
    "suite.yaml": (
        "providers: [file://agent.py:agent]\ngates: {min_pass_rate: 0.2, max_error_rate: 0.5}\n"
    ),
    "pytest.ini": "[pytest]\nevals_suite = suite.yaml\n",
    "test_agent.py": (
        "import os, pytest, evals\n"
        "@pytest.mark.evals(repeat=2)\n"
        "@pytest.mark.parametrize('word', ['a', 'b', 'c', 'd'])\n"
        "def test_echo(evals_agent, word):\n"
        "    assert evals.__file__.startswith(os.environ['PYTHONPATH'])\n"
        "    assert evals_agent(word).text == word\n"
    ),
}


@pytest.mark.slow
def test_an_installed_wheel_brings_the_pytest_plugin(installed: Path, tmp_path: Path) -> None:
    for name, text in PYTEST_PROJECT.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(installed)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--evals",
        "--evals-no-store",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:langsmith_plugin",  # (langchain's plugin: seconds of import, no use here)
    ]

    answer = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)

    assert answer.returncode == 0, answer.stdout[-3000:]
    assert "8 passed" in answer.stdout
    assert "Gate verdict: PASS" in answer.stdout


@pytest.mark.slow
def test_an_installed_wheel_renders_templates_with_its_bundled_nunjucks(
    installed: Path, tmp_path: Path
) -> None:
    code = (
        "from importlib import resources\n"
        "from evals.common.templating import render\n"
        "print(render('{{ 2.5 | round }}-{{ x | upper }}', {'x': 'a'}))\n"
        "js = resources.files('evals.common').joinpath('js')\n"
        "print(sorted(p.name for p in js.iterdir()))\n"
    )
    lines = _python(code, tmp_path, installed).splitlines()

    assert lines[0] == "3-A"
    # every file the source tree bundles (the engine, its libraries, their licences) ships
    bundled = sorted(p.name for p in (ROOT / "evals" / "common" / "js").iterdir() if p.is_file())
    assert {"nunjucks.min.js", "nunjucks.LICENSE", "NOTICE"} <= set(bundled)
    assert lines[1] == str(bundled)


NEIGHBOURS = os.environ.get("EVALS_TEST_PYPI_NEIGHBOURS")
needs_neighbours = pytest.mark.skipif(
    not NEIGHBOURS,
    reason="EVALS_TEST_PYPI_NEIGHBOURS names a folder holding PyPI's graders, reports and "
    "dashboard distributions (.ci/run downloads them)",
)


@pytest.mark.slow
@needs_neighbours
def test_installs_next_to_pypis_graders_reports_and_dashboard(wheel: Path, tmp_path: Path) -> None:
    assert NEIGHBOURS is not None
    downloads = sorted(Path(NEIGHBOURS).iterdir())
    names = {p.name.split("-")[0] for p in downloads}
    assert names >= {"graders", "reports", "dashboard"}, names
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    subprocess.run([*pip, *map(str, [*downloads, wheel])], check=True, capture_output=True)
    # Their packages are found where pip put them (importing them needs their own
    # dependencies); ours import in full from the same directory.
    code = (
        "import importlib.util, sys\n"
        "import evals.graders.registry, evals.reports.writers, evals.dashboard\n"
        "for name in ('graders', 'reports', 'dashboard'):\n"
        "    print(name, importlib.util.find_spec(name).origin)\n"
        "    print('evals.' + name, sys.modules['evals.' + name].__file__)\n"
    )

    lines = dict(line.split(" ", 1) for line in _python(code, tmp_path, target).splitlines())

    for name in ("graders", "reports", "dashboard"):
        theirs, ours = Path(lines[name]), Path(lines[f"evals.{name}"])
        assert theirs.is_relative_to(target / name), theirs
        assert ours.is_relative_to(target / "evals" / name), ours
