"""The dashboard server's start-up: the pages it runs first and the caches they fill."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import event
from streamlit.testing.v1 import AppTest

from evals.dashboard import data, server

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


def test_views_are_the_pages_app_registers() -> None:
    registered = set(re.findall(r'st\.Page\(\s*"(views/[a-z_]+\.py)"', APP.read_text()))
    assert registered == {"views/changes.py", *server.VIEWS}


@pytest.mark.slow
def test_prefill_leaves_nothing_for_a_first_visit_to_read(
    demo_store, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = demo_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "local")
    st.cache_data.clear()
    st.cache_resource.clear()
    statements: list[str] = []
    engine = data._store(url).engine
    event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))

    assert server.prefill(APP) == []
    read_while_starting = len(statements)
    statements.clear()
    for view in (None, *server.VIEWS):
        visit = AppTest.from_file(str(APP), default_timeout=60)
        if view is not None:
            visit.switch_page(view)
        visit.run()
        assert not visit.exception, [e.value for e in visit.exception]
        assert not visit.error, [e.value for e in visit.error]

    assert read_while_starting > 0
    assert statements == []


def test_evals_dashboard_passes_the_serving_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit import config

    from evals.cli import build_parser
    from evals.team import dashboard_start
    from evals.team.serving import STREAMLIT_OPTIONS

    started: list[list[str]] = []
    monkeypatch.setattr(
        dashboard_start.os, "execve", lambda path, command, env: started.append(command)
    )
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["dashboard", "--store", f"sqlite:///{tmp_path}/s.db"])
    args.handler(args)

    [command] = started
    flags = dict(zip(STREAMLIT_OPTIONS[::2], STREAMLIT_OPTIONS[1::2], strict=True))
    assert all(key.removeprefix("--") in config._config_options_template for key in flags)
    passed = dict(zip(command[5::2], command[6::2], strict=False))
    assert {key: passed[key] for key in flags} == flags
    assert passed["--browser.gatherUsageStats"] == "false"
    assert passed["--server.fileWatcherType"] == "none"


@pytest.mark.slow
def test_prefill_gives_up_on_a_page_that_outlasts_its_time(
    demo_store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.runtime import Runtime

    url, _ = demo_store
    monkeypatch.setenv("EVALS_STORE_URL", url)
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "local")
    monkeypatch.setattr(server, "PREFILL_TIMEOUT_S", 0.0001)
    st.cache_data.clear()
    st.cache_resource.clear()

    assert server.prefill(APP) == ["landing page"]
    assert not Runtime.exists()


def test_page_shell_names_the_server_address_before_streamlit_starts(tmp_path: Path) -> None:
    from streamlit import file_util

    static = Path(file_util.get_static_dir())
    into = tmp_path / "shell"
    into.mkdir()
    settings = server.shell_settings("/team/dash/")
    server.shell_directory(static, settings, into)

    shell = (into / "index.html").read_text(encoding="utf-8")
    original = (static / "index.html").read_text(encoding="utf-8")
    assert shell.replace(settings, "", 1) == original
    assert shell.index(settings) < shell.index('<script type="module"')
    assert 'window.location.origin+"/team/dash"' in settings
    assert sorted(p.name for p in into.iterdir()) == sorted(p.name for p in static.iterdir())
    assert (into / "static").resolve() == (static / "static").resolve()


def test_page_shell_settings_cannot_close_their_script() -> None:
    assert "</script" not in server.shell_settings("</script><script>alert(1)")[:-9]


def test_a_shell_without_module_script_is_served_as_it_is(tmp_path: Path) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<html><script src='./app.js'></script></html>")
    into = tmp_path / "shell"
    into.mkdir()

    assert server.shell_directory(static, server.shell_settings(""), into) == static
    assert list(into.iterdir()) == []
