"""Answers with the prompt and what it was told of it (label, config, unrendered raw)."""

import json


def call_api(prompt, options, context):
    told = context.get("prompt", {})
    seen = {"label": told.get("label"), "config": told.get("config"), "raw": told.get("raw")}
    return {"output": prompt + "\n" + json.dumps(seen, sort_keys=True)}
