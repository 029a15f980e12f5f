def call_api(prompt, options, context):
    cfg = options.get('config', {})
    style = cfg.get('style', 'plain')
    if style == 'upper':
        return {"output": prompt.upper()}
    if style == 'long':
        return {"output": prompt + " and more words here banana"}
    return {"output": prompt}
