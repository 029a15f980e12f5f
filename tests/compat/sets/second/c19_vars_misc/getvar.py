def get_var(var_name, prompt, other_vars):
    return {"output": f"{var_name}:{other_vars.get('lang', '?')}"}
