def call_api(prompt, options, context):
    mode = options.get('config', {}).get('mode')
    if mode == 'err' and 'boom' in prompt:
        return {"error": "provider failed"}
    if mode == 'raise' and 'boom' in prompt:
        raise RuntimeError("raised")
    return {"output": f"{mode}: {prompt}"}
