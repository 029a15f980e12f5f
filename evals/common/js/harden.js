// Deep freezing for the sandbox's realms, loaded first into each of them.
//
// `harden(root)` freezes every object reachable from `root`: own properties (values,
// getters and setters, symbol keys included) and prototypes, transitively. `lockdown`
// hardens the realm itself once its own code has loaded: every intrinsic (the global
// object's properties and the prototypes only reachable through instances: iterators,
// generators, async functions) with Error's stack-formatting statics fixed, then removes the host's entry points from the global
// object (the host keeps its own references to them) and, for a realm whose global object
// is frozen, freezes it. After lockdown, code running in the realm has no writable path to
// anything another call will use: it can only create objects of its own.
//
// Freezing a prototype makes assigning one of its property names on an instance fail
// (JavaScript's "override mistake": `err.message = ...`, `this.length = ...`). Before they
// are frozen, prototypes' common method names and their non-function fields become
// accessors whose setter defines the property on the instance instead, as SES does.
(function (global) {
  "use strict";
  var freeze = Object.freeze;
  var isFrozen = Object.isFrozen;
  var getPrototypeOf = Object.getPrototypeOf;
  var describe = Object.getOwnPropertyDescriptor;
  var define = Object.defineProperty;
  var ownKeys = Reflect.ownKeys;
  var hardened = new WeakSet();
  var OVERRIDABLE = ["constructor", "name", "message", "toString", "valueOf",
    "toLocaleString", "hasOwnProperty", "stack", "cause"];

  function isObject(value) {
    return (typeof value === "object" && value !== null) || typeof value === "function";
  }

  // Every object reachable from `roots` that is not hardened yet, and which of them serve
  // as prototypes (of another reachable object, or as a function's `prototype`).
  function reachable(roots) {
    var found = new Set();
    var prototypes = new Set();
    var stack = [];
    function visit(value, asPrototype) {
      if (!isObject(value) || hardened.has(value)) return;
      if (asPrototype) prototypes.add(value);
      if (!found.has(value)) {
        found.add(value);
        stack.push(value);
      }
    }
    for (var r = 0; r < roots.length; r++) visit(roots[r], false);
    while (stack.length > 0) {
      var object = stack.pop();
      visit(getPrototypeOf(object), true);
      var keys = ownKeys(object);
      for (var i = 0; i < keys.length; i++) {
        var d = describe(object, keys[i]);
        if (d === undefined) continue;
        if ("value" in d) {
          visit(d.value, keys[i] === "prototype" && typeof object === "function");
        } else {
          visit(d.get, false);
          visit(d.set, false);
        }
      }
    }
    return { objects: found, prototypes: prototypes };
  }

  // The property `key` of a prototype as an accessor pair that reads the value and, on an
  // instance, defines the property there. The pair's functions are methods (no
  // `prototype` of their own) and are frozen at once.
  function overridable(proto, key) {
    var d = describe(proto, key);
    if (!d || !("value" in d) || !d.writable || !d.configurable) return;
    if (typeof d.value === "function" && OVERRIDABLE.indexOf(key) === -1) return;
    var value = d.value;
    var pair = {
      get() { return value; },
      set(v) {
        if (this === proto) throw new TypeError("'" + String(key) + "' is read-only");
        define(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
    };
    freeze(pair.get);
    freeze(pair.set);
    define(proto, key, { get: pair.get, set: pair.set, enumerable: d.enumerable, configurable: false });
  }

  // Freeze everything reachable from `roots` (one walk).
  function hardenAll(roots) {
    var walked = reachable(roots);
    walked.prototypes.forEach(function (proto) {
      if (isFrozen(proto)) return;
      var keys = ownKeys(proto);
      for (var i = 0; i < keys.length; i++) overridable(proto, keys[i]);
    });
    walked.objects.forEach(function (object) {
      freeze(object);
      hardened.add(object);
    });
  }

  function harden(root) {
    hardenAll([root]);
    return root;
  }

  // Intrinsics reachable only through instances, not through the global object's properties.
  function hiddenIntrinsics() {
    var found = [];
    function add(instance) {
      if (isObject(instance)) found.push(instance);
    }
    add(function* () {});
    add((function* () {})());
    add(async function () {});
    add(async function* () {});
    add((async function* () {})());
    add([][Symbol.iterator]());
    add(new Map()[Symbol.iterator]());
    add(new Set()[Symbol.iterator]());
    add(""[Symbol.iterator]());
    add("".matchAll(/a/g));
    add((function () { return arguments; })());
    if (typeof Iterator === "function" && typeof Iterator.from === "function") {
      add(Iterator.from({ next: function () { return { done: true }; } }));
      add([].values().map(function (x) { return x; }));
    }
    return found;
  }

  // Freeze the realm: `entries` are the global names the host took references to (they
  // leave the global object); `freezeGlobal` also forbids new globals.
  // Static properties of Error whose setters change the realm's hidden state (QuickJS-ng's
  // V8-style stack formatting): a formatter set by one call would see, and could change,
  // the errors of every later call. They become fixed data properties.
  function fixErrorStatics() {
    var keys = ["prepareStackTrace", "stackTraceLimit"];
    for (var i = 0; i < keys.length; i++) {
      var d = describe(global.Error, keys[i]);
      if (d === undefined || !d.configurable) continue;
      var value = "value" in d ? d.value : d.get ? d.get.call(global.Error) : undefined;
      define(global.Error, keys[i], { value: value, writable: false, enumerable: false,
        configurable: false });
    }
  }

  function lockdown(entries, freezeGlobal) {
    for (var i = 0; i < entries.length; i++) delete global[entries[i]];
    delete global.__evalsHarden;
    fixErrorStatics();
    var roots = hiddenIntrinsics();
    var names = ownKeys(global);
    for (var n = 0; n < names.length; n++) {
      var d = describe(global, names[n]);
      if (d.configurable || d.writable) {
        if ("value" in d) d.writable = false;
        d.configurable = false;
        define(global, names[n], d);
      }
      roots.push("value" in d ? d.value : d.get);
    }
    if (freezeGlobal) roots.push(global);
    else hardened.add(global);
    hardenAll(roots);
    return true;
  }

  global.__evalsHarden = { harden: harden, lockdown: lockdown };
})(globalThis);
