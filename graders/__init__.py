"""Graders: pure functions from (run, assertion) to a Grade, registered by assertion type."""
