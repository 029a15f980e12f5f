def call_api(prompt, options, context):
    return {"output": f"[{options.get('config', {}).get('tag', 'none')}] {prompt}"}
