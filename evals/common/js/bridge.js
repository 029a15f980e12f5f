// The host's way into a realm, loaded after harden.js. The realm's own files register the
// functions the host may call in `__evalsBridge.calls`; the host calls them through
// `__evals(name, argsJson, special)`, which answers with one JSON envelope: {ok, undef} or
// {pending} or {error, name, stack, lineno}. Both globals leave the global object when the
// realm is locked down (the host keeps its reference to `__evals`), so code running in the
// realm cannot call the host's functions.
(function (global) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var calls = Object.create(null);
  var settled = null;

  // Numbers JSON cannot carry (NaN, Infinity) arrive as {"\u0000number": "Infinity"}.
  function revive(key, value) {
    if (value !== null && typeof value === "object" && "\u0000number" in value) {
      return Number(value["\u0000number"]);
    }
    return value;
  }

  // ... and leave tagged the same way.
  function tagged(key, value) {
    return typeof value === "number" && !isFinite(value) ? { "\u0000number": String(value) } : value;
  }

  function success(value) {
    return stringify({ ok: value === undefined ? null : value, undef: value === undefined }, tagged);
  }

  function failure(e) {
    var isError = e !== null && typeof e === "object";
    return stringify({
      error: isError && e.message !== undefined ? String(e.message) : String(e),
      name: isError && e.name !== undefined ? String(e.name) : "Error",
      stack: isError && typeof e.stack === "string" ? e.stack : "",
      lineno: isError && typeof e.lineno === "number" ? e.lineno : null,
    });
  }

  // A call that returned a promise answers {pending}; the host runs the realm's jobs, then
  // asks for the outcome with `settled`.
  calls.settled = function () {
    var outcome = settled;
    settled = null;
    if (outcome === null || !outcome.done) throw new Error("the promise did not settle");
    if (outcome.failed) throw outcome.error;
    return outcome.value;
  };

  // Whether the call's promise still waits (the host then runs the scripts realm's timers).
  calls.pending = function () {
    return settled !== null && !settled.done;
  };

  global.__evals = function (name, argsJson, special) {
    try {
      var value = calls[name].apply(null, special ? parse(argsJson, revive) : parse(argsJson));
      if (value !== null && typeof value === "object" && typeof value.then === "function") {
        var outcome = { done: false };
        settled = outcome;
        value.then(
          function (v) { outcome.done = true; outcome.value = v; },
          function (e) { outcome.done = true; outcome.failed = true; outcome.error = e; }
        );
        return stringify({ pending: true });
      }
      return success(value);
    } catch (e) {
      return failure(e);
    }
  };

  global.__evalsBridge = { calls: calls, revive: revive };
})(globalThis);
