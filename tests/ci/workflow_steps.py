"""Running a workflow's shell steps locally, exactly as the YAML writes them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


def load_workflow(name: str) -> dict[str, Any]:
    """A workflow file as a mapping (PyYAML reads the `on:` key as True; unused here)."""
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def step(job: dict[str, Any], step_id: str) -> str:
    """The shell script of the step with `id: step_id`."""
    for entry in job["steps"]:
        if entry.get("id") == step_id:
            return entry["run"]
    raise KeyError(step_id)


def literal_env(block: dict[str, Any]) -> dict[str, str]:
    """The entries of an `env:` block as a job sees them when no variable is set: literal
    values, and the quoted default of `${{ vars.X || 'default' }}`."""
    env = {}
    for key, value in block.items():
        text = str(value)
        default = re.fullmatch(r"\$\{\{ vars\.\w+ \|\| '([^']*)' \}\}", text)
        if default:
            env[key] = default.group(1)
        elif "${{" not in text:
            env[key] = text
    return env


def fake_gh(bin_dir: Path, store: Path | list[Path] | None, base_ref: str = "main") -> None:
    """A `gh` that lists finished nightly runs, newest first, whose `evals-store` artifacts
    are `store` (one path or several, newest first; `results.db` in the artifact), or no
    run when `store` is None; `gh api .../pulls/N` answers the pull request's base."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    stores = [] if store is None else [store] if isinstance(store, Path) else list(store)
    listing = " ".join(str(4242 - i) for i in range(len(stores)))
    cases = "".join(
        f'      {4242 - i}) mkdir -p "$dir" && cp "{path}" "$dir/results.db" ;;\n'
        for i, path in enumerate(stores)
    )
    script = f"""#!/usr/bin/env bash
case "$1 $2" in
  "run list") for id in {listing}; do echo "$id"; done ;;
  "run download")
    run="$3"; dir=""; while [ $# -gt 0 ]; do [ "$1" = --dir ] && dir="$2"; shift; done
    case "$run" in
{cases}      *) exit 1 ;;
    esac ;;
  "api repos/"*) echo "{base_ref}" ;;
  *) exit 2 ;;
esac
"""
    gh = bin_dir / "gh"
    gh.write_text(script, encoding="utf-8")
    gh.chmod(0o755)


def run_step(
    script: str, cwd: Path, env: dict[str, str], bin_dir: Path
) -> subprocess.CompletedProcess[str]:
    """Run a step's script as GitHub's default bash shell does (`bash -eo pipefail`)."""
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]])
    full_env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "EVALS_"))},
        **env,
        "PATH": path,
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


GITHUB_SCRIPT_HARNESS = """
const fs = require('fs');
const [stateFile, scriptFile, callsFile] = process.argv.slice(2);
const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
const calls = [];
const github = {
  paginate: async (method, params) => (await method(params)).data,
  rest: {
    issues: {
      listComments: async (params) => {
        calls.push(['list', params]);
        return { data: state.comments };
      },
      updateComment: async (params) => { calls.push(['update', params]); },
      createComment: async (params) => { calls.push(['create', params]); },
    },
    pulls: {
      listCommits: async (params) => {
        calls.push(['commits', params]);
        return { data: (state.commits[String(params.pull_number)] || []).map((sha) => ({ sha })) };
      },
    },
  },
};
const core = {
  setOutput: (name, value) => calls.push(['output', name, value]),
  setFailed: (message) => calls.push(['failed', message]),
};
const context = { repo: { owner: 'team', repo: 'agent' }, payload: state.payload };
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
const script = fs.readFileSync(scriptFile, 'utf8');
new AsyncFunction('github', 'context', 'core', 'require', script)(github, context, core, require)
  .then(() => fs.writeFileSync(callsFile, JSON.stringify(calls)))
  .catch((error) => { console.error(error); process.exit(1); });
"""


def run_github_script(
    script: str,
    cwd: Path,
    env: dict[str, str],
    comments: list[dict[str, Any]],
    payload: dict[str, Any] | None = None,
    commits: dict[str, list[str]] | None = None,
) -> list[list[Any]]:
    """Run an actions/github-script step's script with node against a recorded GitHub API.

    `comments` are the pull request's existing comments, `commits` each pull request's
    commits by number, `payload` the event (`context.payload`); returns the API calls
    made, `core.setOutput` and `core.setFailed` among them.
    """
    import json
    import shutil

    node = shutil.which("node")
    if node is None:
        import pytest

        pytest.skip("node is not installed")
    work = cwd.parent / "github-script"
    work.mkdir(exist_ok=True)
    (work / "harness.js").write_text(GITHUB_SCRIPT_HARNESS, encoding="utf-8")
    (work / "script.js").write_text(script, encoding="utf-8")
    state = {"comments": comments, "payload": payload or {}, "commits": commits or {}}
    (work / "state.json").write_text(json.dumps(state), encoding="utf-8")
    subprocess.run(
        [
            node,
            *(str(work / name) for name in ("harness.js", "state.json", "script.js", "calls.json")),
        ],
        cwd=cwd,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads((work / "calls.json").read_text(encoding="utf-8"))


def uses_step(job: dict[str, Any], action: str) -> dict[str, Any]:
    """The step of `job` that uses `action` (`owner/name`, any version)."""
    for entry in job["steps"]:
        if str(entry.get("uses", "")).split("@")[0] == action:
            return entry
    raise KeyError(action)
