"""The test tiers as a project's pytest run sees them: the bare command runs the fast tier,
named files and `-m` choose otherwise, and a test needing something missing is skipped
with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import tiers

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

TESTS = """
import pytest

def test_fast():
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.browser
def test_in_a_browser():
    pass

@pytest.mark.postgres
def test_on_postgres():
    pass

@pytest.mark.extra("never-installed")
def test_with_an_extra():
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project whose conftest is this repository's, with one test of each kind."""
    pytester.makeconftest(
        "from tests import tiers\n"
        "from tests.conftest import pytest_configure, pytest_collection_modifyitems, "
        "pytest_report_header\n"
        "tiers.EXTRA_MODULES['never-installed'] = ('a_module.nobody.installs',)\n"
    )
    pytester.makeini(
        "[pytest]\nmarkers =\n  slow\n  browser\n  hostile\n  cluster\n  promptfoo\n"
        "  postgres\n  extra\n"
    )
    pytester.makepyfile(test_kinds=TESTS)
    monkeypatch.setitem(tiers.EXTRA_MODULES, "never-installed", ())
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for variable in ("EVALS_TEST_POSTGRES_URL", "EVALS_TEST_CHROMIUM"):
        monkeypatch.delenv(variable, raising=False)
    return pytester


def test_the_bare_command_runs_the_fast_tier_and_says_so(project: pytest.Pytester) -> None:
    result = project.runpytest("-rs", "-p", "no:xdist")
    result.assert_outcomes(passed=1, skipped=2, deselected=2)
    result.stdout.fnmatch_lines(["tiers: the fast tier; the slower tiers (slow, browser, *"])
    output = result.stdout.str()
    assert "needs a PostgreSQL server: set EVALS_TEST_POSTGRES_URL" in output
    assert (
        "needs the [never-installed] extra (a_module.nobody.installs not installed): "
        "pip install -e '.[never-installed]'"
    ) in output


def test_a_named_file_runs_every_tier_of_it(project: pytest.Pytester) -> None:
    result = project.runpytest("test_kinds.py", "-rs", "-p", "no:xdist")
    result.assert_outcomes(passed=2, skipped=3)
    result.stdout.fnmatch_lines(["*needs headless Chromium: set EVALS_TEST_CHROMIUM*"])


def test_markers_choose_the_slower_tiers(project: pytest.Pytester) -> None:
    result = project.runpytest("-m", tiers.SLOWER_TIERS_EXPRESSION, "-p", "no:xdist")
    result.assert_outcomes(passed=1, skipped=1, deselected=3)


def test_a_long_test_of_the_fast_tier_is_named_at_the_end(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_long="import time\n\ndef test_long():\n    time.sleep(0.3)\n")
    monkeypatch.setattr(tiers, "SLOW_HINT_SECONDS", 0.2)
    result = project.runpytest("-p", "no:xdist")
    result.stdout.fnmatch_lines(
        [
            "1 test(s) of the fast tier took more than 0 s here; *",
            "  0.* s  test_long.py::test_long",
        ]
    )
    named = project.runpytest("test_long.py", "-p", "no:xdist")
    assert "of the fast tier took" not in named.stdout.str()


def test_a_missing_parent_package_is_a_missing_module() -> None:
    assert not tiers.importable("a_module.nobody.installs")
    assert tiers.importable("json.decoder")


@pytest.mark.slow
def test_xdist_workers_select_the_same_tier(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2)
    assert "different tests were collected" not in result.stdout.str().lower()


def test_test_modules_outside_packages_have_names_of_their_own():
    """pytest imports a test module outside a package by its file name alone: two such files
    of one name stop the whole run at collection."""
    seen: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def test_no_test_folder_takes_the_name_of_an_extras_module():
    """`tests/` is on the import path while the tests run, so a folder there named like a
    module an extra installs (`agents` of the OpenAI Agents SDK) is imported in its place
    where the extra is missing, and that extra's tests error instead of skipping."""
    extras = {module for modules in tiers.EXTRA_MODULES.values() for module in modules}
    folders = {path.name for path in (ROOT / "tests").iterdir() if path.is_dir()}
    assert folders & extras == set()
