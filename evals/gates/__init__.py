"""Gates: the suite's rules that turn statistics into pass, fail or undetermined."""
