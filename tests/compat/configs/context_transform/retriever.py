"""A provider answering with its retrieved passages in the response."""

import json


def call_api(prompt, options, context):
    passages = ["The sky is blue today.", "Grass is green."]
    return {"output": json.dumps({"answer": prompt, "passages": passages})}
