// HookMonitor: a table of modules with live output statistics, a gradient view, a detail panel.
import {
  announcer,
  button,
  finite,
  fmt,
  followTheme,
  h,
  icon,
  onKeys,
  s,
  scrollable,
  sparkline,
  widgetRoot,
  words,
} from "./common.js";

const FLAGS = ["vanishing", "exploding", "nan/inf"]; // a gradient's flags, each with its words

function badTensor(t) {
  return Boolean(t && (t.nan || t.inf));
}

// min and max as shown: after "≈" when estimated from a sample (record's exact=False); the norm
// after "≈" when it is the sample's (an output's always, a gradient's with exact=False).
function extreme(t, k) {
  const estimated = k === "norm" ? t.norm_exact === false : t.exact === false;
  return `${estimated ? "≈" : ""}${fmt(t[k])}`;
}

// A gradient's flag, saying so when the norm behind it is a sample's estimate.
function flagText(t, row) {
  if (!row.flag) return "";
  const flag = FLAGS.includes(row.flag) ? t(`monitor.flag_${row.flag}`) : row.flag;
  return row.grad && row.grad.norm_exact === false ? t("monitor.flag_estimated", { flag }) : flag;
}

function warningText(t, row) {
  const notes = [];
  const out = row.out;
  if (out && out.nan) notes.push(t("monitor.nan_since", { step: out.bad_step }));
  else if (out && out.inf) notes.push(t("monitor.inf_since", { step: out.bad_step }));
  if (row.flag) notes.push(flagText(t, row));
  return notes.join(" · ");
}

// A histogram with its value range under it.
function bigHistogram(t, tensor, { width = 260, height = 64 } = {}) {
  const box = h(
    "div",
    { class: "hv-bighist" },
    sparkline(tensor.hist, t, { width, height, cls: "hv-spark hv-spark-big" }),
  );
  if (tensor.range)
    box.append(
      h(
        "div",
        { class: "hv-axis" },
        h("span", { text: fmt(tensor.range[0]) }),
        h("span", { text: fmt(tensor.range[1]) }),
      ),
    );
  return box;
}

// Recent values as a line, oldest on the left.
function trendLine(t, values, { width = 260, height = 40 } = {}) {
  const points = values.map((v, i) => [i, v]).filter(([, v]) => finite(v));
  const box = s("svg", {
    class: "hv-trend",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": t("monitor.trend"),
  });
  if (points.length < 2) return box;
  const lo = Math.min(...points.map((p) => p[1]));
  const hi = Math.max(...points.map((p) => p[1]));
  const span = hi - lo || 1;
  const x = (i) => (i / Math.max(1, values.length - 1)) * (width - 4) + 2;
  const y = (v) => height - 3 - ((v - lo) / span) * (height - 6);
  box.append(
    s("polyline", {
      points: points.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
    }),
  );
  return box;
}

// Values of a small tensor as coloured cells: blue below zero, orange above. A matrix keeps its
// rows; a vector wraps to the panel's width (each cell's title gives its index).
function heatmap(t, values) {
  const vector = !Array.isArray(values) || !Array.isArray(values[0]) || values.length === 1;
  const rows = !Array.isArray(values)
    ? [[values]]
    : vector
      ? [values.flat(Infinity)]
      : values.map((r) => r.flat(Infinity));
  const top = Math.max(...rows.flat().filter(finite).map(Math.abs), 1e-12);
  const cell = (v, index) => {
    const a = finite(v) ? Math.min(1, Math.abs(v) / top) : 0;
    const colour = v < 0 ? "0, 114, 178" : "230, 159, 0";
    return h("span", {
      class: finite(v) ? "hv-cell" : "hv-cell hv-warn",
      role: "cell",
      title: `[${index}] ${v}`,
      style: finite(v) ? `background: rgba(${colour}, ${(a * 0.85).toFixed(2)})` : "",
      text: fmt(v),
    });
  };
  return scrollable(
    h(
      "div",
      { class: vector ? "hv-heatmap hv-heatmap-vector" : "hv-heatmap", role: "table" },
      rows.map((row, i) =>
        h(
          "div",
          { class: "hv-heatmap-row", role: "row" },
          row.map((v, j) => cell(v, vector ? j : `${i}, ${j}`)),
        ),
      ),
    ),
    t("monitor.values"),
  );
}

// -- the heat map: each module's histogram over time -------------------------------------------

// A cell arrives as one character of the state's level_alphabet: its level, round(scale *
// log(1 + count)); 0 is empty. levelTable(alphabet)[code of a character] is its level.
function levelTable(alphabet) {
  const levelOf = new Uint8Array(128);
  [...alphabet].forEach((c, i) => {
    levelOf[c.charCodeAt(0)] = i;
  });
  return levelOf;
}
// viridis: dark to bright, readable by colour-blind readers and in grey.
const VIRIDIS = [
  [68, 1, 84],
  [72, 40, 120],
  [62, 73, 137],
  [49, 104, 142],
  [38, 130, 142],
  [31, 158, 137],
  [53, 183, 121],
  [110, 206, 88],
  [181, 222, 43],
  [253, 231, 37],
];
const SIGNALS = ["output", "gradient"]; // what the heat map shows: monitor.signal_<signal>

function viridis(t) {
  const x = Math.max(0, Math.min(1, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  return VIRIDIS[i].map((a, k) => Math.round(a + (VIRIDIS[i + 1][k] - a) * f));
}

function topLevel(panels, levelOf) {
  let top = 1;
  for (const p of panels)
    if (p)
      for (let i = 0; i < p.cells.length; i++) top = Math.max(top, levelOf[p.cells.charCodeAt(i)]);
  return top;
}

// One module's panel: its histogram per column as pixels (scaled up by CSS), values up.
function paintHeat(canvas, panel, columns, top, levelOf) {
  const bins = panel ? panel.bins : 1;
  canvas.width = Math.max(1, columns);
  canvas.height = bins;
  const context = canvas.getContext("2d");
  if (!panel || !columns) {
    context.clearRect(0, 0, canvas.width, canvas.height);
    return;
  }
  const image = context.createImageData(columns, bins);
  const cells = panel.cells;
  for (let c = 0; c < columns; c++) {
    for (let b = 0; b < bins; b++) {
      const level = levelOf[cells.charCodeAt(c * bins + b)];
      if (!level) continue; // empty: transparent, the theme's background shows
      const [r, g, bl] = viridis(level / top);
      const at = ((bins - 1 - b) * columns + c) * 4;
      image.data[at] = r;
      image.data[at + 1] = g;
      image.data[at + 2] = bl;
      image.data[at + 3] = 255;
    }
  }
  context.putImageData(image, 0, 0);
}

// Which steps a heat-map column holds: "step 12 of 40", or "steps 24–25 of 40" when a column
// is several steps wide (numbered from 0, as the heading's "steps 0–39").
function columnText(t, heat, column) {
  const first = column * (heat.span || 1);
  const last = Math.min(first + (heat.span || 1), heat.steps) - 1;
  const total = heat.steps;
  return last > first
    ? t("monitor.column_steps", { first, last, total })
    : t("monitor.column_step", { step: first, total });
}

// The scrubbing cursor: one column marked on every panel, its steps read out (and announced).
// It holds a step, not a column, so that it stays on its steps when columns merge.
function cursorView(t, markers) {
  const readout = h("span", { class: "hv-heat-cursor hv-mono" });
  const live = announcer();
  let step = null; // the first step of the column under the cursor; null: no cursor
  const columnOf = (heat) =>
    step === null || !heat.columns
      ? -1
      : Math.min(heat.columns - 1, Math.floor(step / (heat.span || 1)));
  function draw(heat, box) {
    const column = columnOf(heat);
    markers.forEach((marker) => {
      marker.hidden = column < 0;
      if (column < 0) return;
      marker.style.setProperty("--at", String(column / heat.columns));
      marker.style.setProperty("--wide", String(1 / heat.columns));
    });
    readout.textContent = column < 0 ? "" : columnText(t, heat, column);
    box.dataset.cursor = column < 0 ? "" : String(column);
  }
  // to(column, columns): where the cursor goes from `column` (-1: none yet).
  function move(heat, box, to) {
    if (!heat.columns) return;
    const column = Math.max(0, Math.min(heat.columns - 1, to(columnOf(heat), heat.columns)));
    step = column * (heat.span || 1);
    draw(heat, box);
    live.say(columnText(t, heat, column));
  }
  const hide = (heat, box) => {
    step = null;
    draw(heat, box);
  };
  return { readout, live, draw, move, hide };
}

// One module's heat map: its caption, value axis, canvas and scrub marker.
function heatPanel({ label, type_name: type }, i, onPick) {
  const canvas = h("canvas", { class: "hv-heat-canvas", width: 1, height: 1, role: "img" });
  const marker = h("span", { class: "hv-heat-marker", hidden: true, "aria-hidden": "true" });
  const hi = h("span"),
    lo = h("span");
  const note = h("span", { class: "hv-muted hv-heat-none" });
  const figure = h(
    "figure",
    { class: "hv-heat", "data-index": i, "data-path": label, onclick: () => onPick(i) },
    h(
      "figcaption",
      {},
      h("span", { class: "hv-mono", text: label }),
      label === type ? null : h("span", { class: "hv-muted", text: ` ${type}` }),
    ),
    h(
      "div",
      { class: "hv-heat-body" },
      h("div", { class: "hv-heat-axis hv-mono" }, hi, lo),
      h("div", { class: "hv-heat-plot" }, canvas, marker),
    ),
    note,
  );
  return { figure, canvas, marker, hi, lo, note, label };
}

// The outputs / gradients switch: one button per signal.
function signalSwitch(t, model) {
  return SIGNALS.map((signal) => {
    const text = t(`monitor.signal_${signal}`);
    const b = button(
      text,
      () => {
        model.set("heatmap_signal", signal);
        model.save_changes();
      },
      { cls: "hv-signal hv-with-text", title: t("monitor.signal_title", { signal: text }) },
    );
    b.dataset.signal = signal;
    return b;
  });
}

// Paint one module's panel: its histogram over the steps, its axis, its label for readers.
function paintPanel(t, p, panel, { heat, signal, columns, top, levelOf }) {
  paintHeat(p.canvas, panel, columns, top, levelOf);
  p.hi.textContent = panel ? fmt(panel.hi) : "";
  p.lo.textContent = panel ? fmt(panel.lo) : "";
  p.note.textContent = panel ? "" : t(`monitor.none_${signal}`);
  p.figure.dataset.filled = panel ? "true" : "false";
  const label = p.label;
  p.canvas.setAttribute(
    "aria-label",
    panel
      ? t("monitor.panel_label", {
          label,
          signal: t(`monitor.signal_${signal}`),
          steps: heat.steps,
          lo: fmt(panel.lo),
          hi: fmt(panel.hi),
        })
      : t("monitor.panel_empty", { label }),
  );
}

function heatView(t, model, modules, onPick) {
  const levelOf = levelTable(model.get("level_alphabet"));
  const panels = modules.map((module, i) => heatPanel(module, i, onPick));
  const cursor = cursorView(
    t,
    panels.map((p) => p.marker),
  );
  const signalButtons = signalSwitch(t, model);
  const steps = h("span", { class: "hv-muted" });
  const legendBar = h("span", { class: "hv-heat-legend-bar" });
  const legendTop = h("span", { class: "hv-mono" });
  const box = h(
    "div",
    { class: "hv-heat-view" },
    h(
      "div",
      { class: "hv-heat-head" },
      h(
        "div",
        { class: "hv-switch", role: "group", "aria-label": t("monitor.signal_group") },
        signalButtons,
      ),
      steps,
      cursor.readout,
    ),
    h(
      "div",
      { class: "hv-heat-grid" },
      panels.map((p) => p.figure),
    ),
    h(
      "div",
      { class: "hv-heat-legend hv-muted" },
      h("span", { text: t("monitor.legend_colour") }),
      legendBar,
      legendTop,
      h("span", { text: ` · ${t("monitor.legend_axes")}` }),
    ),
    cursor.live.node,
  );

  let drawn = [{}];
  function draw(selected) {
    const heat = model.get("heatmap") || {};
    const signal = model.get("gradients") ? model.get("heatmap_signal") : "output";
    // A snapshot and a heat map often arrive in one message: paint once.
    if (drawn[0] === heat && drawn[1] === signal && drawn[2] === selected) return;
    drawn = [heat, signal, selected];
    paint(heat, signal, selected);
    cursor.draw(heat, box);
  }

  function paint(heat, signal, selected) {
    const shown = heat[signal] || [];
    const columns = heat.columns || 0;
    const top = topLevel(shown, levelOf);
    box.dataset.signal = signal;
    box.dataset.columns = String(columns);
    box.dataset.steps = String(heat.steps || 0);
    signalButtons.forEach((b) => {
      b.hidden = !model.get("gradients");
      b.setAttribute("aria-pressed", b.dataset.signal === signal ? "true" : "false");
      b.classList.toggle("hv-on", b.dataset.signal === signal);
    });
    const span = heat.span || 1;
    const spanText = span > 1 ? ` · ${t("monitor.heat_span", { span })}` : "";
    steps.textContent = columns
      ? `${t("monitor.heat_steps", { last: heat.steps - 1 })}${spanText}`
      : "";
    legendTop.textContent = `${fmt(Math.expm1(top / (heat.scale || 7)))}`;
    panels.forEach((p, i) => {
      paintPanel(t, p, shown[i], { heat, signal, columns, top, levelOf });
      p.figure.classList.toggle("hv-selected", i === selected);
    });
  }
  // Scrubbing moves over the heat map as painted (a frozen view keeps its columns).
  const scrub = (to) => cursor.move(drawn[0], box, to);
  const unscrub = () => cursor.hide(drawn[0], box);
  return { box, draw, scrub, unscrub, dispose: cursor.live.dispose };
}

// The title, the view switch (table or heat map), recording or stopped, freeze, warnings.
function headerView(t, model, hasHeat, onFreeze) {
  const offline = Boolean(model.get("offline"));
  const setView = (view) => {
    model.set("view", view);
    model.save_changes();
  };
  const status = h("span", { class: "hv-status" });
  const freeze = button(t("monitor.freeze"), onFreeze, {
    cls: "hv-freeze hv-with-text",
    iconName: "pause",
    title: t("monitor.freeze_title"),
  });
  const warnCount = h("span", { class: "hv-warn hv-warncount" });
  const note = h("span", { class: "hv-muted hv-estimated" });
  const viewTabs = ["table", "heatmap"].map((view) => {
    const text = t(`monitor.view_${view}`);
    const tab = button(text, () => setView(view), {
      cls: "hv-tab hv-with-text",
      title: t("monitor.view_title", { view: text }),
    });
    tab.setAttribute("role", "tab");
    tab.dataset.view = view;
    return tab;
  });
  const tabs = h(
    "div",
    { class: "hv-switch hv-tabs", role: "tablist", "aria-label": t("monitor.view_group") },
    viewTabs,
  );
  tabs.hidden = !hasHeat;
  const node = h(
    "div",
    { class: "hv-header" },
    h("span", { class: "hv-title", text: model.get("title") }),
    tabs,
    status,
    note,
    freeze,
    warnCount,
  );
  let shownFrozen = false;
  const draw = (snap, view, frozen, warnings) => {
    const state = t(snap.running ? "monitor.recording" : "monitor.stopped");
    const steps = t("monitor.steps", { count: snap.steps || 0 });
    status.textContent = `${state} · ${steps}${frozen ? ` · ${t("monitor.frozen")}` : ""}`;
    // On a page (no kernel) an ended recording never changes: nothing to freeze. In a kernel
    // a stopped monitor may record again (`with monitor:`), so freezing still means something.
    freeze.hidden = offline && !snap.running && !frozen;
    note.textContent = snap.note ? `≈ ${snap.note}` : "";
    viewTabs.forEach((tab) => {
      tab.setAttribute("aria-selected", tab.dataset.view === view ? "true" : "false");
      tab.classList.toggle("hv-on", tab.dataset.view === view);
    });
    if (frozen !== shownFrozen) {
      shownFrozen = frozen;
      freeze.classList.toggle("hv-on", frozen);
      freeze.replaceChildren(
        icon(frozen ? "play" : "pause"),
        h("span", { text: t(frozen ? "monitor.resume" : "monitor.freeze") }),
      );
    }
    const warned = warnings === 1 ? "monitor.warnings_one" : "monitor.warnings";
    warnCount.textContent = warnings ? t(warned, { count: warnings }) : "";
  };
  return { node, draw, setView, canFreeze: () => !freeze.hidden };
}

// How a column's cell shows its row, by the column's key. Which columns there are, their
// headings and their order come from Python (the table_columns trait); module and class are
// written once, when the table is made.
const FIXED_CELLS = {
  module: (cell, { label, depth }) =>
    cell.append(h("span", { style: `padding-left:${depth * 12}px`, text: label })),
  class: (cell, { type_name: type }) => {
    cell.textContent = type;
  },
};
const statCell =
  (k) =>
  (cell, { out }) => {
    cell.textContent = out ? fmt(out[k]) : "";
  };
const extremeCell =
  (k) =>
  (cell, { out }, t) => {
    cell.textContent = out ? extreme(out, k) : "";
    cell.title = out && out.exact === false ? t("monitor.cell_estimated") : "";
  };
// Each live cell is filled as cell(td, row, t).
const LIVE_CELLS = {
  calls: (cell, row) => {
    cell.textContent = String(row.calls);
  },
  // a complex output's statistics are its magnitude's: "|z|" after the shape
  output: (cell, { out }) => {
    cell.textContent = out ? `${out.shape}${out.magnitude ? " |z|" : ""}` : "";
  },
  mean: statCell("mean"),
  std: statCell("std"),
  min: extremeCell("min"),
  max: extremeCell("max"),
  histogram: (cell, { out }, t) => {
    cell.replaceChildren(out ? sparkline(out.hist, t) : "");
    cell.classList.toggle("hv-bad", badTensor(out));
  },
  grad_norm: (cell, { grad }) => {
    cell.textContent = grad ? extreme(grad, "norm") : "";
  },
  warnings: (cell, row, t) => {
    const warning = warningText(t, row);
    cell.textContent = warning;
    cell.className = `hv-c-warnings${warning ? " hv-warn" : ""}`;
  },
};

// The table: one row per module, cells updated in place.
function tableView(t, modules, columns, onPick) {
  // Each cell carries its column's key as a class: a narrow panel hides columns by priority
  // (hook_monitor.css), never the module, the gradient norm or the warnings.
  const numeric = (c) => `hv-c-${c.key}${c.numeric ? " hv-num" : ""}`;
  const cellsOf = [];
  const rowsEl = modules.map((shown, i) => {
    const cells = columns.map((c) => {
      const cell = h("td", { class: numeric(c) });
      if (FIXED_CELLS[c.key]) FIXED_CELLS[c.key](cell, shown);
      return [c.key, cell];
    });
    cellsOf.push(cells.filter(([key]) => LIVE_CELLS[key]));
    return h(
      "tr",
      { class: "hv-mrow", "data-index": i, "data-path": shown.label, onclick: () => onPick(i) },
      cells.map(([, cell]) => cell),
    );
  });
  const table = h(
    "table",
    { class: "hv-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.map((c) => h("th", { class: numeric(c), "data-key": c.key, text: c.label })),
      ),
    ),
    h("tbody", {}, rowsEl),
  );
  const node = scrollable(h("div", { class: "hv-table-panel" }, table), t("monitor.table_region"));

  // Returns how many modules have a warning.
  function draw(rows, selected) {
    let warnings = 0;
    rows.forEach((row, i) => {
      for (const [key, cell] of cellsOf[i]) LIVE_CELLS[key](cell, row, t);
      const warning = Boolean(warningText(t, row));
      if (warning) warnings += 1;
      rowsEl[i].classList.toggle("hv-selected", i === selected);
      rowsEl[i].classList.toggle("hv-row-warn", warning);
      rowsEl[i].setAttribute("aria-selected", i === selected ? "true" : "false");
    });
    return warnings;
  }
  return { node, draw };
}

function tensorBlock(t, title, tensor, trendLabel, note) {
  if (!tensor)
    return h(
      "div",
      { class: "hv-block" },
      h("h4", { text: title }),
      h("span", { class: "hv-muted", text: t("monitor.not_seen") }),
    );
  // A sampled tensor: mean, std, norm and histogram come from its sample; min, max and NaN/Inf
  // too when the recording is not exact (the snapshot's note says so).
  const sampleNote = ` · ${tensor.exact === false ? note : t("monitor.sampled")}`;
  const stats = t("monitor.stats", {
    mean: fmt(tensor.mean),
    std: fmt(tensor.std),
    min: extreme(tensor, "min"),
    max: extreme(tensor, "max"),
    norm: extreme(tensor, "norm"),
  });
  const block = h(
    "div",
    { class: "hv-block" },
    h("h4", { text: title }),
    h(
      "div",
      { class: "hv-mono" },
      `${tensor.dtype} [${tensor.shape}]`,
      tensor.magnitude
        ? h("span", { class: "hv-muted", text: ` · ${t("monitor.magnitude")}` })
        : null,
      tensor.sampled ? h("span", { class: "hv-muted hv-sample-note", text: sampleNote }) : null,
    ),
    h("div", { class: "hv-mono hv-stats" }, stats),
    bigHistogram(t, tensor),
  );
  if (tensor.nan || tensor.inf)
    block.append(
      h("div", {
        class: "hv-warn",
        text: t("monitor.bad_tensors", { nan: tensor.nan, inf: tensor.inf, step: tensor.bad_step }),
      }),
    );
  if (tensor.trend && tensor.trend.length > 1)
    block.append(h("div", { class: "hv-muted", text: trendLabel }), trendLine(t, tensor.trend));
  if (tensor.values !== null && tensor.values !== undefined)
    block.append(
      h("div", { class: "hv-muted", text: t("monitor.values") }),
      heatmap(t, tensor.values),
    );
  return block;
}

// The selected module: its output and its gradient, in full.
function detailView(t, model, modules) {
  const node = h("div", { class: "hv-panel hv-detail" });
  function draw(row, i, note) {
    node.hidden = !row;
    if (!row) return;
    const { label, type_name: type } = modules[i];
    node.replaceChildren(
      h(
        "div",
        { class: "hv-detail-title" },
        h("b", { text: label }),
        h("span", {
          class: "hv-muted",
          text: ` ${type} · ${t("monitor.calls", { count: row.calls })}`,
        }),
      ),
      tensorBlock(t, t("monitor.output"), row.out, t("monitor.output_trend"), note),
      model.get("gradients")
        ? tensorBlock(t, t("monitor.gradient"), row.grad, t("monitor.gradient_trend"), note)
        : null,
    );
  }
  return { node, draw };
}

// Every module's gradient norm as a bar on a log scale, flagged when vanishing or exploding.
function gradientsView(t, model, modules) {
  const node = h("div", { class: "hv-panel hv-grads" });
  function draw(rows) {
    const limits = model.get("thresholds");
    node.hidden = !model.get("gradients");
    if (node.hidden) return;
    const norms = rows.map((r) => (r.grad ? r.grad.norm : null));
    const logs = norms.filter((v) => finite(v) && v > 0).map(Math.log10);
    const lo = logs.length ? Math.floor(Math.min(...logs, Math.log10(limits.vanishing))) : -6;
    const hi = logs.length ? Math.ceil(Math.max(...logs, 0)) : 1;
    const lines = rows.map((row, i) => {
      const v = norms[i];
      let fraction = 0;
      if (typeof v === "string") fraction = 1;
      else if (finite(v) && v > 0) fraction = (Math.log10(v) - lo) / Math.max(1e-9, hi - lo);
      const cls = row.flag ? "hv-gbar hv-gbar-flag" : "hv-gbar";
      return h(
        "div",
        { class: "hv-gline", "data-path": modules[i].label },
        h("span", { class: "hv-glabel", text: modules[i].label }),
        h(
          "span",
          { class: "hv-gtrack" },
          h("span", {
            class: cls,
            style: `width:${(Math.max(0, Math.min(1, fraction)) * 100).toFixed(1)}%`,
          }),
        ),
        h("span", {
          class: "hv-gvalue hv-mono",
          text:
            v === null ? "–" : `${row.grad && row.grad.norm_exact === false ? "≈" : ""}${fmt(v)}`,
        }),
        h("span", { class: "hv-warn", text: flagText(t, row) }),
      );
    });
    node.replaceChildren(
      h("h4", { text: t("monitor.grads_title", { lo, hi }) }),
      ...lines,
      h("div", {
        class: "hv-muted hv-legend",
        text: t("monitor.grads_legend", {
          low: fmt(limits.vanishing),
          high: fmt(limits.exploding),
        }),
      }),
    );
  }
  return { node, draw };
}

// The keys, shown under the monitor; space (freeze) only while there is something to freeze.
function keysLine(t, hasHeat) {
  const freeze = h("span", { text: ` · ${t("monitor.keys_freeze")}` });
  const node = h(
    "div",
    { class: "hv-keys" },
    t("monitor.keys"),
    freeze,
    hasHeat ? ` · ${t("monitor.keys_heat")}` : "",
  );
  return { node, draw: (canFreeze) => (freeze.hidden = !canFreeze) };
}

// The monitor's keys: ↑/↓ choose a module, space freezes, V and G switch, ←/→ scrub.
function monitorKeys(model, modules, hasHeat, { heat, header, toggleFreeze }) {
  const move = (delta) => {
    const n = modules.length;
    const current = model.get("selected");
    const next =
      current < 0 ? (delta > 0 ? 0 : n - 1) : Math.max(0, Math.min(n - 1, current + delta));
    model.set("selected", next);
    model.save_changes();
  };
  // In the heat map, ←/→ move the cursor a column (the first press: to the first or last one),
  // Home/End to the first or last column; in the table, Home/End choose the first or last module.
  const heatShown = () => hasHeat && model.get("view") === "heatmap";
  const step = (delta) =>
    heat.scrub((at, columns) => (at < 0 ? (delta > 0 ? 0 : columns - 1) : at + delta));
  return {
    " ": () => header.canFreeze() && toggleFreeze(),
    ArrowDown: () => move(1),
    ArrowUp: () => move(-1),
    ArrowRight: () => {
      if (heatShown()) step(1);
    },
    ArrowLeft: () => {
      if (heatShown()) step(-1);
    },
    Home: () => (heatShown() ? heat.scrub(() => 0) : move(-modules.length)),
    End: () => (heatShown() ? heat.scrub((at, columns) => columns - 1) : move(modules.length)),
    Escape: () => {
      heat.unscrub();
      model.set("selected", -1);
      model.save_changes();
    },
    v: () => {
      if (hasHeat) header.setView(model.get("view") === "heatmap" ? "table" : "heatmap");
    },
    g: () => {
      if (!hasHeat || !model.get("gradients")) return;
      model.set("heatmap_signal", model.get("heatmap_signal") === "output" ? "gradient" : "output");
      model.save_changes();
    },
  };
}

function render({ model, el }) {
  const modules = model.get("modules");
  const hasHeat = Object.keys(model.get("heatmap") || {}).length > 0;
  let frozen = false;
  const select = (i) => {
    model.set("selected", i === model.get("selected") ? -1 : i);
    model.save_changes();
  };
  const toggleFreeze = () => {
    frozen = !frozen;
    draw();
  };

  const t = words(model);
  const root = widgetRoot("hv-monitor", t(hasHeat ? "monitor.root_heat" : "monitor.root"), t);
  const header = headerView(t, model, hasHeat, toggleFreeze);
  const table = tableView(t, modules, model.get("table_columns"), select);
  const detail = detailView(t, model, modules);
  const grads = gradientsView(t, model, modules);
  const heat = heatView(t, model, modules, select);
  const empty = h("div", { class: "hv-muted hv-empty", text: t("monitor.empty") });
  const lower = h("div", { class: "hv-lower" }, grads.node, detail.node);
  const keysHelp = keysLine(t, hasHeat);
  root.append(header.node, empty, table.node, lower, heat.box, keysHelp.node);
  el.append(root);

  function draw() {
    const snap = model.get("snapshot") || {};
    const rows = snap.rows || [];
    const selected = model.get("selected");
    const view = hasHeat ? model.get("view") : "table";
    root.dataset.steps = String(snap.steps || 0);
    root.dataset.running = snap.running ? "true" : "false";
    root.dataset.view = view;
    empty.hidden = rows.some((r) => r.calls > 0);
    table.node.hidden = lower.hidden = view !== "table";
    heat.box.hidden = view !== "heatmap";
    if (view === "heatmap") heat.draw(selected);
    const warnings = table.draw(rows, selected);
    header.draw(snap, view, frozen, warnings);
    keysHelp.draw(header.canFreeze());
    detail.draw(rows[selected], selected, snap.note);
    grads.draw(rows);
  }

  const keys = monitorKeys(model, modules, hasHeat, { heat, header, toggleFreeze });
  const onView = () => draw();
  const onHeatmap = () => {
    if (!frozen && model.get("view") === "heatmap") heat.draw(model.get("selected"));
  };
  const onSnapshot = () => {
    if (!frozen) draw();
  };
  const listeners = {
    "change:view": onView,
    "change:heatmap_signal": onView,
    "change:heatmap": onHeatmap,
    "change:selected": onView,
    "change:snapshot": onSnapshot,
  };
  for (const [name, f] of Object.entries(listeners)) model.on(name, f);
  const cleanups = [
    followTheme(root, model),
    onKeys(root, keys),
    heat.dispose,
    () => {
      for (const [name, f] of Object.entries(listeners)) model.off(name, f);
    },
  ];
  draw();
  return () => cleanups.forEach((f) => f());
}

export default { render };
