"""The planned runs of an evaluation: every (prompt, case, agent, repeat), with its seeds."""
