// The scripts realm: what promptfoo runs as JavaScript code (inline assertions and
// transforms, wrapped as promptfoo wraps them, and JavaScript files: checks, transforms
// and prompt functions, looked up in each as promptfoo looks them up).
// Loaded after harden.js and bridge.js; the realm is locked down with its global object
// left extensible, so code may still create globals of its own (`total = 0` in sloppy
// code), while every built-in stays frozen.
(function (global) {
  "use strict";
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var bridge = global.__evalsBridge;
  var calls = bridge.calls;
  var revive = bridge.revive;
  var CACHE_SIZE = 512;
  var functions = new Map();
  var modules = new Map();

  function remember(cache, key, make) {
    var found = cache.get(key);
    if (found === undefined) {
      if (cache.size >= CACHE_SIZE) cache.clear();
      found = make();
      cache.set(key, found);
    }
    return found;
  }

  // --- `console`, as code written for Node calls it: every method runs and prints nothing
  // (the sandbox has no terminal of its own).
  var quiet = function () {};
  var consoleMethods = ["log", "info", "warn", "error", "debug", "trace", "dir", "table",
    "group", "groupEnd", "time", "timeEnd", "count", "assert"];
  var sandboxConsole = {};
  consoleMethods.forEach(function (name) { sandboxConsole[name] = quiet; });
  global.console = Object.freeze(sandboxConsole);

  // --- Timers, as Node's: setTimeout, setInterval, setImmediate and their clear*. They run
  // on a virtual clock: when a call's promise waits and no job is left, the host asks
  // `timerStep` to run the next timer (the earliest due, then the earliest set), so code
  // that waits for a timer finishes without the wait, in Node's order. Timers a call left
  // behind are dropped when the next call starts (`freshTimers`).
  var timers = new Map();
  var timerSeq = 0;
  var clock = 0;

  function addTimer(fn, ms, args, repeat, immediate) {
    if (typeof fn !== "function") {
      throw new TypeError('The "callback" argument must be of type function. Received ' + typeof fn);
    }
    var delay = Number(ms);
    if (!(delay >= 1 && delay <= 2147483647)) delay = 1;
    timerSeq += 1;
    timers.set(timerSeq, {
      fn: fn, args: args, due: clock + (immediate ? 0 : delay), seq: timerSeq,
      every: repeat ? delay : 0, immediate: immediate,
    });
    return timerSeq;
  }

  function clearTimer(id) {
    timers.delete(typeof id === "object" && id !== null ? id.id : id);
  }

  function rest(args, from) {
    return Array.prototype.slice.call(args, from);
  }

  global.setTimeout = function (fn, ms) { return addTimer(fn, ms, rest(arguments, 2), false, false); };
  global.setInterval = function (fn, ms) { return addTimer(fn, ms, rest(arguments, 2), true, false); };
  global.setImmediate = function (fn) { return addTimer(fn, 0, rest(arguments, 1), false, true); };
  global.clearTimeout = clearTimer;
  global.clearInterval = clearTimer;
  global.clearImmediate = clearTimer;

  function freshTimers() {
    timers.clear();
    clock = 0;
  }

  // Run the next timer; false when none is left. Immediates run before timers.
  calls.timerStep = function () {
    var next = null;
    timers.forEach(function (timer) {
      if (next === null) { next = timer; return; }
      var a = timer.immediate ? -1 : timer.due, b = next.immediate ? -1 : next.due;
      if (a < b || (a === b && timer.seq < next.seq)) next = timer;
    });
    if (next === null) return false;
    if (!next.immediate && next.due > clock) clock = next.due;
    if (next.every > 0) next.due = clock + next.every;
    else timers.delete(next.seq);
    next.fn.apply(undefined, next.args);
    return true;
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
    freshTimers();
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
    freshTimers();
    return compiledFunction(params, body).apply(undefined, args.concat([processShim()]));
  };

  // --- JavaScript files, loaded as promptfoo's importModule loads them with Node's
  // import(): a CommonJS module's `module.exports` is its default export, and promptfoo
  // unwraps `default` (and `default.default`). A module runs once per realm and source.
  function sandboxRequire(name) {
    throw new Error("require('" + name + "') is not available in the JavaScript sandbox");
  }

  function commonJsNamespace(source, path) {
    var module = { exports: {} };
    var folder = path.slice(0, path.lastIndexOf("/")) || "/";
    Function("module", "exports", "require", "__filename", "__dirname", "process", source)(
      module, module.exports, sandboxRequire, path, folder, processShim());
    // an ES module rewritten by the modules realm exports its namespace
    return module.esNamespace === true ? module.exports : { default: module.exports };
  }

  function loadedModule(source, path) {
    return remember(modules, path + "\u0000" + source, function () {
      var namespace = commonJsNamespace(source, path);
      var main = namespace.default;
      return (main && main.default) || main || namespace;
    });
  }

  // A file's function as promptfoo's getJavascriptTransformFunction finds it.
  function transformFunction(mod, path, name) {
    if (name && Object.prototype.hasOwnProperty.call(mod, name) && typeof mod[name] === "function") {
      return mod[name];
    }
    if (typeof mod === "function") return mod;
    if (mod.default && typeof mod.default === "function") return mod.default;
    throw new Error("Transform " + path + " must export a function, have a default export as a " +
      'function, or export the specified function "' + name + '"');
  }

  // A transform (or any function a file exports for promptfoo to call) called with `args`,
  // or only looked up when `args` is null.
  calls.moduleFunction = function (source, path, name, args) {
    freshTimers();
    var fn = transformFunction(loadedModule(source, path), path, name);
    return args === null ? true : fn.apply(undefined, args);
  };

  // A JavaScript file as an assertion (or an assertion's value), as promptfoo's
  // loadFromJavaScriptFile calls it with (output, context); the context as scriptContext's
  // JSON text.
  calls.moduleCheck = function (source, path, name, output, context) {
    freshTimers();
    var mod = loadedModule(source, path);
    var found = name ? mod[name] : mod;
    var args = [output, scriptContext(context)];
    if (name) {
      if (found === undefined || found === null) {
        throw new TypeError("Cannot read properties of " + found + " (reading '" + name + "')");
      }
      if (typeof found[name] === "function") return found[name].apply(undefined, args);
    }
    if (typeof found === "function") return found.apply(undefined, args);
    if (found.default && typeof found.default === "function") {
      return found.default.apply(undefined, args);
    }
    throw new Error("Assertion malformed: " + path +
      " must export a function or have a default export as a function");
  };

  // An assertScoringFunction, found as promptfoo's loadFunction finds it (the named
  // export, else the module when it is a function, else its default or `func` export) and
  // called with (namedScores, context); only looked up when `args` is null.
  calls.moduleScoring = function (source, path, name, args) {
    freshTimers();
    var mod = loadedModule(source, path);
    var fn = name ? mod[name] : typeof mod === "function" ? mod
      : (mod.default && mod.default.default) || mod.default || mod.func || mod;
    if (typeof fn !== "function") {
      throw new Error(name ? 'JavaScript file must export a "' + name + '" function'
        : 'JavaScript file must export a function (as default export or named export "func")');
    }
    return args === null ? true : fn.apply(undefined, args);
  };

  // A tests file written in JavaScript, as promptfoo's readJavascriptTestCases reads it
  // (importModule(path, name): the named export, else the module): a function is called
  // with `args` (the entry's `config`, when it has one) and gives the tests; anything else
  // is the tests.
  calls.moduleTests = function (source, path, name, args) {
    freshTimers();
    var mod = loadedModule(source, path);
    var found = name ? mod[name] : mod;
    return typeof found === "function" ? found.apply(undefined, args) : found;
  };

  // A prompt function, as promptfoo's processJsFile finds it (importModule(path, name): the
  // named export, else the module) and calls it with {vars, provider: {id, label}, config};
  // the module is only loaded when `context` is null.
  calls.modulePrompt = function (source, path, name, context) {
    freshTimers();
    var mod = loadedModule(source, path);
    if (context === null) return true;
    var promptFunction = name ? mod[name] : mod;
    if (typeof promptFunction !== "function") throw new TypeError("promptFunction is not a function");
    return promptFunction(context);
  };

  // --- JavaScript providers, built as promptfoo's loadApiProvider builds one: the module
  // (its default export) is a class, constructed once per realm, file and options as
  // `new Provider(options)`; each run calls `callApi(prompt, context, options)`.
  var providers = new Map();

  function providerInstance(source, path, options) {
    return remember(providers, path + "\u0000" + options + "\u0000" + source, function () {
      var Provider = loadedModule(source, path);
      if (typeof Provider !== "function") {
        throw new TypeError(path + " does not export a provider class (got " + typeof Provider + ")");
      }
      return new Provider(parse(options));
    });
  }

  // The provider's names: its id() (promptfoo's provider id) and its own `label`, and
  // whether it has a callApi method.
  calls.providerNames = function (source, path, options) {
    freshTimers();
    var provider = providerInstance(source, path, options);
    if (typeof provider.id !== "function") {
      throw new TypeError(path + ": the provider has no id() method");
    }
    return {
      id: String(provider.id()),
      label: typeof provider.label === "string" && provider.label ? provider.label : null,
      callApi: typeof provider.callApi === "function",
    };
  };

  var quietLogger = Object.freeze({ debug: quiet, info: quiet, warn: quiet, error: quiet });
  var responseCache = new Map();
  var memoryCache = Object.freeze({
    get: function (key) { return Promise.resolve(responseCache.get(key)); },
    set: function (key, value) { responseCache.set(key, value); return Promise.resolve(); },
    del: function (key) { responseCache.delete(key); return Promise.resolve(); },
  });
  var abortSignal = Object.freeze({
    aborted: false, reason: undefined, throwIfAborted: quiet,
    addEventListener: quiet, removeEventListener: quiet,
  });

  // One run: callApi with the run's context (JSON text from the host, with promptfoo's
  // logger, getCache, filters and originalProvider added) and an options object holding
  // an abort signal that never fires. The response crosses back as JSON.
  calls.providerCall = function (source, path, options, prompt, context) {
    freshTimers();
    var provider = providerInstance(source, path, options);
    if (typeof provider.callApi !== "function") {
      throw new TypeError("activeProvider.callApi is not a function");
    }
    var scope = context.indexOf("\\u0000number") !== -1 ? parse(context, revive) : parse(context);
    scope.filters = {};
    scope.originalProvider = provider;
    scope.logger = quietLogger;
    scope.getCache = function () { return Promise.resolve(memoryCache); };
    return provider.callApi(prompt, scope, { abortSignal: abortSignal });
  };

  // A var loader, called as promptfoo's renderPrompt calls it: the module itself, with
  // (varName, prompt, vars, provider); `provider.id` becomes an id() method.
  calls.moduleVar = function (source, path, varName, prompt, vars, provider) {
    freshTimers();
    var loader = loadedModule(source, path);
    if (typeof loader !== "function") throw new TypeError("loader is not a function");
    var id = provider.id;
    provider.id = function () { return id; };
    return loader(varName, prompt, vars, provider);
  };
})(globalThis);
