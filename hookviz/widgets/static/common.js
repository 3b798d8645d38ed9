// hookviz: helpers shared by every widget, imported by each widget's file. anywidget loads one
// module per widget: widgets/base.py's front_end() inlines this file where a widget imports it.

const SVG_NS = "http://www.w3.org/2000/svg";

// h("div", {class: "x", text: "hi", onclick: f}, child, ...): a DOM element.
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttributes(node, attrs);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttributes(node, attrs);
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

function setAttributes(node, attrs) {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
}

// Words: every word a widget shows is a key of the message table Python sends in the widget's
// language (the "messages" and "lang" traits, from hookviz/widgets/messages/<lang>.json).
// t(key, {name: value}) is its text with each {name} filled; t.lang is the language.
export function words(model) {
  const table = model.get("messages") || {};
  const t = (key, params = {}) => {
    const text = Object.hasOwn(table, key) ? table[key] : key;
    return text.replace(/\{(\w+)\}/g, (whole, name) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
  };
  t.lang = model.get("lang") || "en";
  return t;
}

// Icons as inline SVG: icon fonts are not loaded everywhere (Colab), emoji fonts neither.
const ICON_PATHS = {
  start: "M3 2h2v12H3zM14 2v12L6 8z",
  back: "M13 2v12L5 8zM3 2h2v12H3z",
  play: "M4 2v12l10-6z",
  pause: "M4 2h3v12H4zM9 2h3v12H9z",
  forward: "M3 2v12l8-6zM11 2h2v12h-2z",
  end: "M2 2v12l8-6zM11 2h2v12h-2z",
  remove:
    "M3.5 2.1L8 6.6l4.5-4.5 1.4 1.4L9.4 8l4.5 4.5-1.4 1.4L8 9.4l-4.5 4.5-1.4-1.4L6.6 8 2.1 3.5z",
  caret: "M5 3l6 5-6 5z",
  refresh: "M8 2a6 6 0 1 0 6 6h-2a4 4 0 1 1-1.2-2.8L8.5 7.5H14V2l-1.8 1.8A6 6 0 0 0 8 2z",
};

export function icon(name) {
  return s(
    "svg",
    { viewBox: "0 0 16 16", width: 14, height: 14, "aria-hidden": "true" },
    s("path", { d: ICON_PATHS[name], fill: "currentColor" }),
  );
}

// A button that does not take focus on click, so the widget keeps its keyboard focus.
export function button(label, onClick, { iconName = null, cls = "", title = label } = {}) {
  const b = h("button", {
    type: "button",
    class: `hv-button ${cls}`.trim(),
    title,
    "aria-label": title,
  });
  if (iconName) b.append(icon(iconName));
  if (!iconName || cls.includes("hv-with-text")) b.append(h("span", { text: label }));
  b.addEventListener("mousedown", (event) => event.preventDefault());
  b.addEventListener("click", onClick);
  return b;
}

// The root of every widget: focusable, so that its keys reach it; in the language of `t`.
export function widgetRoot(kind, label, t) {
  return h("div", {
    class: `hv-root ${kind}`,
    tabindex: 0,
    role: "group",
    "aria-label": label,
    lang: t.lang,
  });
}

// The widget's keys, taken before the notebook can read them as shortcuts. JupyterLab reads its
// shortcuts as a key bubbles up to the document, Notebook 7 as it goes down (capture): only a
// listener on the window, in the capture phase, comes before both. `handle(event)` says whether
// it used the key; every other key (Shift+Enter, Tab...) goes on as usual. Returns the cleanup.
export function takeKeys(root, handle) {
  const listener = (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (!root.contains(event.target) || !handle(event)) return;
    event.preventDefault();
    event.stopPropagation();
  };
  window.addEventListener("keydown", listener, true);
  return () => window.removeEventListener("keydown", listener, true);
}

// keys: {" ": fn, ArrowRight: fn, ...}, while the focus is in the widget. Form controls keep
// their own keys, except space; a button keeps Enter and space. Returns the cleanup.
export function onKeys(root, keys) {
  // A click anywhere but in a form control gives the widget the keys (buttons never keep focus).
  root.addEventListener("mousedown", (event) => {
    if (!["INPUT", "SELECT"].includes(event.target.tagName)) root.focus({ preventScroll: true });
  });
  return takeKeys(root, (event) => {
    const tag = event.target.tagName;
    if (
      (tag === "BUTTON" && (event.key === " " || event.key === "Enter")) ||
      ((tag === "INPUT" || tag === "SELECT") && event.key !== " ")
    ) {
      // The control's own key (a button's Enter, a slider's arrows): its default action goes
      // on, and the notebook does not also read it as a shortcut. Shift+Enter still runs the cell.
      if (!event.shiftKey && event.key !== "Tab") event.stopPropagation();
      return false;
    }
    const action = keys[event.key];
    if (!action) return false;
    action(event);
    return true;
  });
}

// A region that scrolls: focusable, so that a keyboard alone can scroll it, and named (a
// region, unless it has a role already). Returns the node.
export function scrollable(node, label) {
  node.classList.add("hv-scroll");
  setAttributes(node, {
    tabindex: 0,
    "aria-label": label,
    role: node.getAttribute("role") || "region",
  });
  return node;
}

// A polite live region: screen readers read each step the widget shows. Steps that come faster
// than `gap` ms (playing, a key held down) are read as the latest one once the gap has passed.
export function announcer(gap = 700) {
  const node = h("div", {
    class: "hv-sr-only",
    role: "status",
    "aria-live": "polite",
    "aria-atomic": "true",
  });
  let last = -Infinity;
  let timer = null;
  let pending = null;
  const flush = () => {
    timer = null;
    if (pending === null) return;
    node.textContent = pending;
    pending = null;
    last = performance.now();
  };
  const say = (text) => {
    pending = text;
    const wait = last + gap - performance.now();
    if (wait <= 0) flush();
    else if (timer === null) timer = setTimeout(flush, wait);
  };
  const dispose = () => {
    if (timer !== null) clearTimeout(timer);
  };
  return { node, say, dispose };
}

// Light or dark: 'auto' follows JupyterLab (data-jp-theme-light), VS Code, or the system, also
// when one of them changes while the page is open.
export function followTheme(root, model) {
  const system = window.matchMedia("(prefers-color-scheme: dark)");
  const update = () => {
    const chosen = model.get("theme");
    let dark = chosen === "dark";
    if (chosen === "auto") {
      const lab = document.body.dataset.jpThemeLight;
      if (lab !== undefined) dark = lab === "false";
      else if (document.body.classList.contains("vscode-dark")) dark = true;
      else dark = system.matches;
    }
    root.classList.toggle("hv-dark", dark);
    root.classList.toggle("hv-forced", chosen !== "auto");
  };
  update();
  const observer = new MutationObserver(update);
  observer.observe(document.body, {
    attributes: true,
    attributeFilter: ["data-jp-theme-light", "class"],
  });
  system.addEventListener("change", update);
  model.on("change:theme", update);
  return () => {
    observer.disconnect();
    system.removeEventListener("change", update);
    model.off("change:theme", update);
  };
}

// Numbers as people read them; "nan" / "inf" arrive as text (strict JSON has no NaN).
export function fmt(x) {
  if (x === null || x === undefined) return "–";
  if (typeof x === "string") return x;
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e4 || a < 1e-3) return x.toExponential(2).replace("e+", "e");
  return String(Number(x.toPrecision(4)));
}

export function finite(x) {
  return typeof x === "number" && Number.isFinite(x);
}

// A 16-bin histogram as small bars.
export function sparkline(counts, t, { width = 64, height = 18, cls = "hv-spark" } = {}) {
  const box = s("svg", {
    class: cls,
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": t("common.histogram"),
  });
  if (!counts || !counts.length) return box;
  const top = Math.max(...counts, 1);
  const w = width / counts.length;
  counts.forEach((c, i) => {
    const bar = c ? Math.max(1, (c / top) * height) : 0;
    box.append(
      s("rect", {
        x: (i * w + 0.5).toFixed(1),
        y: (height - bar).toFixed(1),
        width: Math.max(1, w - 1).toFixed(1),
        height: bar.toFixed(1),
      }),
    );
  });
  return box;
}

// Play, pause and step through `length()` steps. The browser animates on its own: `step` is
// sent to the kernel once when playing stops, and once per step taken by hand.
export function createPlayer(model, { length, show }) {
  let step = model.get("step");
  let timer = null;
  let due = 0; // when the next frame is due: the pace holds however long drawing a frame takes
  const delay = () => 1000 / Math.max(0.1, model.get("speed") || 1);
  const schedule = () => {
    const now = performance.now();
    due = Math.max(due + delay(), now);
    timer = setTimeout(tick, due - now);
  };
  const commit = () => {
    if (model.get("step") !== step) {
      model.set("step", step);
      model.save_changes();
    }
  };
  const halt = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  const tick = () => {
    step = Math.min(step + 1, length());
    if (step >= length()) {
      timer = null;
      commit();
    } else schedule();
    show(step);
  };
  const player = {
    get step() {
      return step;
    },
    get playing() {
      return timer !== null;
    },
    go(to) {
      player.preview(to);
      commit();
    },
    preview(to) {
      halt();
      step = Math.max(0, Math.min(length(), to));
      show(step);
    }, // nothing sent yet
    play() {
      if (timer !== null) return;
      if (step >= length()) step = 0;
      due = performance.now();
      schedule();
      show(step);
    },
    pause() {
      if (timer === null) return;
      halt();
      commit();
      show(step);
    },
    toggle() {
      if (timer === null) player.play();
      else player.pause();
    },
    forward() {
      player.go(step + 1);
    },
    back() {
      player.go(step - 1);
    },
    start() {
      player.go(0);
    },
    end() {
      player.go(length());
    },
    reset() {
      halt();
      step = model.get("step");
      show(step);
    },
  };
  const fromKernel = () => {
    if (model.get("step") !== step) {
      halt();
      step = model.get("step");
      show(step);
    }
  };
  model.on("change:step", fromKernel);
  player.dispose = () => {
    halt();
    model.off("change:step", fromKernel);
  };
  return player;
}

const SPEEDS = [0.5, 1, 2, 4, 8, 16, 32, 64];

// The transport bar: start, back, play/pause, forward, end, speed. Returns the bar and a refresher.
// `noun` names what is played ("steps"), in the widget's words.
export function transport(model, player, t, noun) {
  const play = button(t("common.play"), () => player.toggle(), {
    iconName: "play",
    cls: "hv-play",
    title: t("common.play_title"),
  });
  const perSecond = t("common.per_second", { noun });
  const rate = (value) => t("common.rate", { value });
  const speed = h(
    "select",
    { class: "hv-speed", title: perSecond, "aria-label": perSecond },
    SPEEDS.map((v) => h("option", { value: v, text: rate(v) })),
  );
  speed.addEventListener("change", () => {
    model.set("speed", Number(speed.value));
    model.save_changes();
  });
  const onSpeed = () => {
    const value = String(model.get("speed"));
    if (![...speed.options].some((o) => o.value === value))
      speed.append(h("option", { value, text: rate(value) }));
    speed.value = value;
  };
  onSpeed();
  model.on("change:speed", onSpeed);
  const slider = h("input", {
    type: "range",
    class: "hv-slider",
    min: 0,
    value: player.step,
    "aria-label": noun,
  });
  // Dragging draws each step; the kernel hears of the step the slider is let go at.
  slider.addEventListener("input", () => player.preview(Number(slider.value)));
  slider.addEventListener("change", () => player.go(Number(slider.value)));
  const bar = h(
    "div",
    { class: "hv-transport" },
    button(t("common.start"), () => player.start(), {
      iconName: "start",
      title: t("common.start_title"),
    }),
    button(t("common.back"), () => player.back(), {
      iconName: "back",
      cls: "hv-back",
      title: t("common.back_title"),
    }),
    play,
    button(t("common.forward"), () => player.forward(), {
      iconName: "forward",
      cls: "hv-forward",
      title: t("common.forward_title"),
    }),
    button(t("common.end"), () => player.end(), {
      iconName: "end",
      cls: "hv-end",
      title: t("common.end_title"),
    }),
    slider,
    speed,
  );
  let shownPlaying = null;
  const refresh = (step, total) => {
    if (shownPlaying !== player.playing) {
      shownPlaying = player.playing;
      play.replaceChildren(icon(shownPlaying ? "pause" : "play"));
      play.title = t(shownPlaying ? "common.pause_title" : "common.play_title");
      play.setAttribute("aria-label", play.title);
      play.setAttribute("aria-pressed", shownPlaying ? "true" : "false");
    }
    slider.max = total;
    slider.value = step;
  };
  const dispose = () => model.off("change:speed", onSpeed);
  return { bar, refresh, dispose };
}

export function playerKeys(player, model) {
  const faster = (direction) => {
    const i = SPEEDS.indexOf(model.get("speed"));
    const next = SPEEDS[Math.max(0, Math.min(SPEEDS.length - 1, (i < 0 ? 2 : i) + direction))];
    model.set("speed", next);
    model.save_changes();
  };
  return {
    " ": () => player.toggle(),
    ArrowRight: () => player.forward(),
    ArrowLeft: () => player.back(),
    Home: () => player.start(),
    End: () => player.end(),
    "+": () => faster(1),
    "-": () => faster(-1),
  };
}
