"""Echoes the prompt."""


def call_api(prompt, options, context):
    """The prompt as it came."""
    return {"output": prompt}


def shout(prompt, options, context):
    """The prompt in capitals."""
    return {"output": prompt.upper()}
