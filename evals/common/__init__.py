"""Utilities every layer may use: templating, finishing async code from sync callers,
token counting, `file://` references and user Python, user transforms, and JSON for the
harness's own files."""
