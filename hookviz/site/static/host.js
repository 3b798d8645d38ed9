// hookviz site host: plays each widget's own ES module on a static page, with no kernel and
// nothing fetched. The builder's hookviz-widgets.js sets window.HOOKVIZ_WIDGETS = {name: {esm,
// css}}; each widget on the page is a .hv-site-widget with its state as JSON. Here: a model with
// anywidget's API over that state, a stand-in for what Python does on a message, and render().
(function () {
  "use strict";

  const KERNEL_NOTE =
    "Removing or refreshing hooks needs a running kernel: " +
    "open this notebook in JupyterLab or Colab and run it.";

  // -- loading the modules ---------------------------------------------------------------------

  // A module from its text, as anywidget does it: a Blob URL. A file:// page imports blob:
  // modules too (Chromium 156; only modules loaded by URL are blocked there); the data: URL is
  // the fallback for a browser or a Content-Security-Policy that refuses blob: scripts.
  async function importText(text) {
    const url = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    try {
      return await import(url);
    } catch (blobError) {
      try {
        return await import(`data:text/javascript;charset=utf-8,${encodeURIComponent(text)}`);
      } catch {
        throw blobError;
      }
    } finally {
      URL.revokeObjectURL(url);
    }
  }

  const loaded = new Map(); // widget name -> Promise of its module: one import per name

  function loadWidget(name) {
    if (!loaded.has(name)) {
      const files = (window.HOOKVIZ_WIDGETS || {})[name];
      if (!files)
        return Promise.reject(
          new Error(`no widget named ${JSON.stringify(name)} in hookviz-widgets.js`),
        );
      if (files.css) {
        const style = document.createElement("style");
        style.dataset.hookvizWidget = name;
        style.textContent = files.css;
        document.head.append(style);
      }
      loaded.set(
        name,
        importText(files.esm).then((module) => {
          const widget = typeof module.default === "function" ? module.default() : module.default;
          if (!widget || typeof widget.render !== "function")
            throw new Error(`${name}: its module exports no render()`);
          return widget;
        }),
      );
    }
    return loaded.get(name);
  }

  // -- the model: anywidget's API, Backbone's events ---------------------------------------------

  // Backbone fires change:<name> only when the value differs, deep equality (_.isEqual).
  function same(a, b) {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && same(a[k], b[k]));
  }

  // get/set/on/off/save_changes/send over `state`. As in Backbone, set() stores every value and
  // then fires change:<name> for each that changed, then "change", all before it returns.
  // `onMessage(content, buffers)` is what "Python" does with a send(), after the current event.
  function createModel(state, onMessage) {
    const attributes = { ...state, offline: true }; // offline: a view can tell no kernel listens
    const listeners = new Map(); // event name -> callbacks, in the order they came
    const names = (name) => String(name).split(/\s+/).filter(Boolean); // Backbone: "change:a change:b"
    const fire = (name, ...args) => {
      for (const callback of [...(listeners.get(name) || [])]) callback(...args);
    };
    const model = {
      get: (name) => attributes[name],
      set(key, value) {
        const changes = typeof key === "object" && key !== null ? key : { [key]: value };
        const changed = [];
        for (const [name, v] of Object.entries(changes)) {
          if (same(attributes[name], v)) continue;
          attributes[name] = v;
          changed.push(name);
        }
        for (const name of changed) fire(`change:${name}`, model, attributes[name]);
        if (changed.length) fire("change", model);
        return model;
      },
      on(name, callback) {
        for (const n of names(name)) listeners.set(n, [...(listeners.get(n) || []), callback]);
      },
      off(name, callback) {
        // no name: every event; no callback: every callback of that event
        const which = name === null || name === undefined ? [...listeners.keys()] : names(name);
        for (const n of which) {
          if (!callback) listeners.delete(n);
          else
            listeners.set(
              n,
              (listeners.get(n) || []).filter((f) => f !== callback),
            );
        }
      },
      save_changes() {}, // nothing to sync: the page is the only copy of the state
      send(content, callbacks, buffers) {
        // After the current event, as a kernel's reply would come: a view's handler finishes first.
        queueMicrotask(() => onMessage(content, buffers || []));
      },
      emit: (content, buffers = []) => fire("msg:custom", content, buffers), // "Python" to the view
    };
    return model;
  }

  // -- what Python does on a message (model logic only) ------------------------------------------

  // Python's repr() and type().__name__ of a JSON value, for the same error texts.
  const pyRepr = (v) =>
    v === null || v === undefined
      ? "None"
      : v === true
        ? "True"
        : v === false
          ? "False"
          : typeof v === "string"
            ? `'${v}'`
            : JSON.stringify(v);
  const pyType = (v) =>
    v === null || v === undefined
      ? "NoneType"
      : typeof v === "boolean"
        ? "bool"
        : typeof v === "number"
          ? Number.isInteger(v)
            ? "int"
            : "float"
          : typeof v === "string"
            ? "str"
            : Array.isArray(v)
              ? "list"
              : "dict";

  // hookviz.widgets.prediction.normalise: case folded (upper then lower, and one sigma: as
  // str.casefold does for ß, ligatures and ς), split on white space or commas, one space between.
  const casefold = (text) => text.toUpperCase().toLowerCase().replaceAll("ς", "σ");
  const normalise = (text) =>
    casefold(text)
      .split(/[\s,]+/u)
      .filter(Boolean)
      .join(" ");

  // What Python says, in the widget's words: its message table (the "messages" trait, in the
  // state the site stored); `english` for a state saved before widgets had tables.
  const say = (model, key, params, english) => {
    const table = model.get("messages") || {};
    const text = Object.hasOwn(table, key) ? table[key] : english;
    return text.replace(/\{(\w+)\}/g, (whole, name) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
  };

  class TypeProblem extends Error {}
  class ValueProblem extends Error {}

  // Prediction: Prediction._on_message, choose, answer_with and _reveal, on the page.
  // extras: {answer_index, why} (multiple choice) or {accepted, why} (short answer).
  function predictionStandIn(model, extras) {
    const multiple = () => model.get("choices").length > 0;
    const answered = () => model.get("state") === "answered";
    const reveal = (right, answerText, own) =>
      model.set({
        // in _reveal's order: state last
        ...own,
        correct: right,
        answer_text: answerText,
        why: extras.why,
        status: "",
        state: "answered",
      });
    const choose = (choice) => {
      const choices = model.get("choices");
      if (!multiple())
        throw new TypeProblem(
          "this prediction takes a short answer, not a choice: use answer_with(text).",
        );
      if (pyType(choice) !== "int")
        throw new TypeProblem(
          `choice must be the index of a choice (an int), got ${pyRepr(choice)}.`,
        );
      if (!(choice >= 0 && choice < choices.length)) {
        throw new ValueProblem(
          `choice=${choice} is not the index of a choice: pick 0 to ${choices.length - 1}.`,
        );
      }
      const right = extras.answer_index;
      reveal(choice === right, choices[right], { chosen: choice, answer_index: right });
    };
    const answerWith = (text) => {
      if (multiple()) {
        throw new TypeProblem(
          `this prediction is multiple choice: use choose(i) with i from 0 to ${model.get("choices").length - 1}.`,
        );
      }
      if (typeof text !== "string")
        throw new TypeProblem(`the answer must be a string, got ${pyType(text)}.`);
      if (!normalise(text))
        throw new ValueProblem("the answer is empty: write a prediction first.");
      const right = extras.accepted.some((accepted) => normalise(accepted) === normalise(text));
      reveal(right, extras.accepted[0], { given: text.split(/\s+/u).filter(Boolean).join(" ") });
    };
    return (content) => {
      const action =
        content && typeof content === "object" && !Array.isArray(content)
          ? content.action
          : undefined;
      if (action !== "choose" && action !== "answer") {
        const params = { action: pyRepr(action), actions: "choose, answer" };
        model.set(
          "status",
          say(
            model,
            "common.status_unknown",
            params,
            "unknown action {action}; expected one of {actions}",
          ),
        );
        return;
      }
      if (answered()) {
        const english = "already answered: only the first answer counts";
        model.set("status", say(model, "prediction.status_answered", {}, english));
        return;
      }
      try {
        if (action === "choose") choose(content.choice);
        else answerWith(content.text);
      } catch (error) {
        if (!(error instanceof TypeProblem || error instanceof ValueProblem)) throw error;
        const params = { action, error: error.message };
        model.set(
          "status",
          say(model, "common.status_failed", params, "could not {action}: {error}"),
        );
      }
    };
  }

  // HookInventory: the hooks live on a model in a kernel; here every action only says so.
  function inventoryStandIn(model) {
    return () => model.set("status", say(model, "inventory.kernel_note", {}, KERNEL_NOTE));
  }

  const STAND_INS = { prediction: predictionStandIn, hook_inventory: inventoryStandIn };

  // -- mounting ----------------------------------------------------------------------------------

  const models = [];
  const cleanups = [];

  function readData(container) {
    const script = container.querySelector(':scope > script[type="application/json"]');
    if (!script) throw new Error('no <script type="application/json"> with the widget\'s state');
    const data = JSON.parse(script.textContent);
    return { state: data.state || {}, extras: data.extras || {} };
  }

  async function mount(container) {
    const name = container.dataset.widget;
    const view = document.createElement("div");
    view.className = "hv-site-view";
    try {
      const { state, extras } = readData(container);
      const widget = await loadWidget(name);
      let handle = () => {}; // others: Python ignores their messages
      const model = createModel(state, (content, buffers) => handle(content, buffers));
      if (STAND_INS[name]) handle = STAND_INS[name](model, extras);
      model.widget = name; // for tests and benchmarks: which widget, where
      model.container = container;
      container.append(view);
      if (typeof widget.initialize === "function") await widget.initialize({ model });
      const cleanup = await widget.render({ model, el: view });
      if (typeof cleanup === "function") cleanups.push(cleanup);
      models.push(model);
      for (const fallback of container.querySelectorAll(":scope > .hv-site-fallback"))
        fallback.remove();
      container.dataset.hvMounted = "true";
    } catch (error) {
      view.remove(); // the fallback stays: the widget's repr is better than half a widget
      container.dataset.hvError = String(error && error.message ? error.message : error);
      console.error(`hookviz: the ${name} widget could not be shown`, error);
    }
  }

  // Resolves once every widget on the page has mounted or failed (then data-hv-error says why).
  function mountAll() {
    const containers = [...document.querySelectorAll(".hv-site-widget")];
    return Promise.all(containers.map(mount)).then(() => {
      models.sort((a, b) => containers.indexOf(a.container) - containers.indexOf(b.container));
      return {
        mounted: containers.filter((c) => c.dataset.hvMounted === "true").length,
        failed: containers.filter((c) => c.dataset.hvError !== undefined).length,
      };
    });
  }

  const domReady =
    document.readyState === "loading"
      ? new Promise((resolve) =>
          document.addEventListener("DOMContentLoaded", resolve, { once: true }),
        )
      : Promise.resolve();

  window.hookvizHost = {
    ready: domReady.then(mountAll),
    models, // in page order once ready; each has .widget (its name) and .container
    dispose: () => cleanups.splice(0).forEach((f) => f()), // every render's cleanup
  };
})();
