"""Answers every prompt with no output."""


def call_api(prompt, options, context):
    """An answer whose output is None."""
    return {"output": None}
