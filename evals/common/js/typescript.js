// The typescript realm: TypeScript files (`.ts`, `.cts`, `.mts`), which promptfoo compiles
// before it imports them, turned into JavaScript by sucrase (bundled in sucrase.js): types,
// interfaces and type-only imports removed, enums and parameter properties compiled, the
// rest (and `import` / `export`) left for the modules realm. Loaded after harden.js and
// bridge.js; only the host's calls reach it, and it runs no code of the file.
(function (global) {
  "use strict";
  var sucrase = global.sucrase;
  var calls = global.__evalsBridge.calls;

  calls.typescriptToJs = function (source, path) {
    return sucrase.transform(source, {
      transforms: ["typescript"], disableESTransforms: true, filePath: path,
    }).code;
  };
})(globalThis);
