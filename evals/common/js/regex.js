// The regex realm: `new RegExp(pattern, flags).test(text)` for `regex` assertions, JSON
// schema patterns and searches, in a realm of its own with a larger memory limit (a
// backtracking match keeps a stack as long as the text it walks). The host calls
// `__regex(pattern, flags, text)` with strings and gets a boolean (or, for texts only JSON
// carries, `regex` through the bridge); a pattern that does not compile throws its
// SyntaxError.
(function (global) {
  "use strict";
  var CACHE_SIZE = 512;
  var regexes = new Map();

  function test(pattern, flags, text) {
    var key = flags + "/" + pattern;
    var re = regexes.get(key);
    if (re === undefined) {
      if (regexes.size >= CACHE_SIZE) regexes.clear();
      re = new RegExp(pattern, flags);
      regexes.set(key, re);
    }
    re.lastIndex = 0;
    return re.test(text);
  }

  global.__evalsBridge.calls.regex = test;
  global.__regex = test;
})(globalThis);
