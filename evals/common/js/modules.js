// The modules realm: ES modules (`.mjs` files, and `.js` files written with import or
// export, which Node loads as modules) rewritten as the scripts realm's CommonJS-style
// function bodies. Loaded after harden.js, bridge.js and acorn.js (acorn 8 parses the
// module); only the host's calls reach it, and it runs no code of the module.
//
// The rewrite keeps the module's own text and lines: `export` keywords are cut off the
// declarations they precede, `export default <expression>` binds the expression to a
// hidden name, `export { a as b }` statements go, and each exported name becomes a getter
// of the namespace object (`module.exports`, flagged as a namespace), so exports stay live
// as in a module. An `import` (or `export ... from`) becomes a require() call, which the
// sandbox refuses when the module runs: the sandbox has no modules to load.
(function (global) {
  "use strict";
  var acorn = global.acorn;
  var calls = global.__evalsBridge.calls;
  var DEFAULT_NAME = "__evals_default_export";

  function patternNames(node, out) {
    if (node === null) return out;
    switch (node.type) {
      case "Identifier": out.push(node.name); break;
      case "ObjectPattern":
        node.properties.forEach(function (p) {
          patternNames(p.type === "RestElement" ? p.argument : p.value, out);
        });
        break;
      case "ArrayPattern": node.elements.forEach(function (e) { patternNames(e, out); }); break;
      case "RestElement": patternNames(node.argument, out); break;
      case "AssignmentPattern": patternNames(node.left, out); break;
    }
    return out;
  }

  function declaredNames(declaration) {
    if (declaration.type === "VariableDeclaration") {
      var names = [];
      declaration.declarations.forEach(function (d) { patternNames(d.id, names); });
      return names;
    }
    return declaration.id ? [declaration.id.name] : [];
  }

  function specifierName(node) {
    return node.type === "Literal" ? String(node.value) : node.name;
  }

  function required(source) {
    return "require(" + JSON.stringify(source.value) + ");";
  }

  function isModule(program) {
    return program.body.some(function (node) {
      return /^(Import|Export\w*)Declaration$/.test(node.type);
    });
  }

  // The module `source` as a CommonJS function body, or null when it has no import or
  // export (`always`: an .mjs file, a module whatever it holds).
  calls.moduleToCommonJs = function (source, path, always) {
    var program = acorn.parse(source, {
      sourceType: "module", ecmaVersion: "latest", allowHashBang: true,
    });
    if (!always && !isModule(program)) return null;
    var edits = [];  // [start, end, replacement], in source order
    var exported = [];  // [exported name, local name]
    program.body.forEach(function (node) {
      if (node.type === "ImportDeclaration" || node.type === "ExportAllDeclaration") {
        edits.push([node.start, node.end, required(node.source)]);
      } else if (node.type === "ExportNamedDeclaration") {
        if (node.source) {
          edits.push([node.start, node.end, required(node.source)]);
        } else if (node.declaration) {
          edits.push([node.start, node.declaration.start, ""]);
          declaredNames(node.declaration).forEach(function (n) { exported.push([n, n]); });
        } else {
          edits.push([node.start, node.end, ""]);
          node.specifiers.forEach(function (s) {
            exported.push([specifierName(s.exported), specifierName(s.local)]);
          });
        }
      } else if (node.type === "ExportDefaultDeclaration") {
        var declaration = node.declaration;
        var named = /Declaration$/.test(declaration.type) && declaration.id;
        if (named) {
          edits.push([node.start, declaration.start, ""]);
          exported.push(["default", declaration.id.name]);
        } else {
          edits.push([node.start, declaration.start, "var " + DEFAULT_NAME + " = "]);
          if (/Declaration$/.test(declaration.type)) {
            edits.push([declaration.end, declaration.end, ";"]);
          }
          exported.push(["default", DEFAULT_NAME]);
        }
      }
    });
    metaProperties(program, path).forEach(function (edit) { edits.push(edit); });
    edits.sort(function (a, b) { return a[0] - b[0]; });
    var out = "";
    var at = 0;
    edits.forEach(function (edit) {
      out += source.slice(at, edit[0]) + edit[2];
      at = edit[1];
    });
    out += source.slice(at);
    var getters = exported.map(function (pair) {
      return "Object.defineProperty(module.exports, " + JSON.stringify(pair[0]) +
        ", {enumerable: true, get: function () { return " + pair[1] + "; }});";
    });
    // on the module's first line, so the rest keeps its line numbers
    return "\"use strict\"; module.exports = Object.create(null); module.esNamespace = true; " +
      getters.join(" ") + " " + out;
  };

  // `import.meta` anywhere in the module, as the object Node gives (its `url`).
  function metaProperties(program, path) {
    var edits = [];
    var replacement = "({url: " + JSON.stringify("file://" + path) + "})";
    (function walk(node) {
      if (node === null || typeof node !== "object") return;
      if (Array.isArray(node)) { node.forEach(walk); return; }
      if (node.type === "MetaProperty" && node.meta.name === "import") {
        edits.push([node.start, node.end, replacement]);
        return;
      }
      Object.keys(node).forEach(function (key) {
        if (key !== "loc") walk(node[key]);
      });
    })(program);
    return edits;
  }
})(globalThis);
