import json

def call_api(prompt, options, context):
    kind = (context.get("vars") or {}).get("kind", "")
    if kind == "dict":
        return {"output": {"name": "Ada", "age": 36, "tags": ["x", "y"]}}
    if kind == "list":
        return {"output": [1, 2, 3]}
    if kind == "number":
        return {"output": 42}
    if kind == "bool":
        return {"output": True}
    if kind == "fenced":
        return {"output": "Here you go:\n```json\n{\"name\": \"Bob\", \"age\": 5}\n```\nthanks"}
    if kind == "two":
        return {"output": 'first {"a": 1} then {"b": "two"} end'}
    if kind == "yamlish":
        return {"output": "result: {a: 1, b: 'x'} ok"}
    if kind == "str_json":
        return {"output": json.dumps({"name": "Cy", "age": "old"})}
    if kind == "nan":
        return {"output": '{"v": NaN}'}
    return {"output": prompt}
