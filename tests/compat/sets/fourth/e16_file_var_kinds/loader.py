def get_var(var_name, prompt, other_vars):
    if other_vars.get("fail"):
        return {"error": "loader failed"}
    return {"output": f"{var_name}:{other_vars.get('name')}"}
