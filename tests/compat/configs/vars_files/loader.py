def get_var(var_name, prompt, other_vars):
    return {"output": f"  {var_name} loaded in Python for {other_vars['topic']}  "}
