"""Answers with a JSON object whose numbers and keys JSON.stringify writes its own way."""


def call_api(prompt, options, context):
    return {"output": {"b": 1, "10": 2, "2": 3, "small": 0.00001, "big": 12345678901234567890}}
