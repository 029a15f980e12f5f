"""Defaults the command line prints in its help and the engine applies: kept free of
imports, so `evals --help` loads nothing else."""

GATE_ENVIRONMENTS = ("pr", "nightly", "release")
"""The environments a suite's `gates:` block may configure (`gates.environments`), the
command line's `--env` and a triage action's environment take."""

DEFAULT_STAGES = (5, 10, 20)
"""The cumulative repeats of a staged run's looks when `--until-decided` names none."""

DEFAULT_HTML_RUN_DETAILS = 2000
"""The most runs the HTML report shows in detail (suite key `reports.html_run_details`,
`evals run --html-run-details`)."""

DEFAULT_RUNS_IN_MEMORY = 5000
"""Below this many runs, an evaluation whose reports list every run keeps its runs in
memory for them instead of reading them back from the store (suite key
`reports.runs_in_memory`, `evals run --runs-in-memory`)."""
