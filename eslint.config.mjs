// ESLint over every JavaScript file hookviz ships (npm run lint; make lint runs it).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["hookviz/site/static/vendor/"] }, // lunr.min.js, as its authors ship it
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: { "no-unused-vars": ["error", { caughtErrors: "none" }] },
  },
  {
    // ES modules: each widget imports its helpers from common.js (widgets/base.py inlines them).
    files: ["hookviz/widgets/static/*.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
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
