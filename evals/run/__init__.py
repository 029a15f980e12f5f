"""Running planned runs: the runner (the harness's only concurrency), where it runs
(`executors`: in this process or on Ray), the opt-in response cache and the progress bar."""
