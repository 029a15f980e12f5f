def get_var(var_name, prompt, other_vars):
    return {"output": f"computed-{var_name}-{other_vars.get('base', '')}"}
