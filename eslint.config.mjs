// ESLint over every JavaScript file hookviz ships (npm run lint; make lint runs it).
import { readFileSync } from "node:fs";

import js from "@eslint/js";
import * as espree from "espree";
import globals from "globals";

const COMMON = "hookviz/widgets/static/common.js";

// Python sends common.js and then a widget's own file as one ES module (widgets/base.py), so
// what common.js declares at its top level is in scope in every widget file: read, never listed.
function topLevelNames(path) {
  const program = espree.parse(readFileSync(path, "utf8"), {
    ecmaVersion: "latest",
    sourceType: "module",
  });
  return program.body.flatMap((node) => {
    if (node.type === "VariableDeclaration") return node.declarations.map((d) => d.id.name);
    return node.id ? [node.id.name] : [];
  });
}

const shared = Object.fromEntries(topLevelNames(COMMON).map((name) => [name, "readonly"]));

export default [
  { ignores: ["hookviz/site/static/vendor/"] }, // lunr.min.js, as its authors ship it
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: { "no-unused-vars": ["error", { caughtErrors: "none" }] },
  },
  {
    files: ["hookviz/widgets/static/*.js"],
    ignores: [COMMON],
    languageOptions: { sourceType: "module", globals: { ...globals.browser, ...shared } },
  },
  {
    // Read as a classic script, its top-level names are globals: no-unused-vars leaves them to
    // the widget files sent after it (vars: "local"), where no-undef checks every use.
    files: [COMMON],
    languageOptions: { sourceType: "script", globals: globals.browser },
    rules: { "no-unused-vars": ["error", { vars: "local", caughtErrors: "none" }] },
  },
  {
    // The site's own files are classic scripts (they reach lunr.js through window).
    files: ["hookviz/site/static/*.js"],
    languageOptions: { sourceType: "script", globals: globals.browser },
  },
  {
    files: ["eslint.config.mjs"],
    languageOptions: { globals: globals.node },
  },
];
