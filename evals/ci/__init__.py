"""The CI jobs: `evals ci pr` (`pr`, what its gate can see in `pr_plan`, the merge base
checked out and run in its own environment in `checkout` and `base_env`), `evals ci
nightly` (`nightly`), the files every job leaves (`outputs`) and the trusted event
context an evaluation's environment and branch come from (`provenance`)."""
