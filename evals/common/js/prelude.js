// What the harness runs as JavaScript, where promptfoo runs JavaScript: regular
// expressions, inline assertions and transforms (wrapped as promptfoo wraps them) and
// Nunjucks templates. Loaded once into each sandboxed QuickJS context after nunjucks.min.js
// (when templates need it). Python reaches it through `__evals(name, argsJson)`, which
// answers with one JSON envelope: {ok, undef} or {pending} or {error, name, stack}, and,
// for the two calls made for nearly every run, through `__regex` and `__render`, which
// take and return strings directly (errors surface as exceptions).
(function (global) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var CACHE_SIZE = 512;
  var calls = Object.create(null);
  var settled = null;
  var nunjucksEnvs = [null, null];
  var templates = new Map();
  var functions = new Map();
  var regexes = new Map();
  var maxOutput = 0;

  function remember(cache, key, make) {
    var found = cache.get(key);
    if (found === undefined) {
      if (cache.size >= CACHE_SIZE) cache.clear();
      found = make();
      cache.set(key, found);
    }
    return found;
  }

  // --- regular expressions: new RegExp(pattern, flags).test(text)
  calls.regex = function (pattern, flags, text) {
    var re = remember(regexes, flags + "/" + pattern, function () {
      return new RegExp(pattern, flags);
    });
    re.lastIndex = 0;
    return re.test(text);
  };

  // --- promptfoo's process shim, without the host: no environment, no require
  function processShim() {
    return {
      env: {},
      mainModule: {
        require: function () {
          throw new Error("require() is not available in the JavaScript sandbox");
        },
      },
    };
  }

  function compiledFunction(params, body) {
    return remember(functions, params.join(",") + "\u0000" + body, function () {
      return Function.apply(null, params.concat([body]));
    });
  }

  // promptfoo's findLastStatementSemicolon / buildFunctionBody for one-line assertions.
  function isCharEscaped(code, index) {
    var backslashes = 0;
    for (var i = index - 1; i >= 0 && code[i] === "\\"; i--) backslashes++;
    return backslashes % 2 === 1;
  }

  function lastStatementSemicolon(code) {
    var single = false, double = false, template = false, last = -1;
    for (var i = 0; i < code.length; i++) {
      var c = code[i];
      if (!isCharEscaped(code, i)) {
        if (c === "'" && !double && !template) single = !single;
        else if (c === '"' && !single && !template) double = !double;
        else if (c === "`" && !single && !double) template = !template;
      }
      if (c === ";" && !single && !double && !template) last = i;
    }
    return last;
  }

  function functionBody(code) {
    var trimmed = code.trim().replace(/;+\s*$/, "");
    if (/^(const|let|var)\s/.test(trimmed)) {
      var last = lastStatementSemicolon(trimmed);
      if (last !== -1) {
        var statements = trimmed.slice(0, last + 1);
        var expression = trimmed.slice(last + 1).trim();
        if (expression) return statements + " return " + expression;
      }
      return trimmed;
    }
    return "return " + trimmed;
  }

  function isGradingResult(r) {
    return typeof r === "object" && r !== null && typeof r.pass === "boolean" &&
      typeof r.score === "number" && typeof r.reason === "string";
  }

  function validated(result) {
    if (typeof result === "boolean" || typeof result === "number" || isGradingResult(result)) {
      return result;
    }
    throw new Error("Custom function must return a boolean, number, or GradingResult object. Got type " +
      typeof result + ": " + stringify(result));
  }

  // The `context` of a script assertion, from the JSON text the host wrote once per run:
  // `provider.id` arrives as the provider's id and becomes promptfoo's id() method, and a
  // null `logProbs` is promptfoo's undefined (the key is there, the value is not).
  function scriptContext(text) {
    var context = text.indexOf("\\u0000number") !== -1 ? parse(text, revive) : parse(text);
    var provider = context.provider;
    if (provider !== null && typeof provider === "object" && typeof provider.id === "string") {
      var id = provider.id;
      provider.id = function () { return id; };
    }
    if (context.logProbs === null) context.logProbs = undefined;
    return context;
  }

  // A `javascript` assertion: the value as promptfoo's handleJavascript runs it. `context`
  // is the JSON text of scriptContext, or an object given as it is.
  calls.assertion = function (code, output, context) {
    var body = code.indexOf("\n") !== -1 ? code : functionBody(code);
    var scope = typeof context === "string" ? scriptContext(context) : context;
    var result = compiledFunction(["output", "context", "process"], body)(output, scope, processShim());
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      return Promise.resolve(result).then(validated);
    }
    return validated(result);
  };

  // Any other function promptfoo builds with new Function (transforms, HTTP transforms):
  // `params` end with "process", which receives the process shim.
  calls.check = function (params, body) {
    compiledFunction(params, body);
    return true;
  };

  calls.fn = function (params, body, args) {
    return compiledFunction(params, body).apply(undefined, args.concat([processShim()]));
  };

  // A CommonJS module's exported function (`module.exports = fn`, or `exports.name`), called
  // with `args` (or only looked up, when `args` is null).
  var modules = new Map();
  calls.exported = function (source, name, args) {
    var exported = remember(modules, source, function () {
      var module = { exports: {} };
      Function("module", "exports", "process", source)(module, module.exports, processShim());
      return module.exports;
    });
    var fn = name ? exported[name] : typeof exported === "function" ? exported :
      exported.default;
    if (typeof fn !== "function") {
      throw new TypeError(name ? "the module does not export a function named " + name :
        "the module does not export a function");
    }
    return args === null ? true : fn.apply(undefined, args);
  };

  // A JavaScript file as an assertion value: its function called with (output, context),
  // the context given as scriptContext's JSON text.
  calls.exportedCheck = function (source, name, output, context) {
    return calls.exported(source, name, [output, scriptContext(context)]);
  };

  // --- Nunjucks, configured as promptfoo configures it (no autoescape, undefined prints
  // empty, a `load` filter) but with no loader: templates cannot read files. Prompts render
  // in the environment that also has the suite's nunjucksFilters (promptfoo passes them to
  // renderPrompt only); everything else (assertion values, ...) in the one without.
  function environment(withFilters) {
    var index = withFilters ? 1 : 0;
    if (nunjucksEnvs[index] === null) {
      var made = new global.nunjucks.Environment([], { autoescape: false });
      made.addFilter("load", function (text) { return parse(text); });
      made.addGlobal("range", boundedRange(made.globals.range));
      nunjucksEnvs[index] = made;
    }
    return nunjucksEnvs[index];
  }

  // Nunjucks's range() builds its whole list first: range(10**12) would fill the memory
  // limit before the first item renders. Lists longer than MAX_RANGE_ITEMS are refused.
  var MAX_RANGE_ITEMS = 1000000;
  function boundedRange(range) {
    return function (start, stop, step) {
      var from = start, to = stop, by = step;
      if (to === undefined) {
        to = from;
        from = 0;
        by = 1;
      } else if (!by) {
        by = 1;
      }
      var count = by > 0 ? (to - from) / by : (from - to) / -by;
      if (count > MAX_RANGE_ITEMS) {
        throw new RangeError("range() of " + Math.ceil(count) + " items is longer than the " +
          "limit of " + MAX_RANGE_ITEMS);
      }
      return range(start, stop, step);
    };
  }

  // QuickJS-ng writes some numbers with 17 significant digits where Node writes the
  // shortest digits that read back, the closest of them to the number (2 ** -24:
  // 5.9604644775390625e-8 against 5.960464477539063e-8; about one double in 20,000). What
  // `{{ }}` prints is written as Node writes it.
  var NUMBER_PARTS = /^(-?)(\d)(?:\.(\d*))?(?:e([+-]\d+))?$/;
  function nodeNumberString(x) {
    var s = String(x);
    if (s.replace(/^-|e.*$/g, "").replace(".", "").replace(/^0+/, "").length < 17) return s;
    var parts = NUMBER_PARTS.exec(x.toExponential(30));
    if (parts === null) return s;
    var sign = parts[1], exponent = parseInt(parts[4], 10), magnitude = sign ? -x : x;
    var exact = BigInt(parts[2] + parts[3]);  // 31 significant digits
    for (var p = 1; p <= 16; p++) {
      var scale = 10n ** BigInt(31 - p), low = exact / scale, best = null, bestDistance = 0n;
      for (var d = low - 1n; d <= low + 2n; d++) {
        var text = String(d);
        if (d <= 0n || Number(text + "e" + (exponent - p + 1)) !== magnitude) continue;
        var distance = d * scale - exact;
        if (distance < 0n) distance = -distance;
        if (best === null || distance < bestDistance) {
          best = text;
          bestDistance = distance;
        }
      }
      if (best !== null) return sign + numberLayout(best, exponent + best.length - p + 1);
    }
    return s;
  }

  // Number::toString's layout of significant digits whose decimal point sits after n.
  function numberLayout(significant, n) {
    var ds = significant.replace(/0+$/, ""), k = ds.length;
    if (k <= n && n <= 21) return ds + "0".repeat(n - k);
    if (0 < n && n <= 21) return ds.slice(0, n) + "." + ds.slice(n);
    if (-6 < n && n <= 0) return "0." + "0".repeat(-n) + ds;
    return (k === 1 ? ds : ds[0] + "." + ds.slice(1)) + "e" + (n > 0 ? "+" : "-") + Math.abs(n - 1);
  }

  if (global.nunjucks) {
    var runtime = global.nunjucks.runtime;
    var suppressValue = runtime.suppressValue;
    runtime.suppressValue = function (value, autoescape) {
      return suppressValue(typeof value === "number" ? nodeNumberString(value) : value, autoescape);
    };
  }

  function template(source, withFilters) {
    return remember(templates, (withFilters ? "f" : "p") + source, function () {
      return new global.nunjucks.Template(source, environment(withFilters), null, true);
    });
  }

  calls.compile = function (source) {
    template(source, true);
    return true;
  };

  calls.render = function (source, vars, env, withFilters) {
    var scope = vars;
    if (env !== null && !Object.prototype.hasOwnProperty.call(vars, "env")) {
      scope = Object.assign({}, vars);
      scope.env = env;
    }
    var text = template(source, withFilters).render(scope);
    if (maxOutput > 0 && text.length > maxOutput) {
      throw new RangeError("rendered text is longer than " + maxOutput + " characters");
    }
    return text;
  };

  calls.setMaxOutput = function (chars) {
    maxOutput = chars;
    return true;
  };

  // A filter written in JavaScript (CommonJS: module.exports = function ...).
  calls.addScriptFilter = function (name, source) {
    var module = { exports: {} };
    Function("module", "exports", source)(module, module.exports);
    var filter = typeof module.exports === "function" ? module.exports :
      module.exports.default || module.exports[name];
    if (typeof filter !== "function") throw new TypeError("the file must export a function");
    environment(true).addFilter(name, filter);
    templates.clear();
    return true;
  };

  // A filter written in Python: the host callable receives and returns JSON text only, and
  // is kept here alone (no longer a global the sandboxed code could reach).
  var host = null;
  calls.addHostFilter = function (name) {
    if (global.__host_filter !== undefined) {
      host = global.__host_filter;
      delete global.__host_filter;
    }
    environment(true).addFilter(name, function () {
      return parse(host(name, stringify(Array.prototype.slice.call(arguments))));
    });
    templates.clear();
    return true;
  };

  calls.settled = function () {
    var outcome = settled;
    settled = null;
    if (outcome === null || !outcome.done) throw new Error("the promise did not settle");
    if (outcome.failed) throw outcome.error;
    return outcome.value;
  };

  function failure(e) {
    var isError = e !== null && typeof e === "object";
    return stringify({
      error: isError && e.message !== undefined ? String(e.message) : String(e),
      name: isError && e.name !== undefined ? String(e.name) : "Error",
      stack: isError && typeof e.stack === "string" ? e.stack : "",
      lineno: isError && typeof e.lineno === "number" ? e.lineno : null,
    });
  }

  // Numbers JSON cannot carry (NaN, Infinity) leave tagged as they arrive (see revive).
  function tagged(key, value) {
    return typeof value === "number" && !isFinite(value) ? { "\u0000number": String(value) } : value;
  }

  function success(value) {
    return stringify({ ok: value === undefined ? null : value, undef: value === undefined }, tagged);
  }

  // Numbers JSON cannot carry (NaN, Infinity) arrive as {"\u0000number": "Infinity"}.
  function revive(key, value) {
    if (value !== null && typeof value === "object" && "\u0000number" in value) {
      return Number(value["\u0000number"]);
    }
    return value;
  }

  global.__regex = function (pattern, flags, text) {
    return calls.regex(pattern, flags, text);
  };

  global.__render = function (source, varsJson, envJson, special, withFilters) {
    var vars = special ? parse(varsJson, revive) : parse(varsJson);
    var text = calls.render(source, vars, envJson === null ? null : parse(envJson), withFilters);
    // a flat copy: the host cannot read QuickJS's rope strings (built by concatenation)
    return [text].join("");
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
})(globalThis);
