"""The plugin loads in every pytest session of a project that installs evals: loading it
must import almost nothing, and a session without --evals must run as it would without it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

LOADED = [
    "evals",
    "evals.common",
    "evals.common.stubs",
    "evals.reports",
    "evals.reports.formats",
    "evals.testing",
    "evals.testing.generated",
    "evals.testing.plugin",
]
pytest_plugins = ["pytester"]


def test_loading_the_plugin_imports_no_other_module_of_evals_nor_its_dependencies():
    code = (
        "import json, sys, evals.testing.plugin, evals.testing.generated\n"
        "print(json.dumps(sorted(sys.modules)))"
    )

    answer = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    loaded = json.loads(answer.stdout)
    assert [m for m in loaded if m == "evals" or m.startswith("evals.")] == LOADED
    heavy = {"numpy", "pandas", "scipy", "sqlalchemy", "rich", "hypothesis", "openai"}
    assert heavy.isdisjoint(m.split(".")[0] for m in loaded)


@pytest.mark.slow
def test_a_session_without_evals_runs_marked_tests_once_and_loads_nothing_more(pytester):
    pytester.makepyfile(
        test_session=textwrap.dedent(f"""
            import sys
            import pytest

            def test_plain(request):
                manager = request.config.pluginmanager
                assert manager.has_plugin("evals")
                assert not manager.has_plugin("evals-evaluation")
                loaded = sorted(m for m in sys.modules if m == "evals" or m.startswith("evals."))
                assert loaded == {LOADED!r}

            @pytest.mark.evals(repeat=5, tags=["x"])
            def test_marked():
                pass
        """)
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=2)
    assert result.ret == 0
