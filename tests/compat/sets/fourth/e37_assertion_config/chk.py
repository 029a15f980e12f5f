def get_assert(output, context):
    cfg = context.get("config") or {}
    return {"pass": len(output) >= cfg.get("min", 0), "score": min(1.0, len(output) / cfg.get("scale", 10)), "reason": str(sorted(cfg))}
