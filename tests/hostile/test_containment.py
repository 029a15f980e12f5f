"""A dataset cannot make the harness read the host: every reference it can make is contained.

A dataset (a `tests:` file: JSON, JSONL, YAML, CSV) is data. Whatever it names (a
`$ref` to a key of another file, a whole test pulled in by `$ref`, a `file://` var, a
glob), the file must resolve, symbolic links followed, inside the suite's folder or the
dataset's own; otherwise the suite does not load (exit 2) and the error names the dataset
and the line of the reference. Loops of symbolic links are load errors too, and globs
never walk through links to folders. The suite file itself keeps its trust: its own
references may read any file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals.model.errors import SuiteError
from evals.suite import load_suite

SECRET = "db-password-9f8e7d6c5b4a"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A suite folder with a secret file next to it, outside."""
    (tmp_path / "outside.yaml").write_text(f"db_password: {SECRET}\n", encoding="utf-8")
    (tmp_path / "outside.json").write_text(json.dumps({"db_password": SECRET}), encoding="utf-8")
    suite = tmp_path / "suite"
    (suite / "data").mkdir(parents=True)
    return suite


def _suite(folder: Path, tests: str = "file://data/tests.json") -> Path:
    path = folder / "promptfooconfig.yaml"
    path.write_text(f"prompts: ['Q: {{{{ q }}}}']\nproviders: [echo]\ntests: {tests}\n")
    return path


def _refused(path: Path) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert SECRET not in str(info.value)
    return info.value


def _dataset(folder: Path, name: str, text: str) -> Path:
    target = folder / "data" / name
    target.write_text(text, encoding="utf-8")
    return target


def test_a_json_dataset_ref_outside_is_refused_naming_its_line(project: Path) -> None:
    data = _dataset(
        project,
        "tests.json",
        '[\n  {"vars": {"q": "ok"}},\n'
        '  {"vars": {"q": {"$ref": "../../outside.yaml#/db_password"}}}\n]',
    )
    error = _refused(_suite(project))
    assert error.file == str(data)
    assert error.line == 3
    assert "outside the suite's folder" in error.message


def test_a_yaml_dataset_ref_by_absolute_path_is_refused(project: Path) -> None:
    outside = project.parent / "outside.json"
    data = _dataset(
        project,
        "tests.yaml",
        f"- vars: {{q: ok}}\n- vars:\n    q: {{$ref: '{outside}#/db_password'}}\n",
    )
    error = _refused(_suite(project, "file://data/tests.yaml"))
    assert (error.file, error.line) == (str(data), 3)


def test_a_whole_test_pulled_in_by_ref_is_refused(project: Path) -> None:
    (project.parent / "test.yaml").write_text(f"vars: {{q: {SECRET}}}\n", encoding="utf-8")
    data = _dataset(project, "tests.yaml", "- $ref: ../../test.yaml\n")
    error = _refused(_suite(project, "file://data/tests.yaml"))
    assert (error.file, error.line) == (str(data), 1)


def test_a_jsonl_dataset_ref_outside_is_refused(project: Path) -> None:
    row = {"vars": {"q": {"$ref": "../../outside.json#/db_password"}}}
    data = _dataset(project, "tests.jsonl", '{"vars": {"q": "a"}}\n' + json.dumps(row) + "\n")
    error = _refused(_suite(project, "file://data/tests.jsonl"))
    assert error.file == str(data)


def test_a_ref_through_a_file_inside_to_one_outside_is_refused(project: Path) -> None:
    _dataset(project, "shared.yaml", "pw: {$ref: '../../outside.yaml#/db_password'}\n")
    _dataset(project, "tests.yaml", "- vars: {q: {$ref: 'shared.yaml#/pw'}}\n")
    error = _refused(_suite(project, "file://data/tests.yaml"))
    assert error.file == str(project / "data" / "shared.yaml")


def test_a_symlink_inside_pointing_outside_is_refused(project: Path) -> None:
    (project / "data" / "link.yaml").symlink_to(project.parent / "outside.yaml")
    _dataset(project, "tests.yaml", "- vars: {q: {$ref: 'link.yaml#/db_password'}}\n")
    error = _refused(_suite(project, "file://data/tests.yaml"))
    assert "outside the suite's folder" in error.message


def test_refs_inside_the_suite_or_the_dataset_folder_load(project: Path) -> None:
    (project / "common.yaml").write_text("greeting: hello\n", encoding="utf-8")
    _dataset(project, "local.yaml", "name: world\n")
    _dataset(
        project,
        "tests.yaml",
        "- vars: {q: {$ref: '../common.yaml#/greeting'}}\n"
        "- vars: {q: {$ref: 'local.yaml#/name'}}\n",
    )
    suite = load_suite(_suite(project, "file://data/tests.yaml"))
    assert [case.vars["q"] for case in suite.cases] == ["hello", "world"]


def test_the_suite_files_own_refs_keep_its_trust(project: Path) -> None:
    path = project / "promptfooconfig.yaml"
    path.write_text(
        "prompts: ['Q: {{ q }}']\nproviders: [echo]\n"
        "tests: [{vars: {q: {$ref: '../outside.yaml#/db_password'}}}]\n",
        encoding="utf-8",
    )
    assert load_suite(path).cases[0].vars["q"] == SECRET


def test_a_file_var_on_a_symlink_loop_names_the_row(project: Path) -> None:
    (project / "data" / "a.txt").symlink_to(project / "data" / "b.txt")
    (project / "data" / "b.txt").symlink_to(project / "data" / "a.txt")
    data = _dataset(project, "tests.csv", "q\nfine\nfile://data/a.txt\n")
    error = _refused(_suite(project, "file://data/tests.csv"))
    assert error.file == str(data)
    assert "loop of symbolic links" in error.message


def test_a_ref_on_a_symlink_loop_is_a_load_error(project: Path) -> None:
    (project / "data" / "a.yaml").symlink_to(project / "data" / "b.yaml")
    (project / "data" / "b.yaml").symlink_to(project / "data" / "a.yaml")
    _dataset(project, "tests.yaml", "- vars: {q: {$ref: 'a.yaml#/x'}}\n")
    error = _refused(_suite(project, "file://data/tests.yaml"))
    assert "loop of symbolic links" in error.message


@pytest.mark.parametrize("pattern", ["file://../**/*.yaml", "file:///**/*.yaml", "file:///etc/*"])
def test_a_dataset_glob_starting_outside_is_refused_before_walking(
    project: Path, pattern: str
) -> None:
    data = _dataset(project, "tests.csv", f"q\nfine\n{pattern}\n")
    started = time.monotonic()
    error = _refused(_suite(project, "file://data/tests.csv"))
    assert time.monotonic() - started < 5
    assert error.file == str(data)
    assert "glob" in error.message


def test_a_csv_file_var_through_a_symlink_outside_is_refused(project: Path) -> None:
    (project / "data" / "secret.yaml").symlink_to(project.parent / "outside.yaml")
    data = _dataset(project, "tests.csv", "q\nfile://data/secret.yaml\n")
    error = _refused(_suite(project, "file://data/tests.csv"))
    assert error.file == str(data)


def test_globs_do_not_walk_through_links_to_folders(project: Path) -> None:
    docs = project / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("A", encoding="utf-8")
    for name in ("up1", "up2", "up3"):
        (docs / name).symlink_to(docs)
    path = project / "promptfooconfig.yaml"
    path.write_text(
        "prompts: ['{{ q }}']\nproviders: [echo]\ntests: [{vars: {q: 'file://docs/**/*.txt'}}]\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    suite = load_suite(path)
    assert time.monotonic() - started < 5
    assert [case.vars["q"] for case in suite.cases] == ["file://docs/a.txt"]


def test_evals_run_refuses_the_dataset_with_exit_2(project: Path) -> None:
    _dataset(
        project, "tests.json", '[{"vars": {"q": {"$ref": "../../outside.yaml#/db_password"}}}]'
    )
    suite = _suite(project)
    done = subprocess.run(
        [sys.executable, "-m", "evals", "run", str(suite), "--no-store"],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert done.returncode == 2
    assert "tests.json:1" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
