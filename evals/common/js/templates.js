// The templates realm: Nunjucks templates, configured as promptfoo configures Nunjucks (no
// autoescape, undefined prints empty, a `load` filter) but with no loader, so templates
// cannot read files. Loaded after harden.js, bridge.js and nunjucks.min.js; the host then
// adds the suite's filters (`addScriptFilter`, `addHostFilter`), seals the environments
// (`seal`) and locks the realm down with its global object frozen.
//
// Isolation: template code can run JavaScript (`range.constructor("...")()` is a Function
// constructor), so nothing it can reach may carry over to another render. Every object it
// can reach is frozen (the intrinsics, `nunjucks` and its runtime, both environments with
// their filters and globals, each compiled template); what a render creates (its context,
// frames, vars) is its own. The host's entry points are not on the global object, and the
// realm's mutable state (the caches, the output limit, the Python filters' callable) lives
// only in this closure.
//
// The host calls `__render(source, varsJson, envJson, special, withFilters)` with strings
// for the common case, and `__evals` for the rest (`render`, `compile`, `envNames`).
(function (global) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var bridge = global.__evalsBridge;
  var calls = bridge.calls;
  var revive = bridge.revive;
  var harden = global.__evalsHarden.harden;
  var nunjucks = global.nunjucks;
  var CACHE_SIZE = 512;
  var templates = new Map();
  var maxOutput = 0;
  var host = null;
  if (global.__host_filter !== undefined) {
    host = global.__host_filter;
    delete global.__host_filter;
  }

  function remember(cache, key, make) {
    var found = cache.get(key);
    if (found === undefined) {
      if (cache.size >= CACHE_SIZE) cache.clear();
      found = make();
      cache.set(key, found);
    }
    return found;
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

  // Prompts render in the environment that also has the suite's nunjucksFilters (promptfoo
  // passes them to renderPrompt only); everything else (assertion values, ...) in the one
  // without.
  function environment() {
    var made = new nunjucks.Environment([], { autoescape: false });
    made.addFilter("load", function (text) { return parse(text); });
    made.addGlobal("range", boundedRange(made.globals.range));
    return made;
  }
  var environments = [environment(), environment()];

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

  var runtime = nunjucks.runtime;
  var suppressValue = runtime.suppressValue;
  runtime.suppressValue = function (value, autoescape) {
    return suppressValue(typeof value === "number" ? nodeNumberString(value) : value, autoescape);
  };

  // A compiled template is frozen too: template code can reach its blocks through the
  // render's context.
  function template(source, withFilters) {
    return remember(templates, (withFilters ? "f" : "p") + source, function () {
      return harden(new nunjucks.Template(source, environments[withFilters ? 1 : 0], null, true));
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

  // Which names of `env` a template reads, from its syntax tree: ["NAME", ...] for
  // `env.NAME` and `env["NAME"]`, ["*"] when it reads `env` any other way (the whole
  // object, a computed key, a loop over it).
  calls.envNames = function (source) {
    var nodes = nunjucks.nodes;
    var names = [];
    var whole = false;
    function isEnv(node) {
      return node instanceof nodes.Symbol && node.value === "env";
    }
    function visit(node) {
      if (!(node instanceof nodes.Node)) return;
      if (node instanceof nodes.LookupVal && isEnv(node.target)) {
        if (node.val instanceof nodes.Literal && typeof node.val.value === "string") {
          if (names.indexOf(node.val.value) === -1) names.push(node.val.value);
        } else {
          whole = true;
        }
        visit(node.val);
        return;
      }
      if (isEnv(node)) whole = true;
      node.iterFields(function (value) {
        if (Array.isArray(value)) value.forEach(visit);
        else visit(value);
      });
      if (node instanceof nodes.NodeList) node.children.forEach(visit);
    }
    visit(nunjucks.parser.parse(source, [], {}));
    return whole ? ["*"] : names;
  };

  // A filter written in JavaScript (CommonJS: module.exports = function ...).
  calls.addScriptFilter = function (name, source) {
    var module = { exports: {} };
    Function("module", "exports", source)(module, module.exports);
    var filter = typeof module.exports === "function" ? module.exports :
      module.exports.default || module.exports[name];
    if (typeof filter !== "function") throw new TypeError("the file must export a function");
    environments[1].addFilter(name, filter);
    return true;
  };

  // A filter written in Python: the host callable receives and returns JSON text only.
  calls.addHostFilter = function (name) {
    environments[1].addFilter(name, function () {
      return parse(host(name, stringify(Array.prototype.slice.call(arguments))));
    });
    return true;
  };

  // The filters are in: from now on both environments are frozen.
  calls.seal = function () {
    harden(environments);
    return true;
  };

  global.__render = function (source, varsJson, envJson, special, withFilters) {
    var vars = special ? parse(varsJson, revive) : parse(varsJson);
    var text = calls.render(source, vars, envJson === null ? null : parse(envJson), withFilters);
    // a flat copy: the host cannot read QuickJS's rope strings (built by concatenation)
    return [text].join("");
  };
})(globalThis);
