// CompiledTimeline: each hook's firings eagerly (left) and under torch.compile (right), played
// moment by moment. Both sides have one column per moment, so a firing and its counterpart
// stand at the same place; torch's graph breaks and recompiles are bands on the compiled side.
import {
  announcer,
  createPlayer,
  followTheme,
  h,
  onKeys,
  playerKeys,
  s,
  scrollable,
  transport,
  widgetRoot,
  words,
} from "./common.js";

const COL = 16; // a moment's column: at least this wide, wider when the side has room
const COL_MAX = 40;
const ROW = 22;
const GUTTER = 130;
const TOP = 24;

const laneY = (lane) => TOP + lane * ROW + ROW / 2;

// A hook's mark, its kind's shape and colour (hookviz/hook_kinds.py, through the "kinds" trait):
// filled where it ran (eagerly, or inside a graph), hollow where the compiled run called it
// eagerly, outside the graphs.
function mark(kind, kinds, x, y, hollow) {
  const { shape, colour } = kinds[kind];
  const style = hollow ? `stroke: var(--hv-${colour})` : `fill: var(--hv-${colour})`;
  const cls = `hv-mark hv-k-${kind}${hollow ? " hv-hollow" : ""}`;
  if (shape === "square")
    return s("rect", { x: x - 5, y: y - 5, width: 10, height: 10, class: cls, style });
  return s("circle", { cx: x, cy: y, r: 5, class: cls, style });
}

// A firing the compiled run does not have: a cross where its mark would be.
function cross(x, y) {
  return s("path", {
    d: `M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x + 4} ${y - 4}L${x - 4} ${y + 4}`,
    class: "hv-missing",
  });
}

function symbol(...shapes) {
  return s(
    "svg",
    { width: 14, height: 14, viewBox: "-7 -7 14 14", "aria-hidden": "true" },
    ...shapes,
  );
}

// The hook's kind in the course's words: its meaning's first part, "(global)" for a global hook.
function kindWords(t, kinds, lane) {
  const [, kind, , , global] = lane;
  const text = kinds[kind].meaning.split(":")[0].split(" (")[0];
  return global ? `${text} (${t("compiled.global")})` : text;
}

// One moment in a sentence: the hook and what each run did, or torch's event.
function momentText(t, { lanes, kinds, events }, m) {
  if (m.event >= 0) {
    const [kind, step, title] = events[m.event];
    const event = t(`compiled.event_${kind}`);
    return `${t("compiled.event_line", { event, step })}: ${title}`;
  }
  const lane = lanes[m.lane];
  const hook = t("compiled.hook_at", {
    lane: lane[0],
    kind: kindWords(t, kinds, lane),
    name: lane[2],
  });
  const eager = t(m.eager ? "compiled.eager_fired" : "compiled.eager_none");
  const compiled = t(m.compiled ? `compiled.compiled_${m.compiled}` : "compiled.compiled_none");
  return `${hook}; ${eager}; ${compiled}`;
}

// The title, the moment shown, and torch's totals.
function headerView(t, model) {
  const status = h("span", { class: "hv-status" });
  const node = h(
    "div",
    { class: "hv-header" },
    h("span", { class: "hv-title", text: model.get("title") }),
    status,
    h("div", { class: "hv-muted hv-totals", text: model.get("totals") }),
  );
  const draw = (step, total) => {
    status.textContent = t("compiled.status", { step, total });
  };
  return { node, draw };
}

// One side: a row per hook, a column per moment, steps as bands. `side` is "eager" or "compiled".
function sideView(t, side, data, onPick, onResize) {
  const { lanes, moments } = data;
  const name = t(side === "eager" ? "compiled.eager_side" : "compiled.compiled_side");
  const box = scrollable(
    h("div", { class: `hv-side-box hv-side-${side}` }),
    t("compiled.diagram_region", { side: name }),
  );
  const node = h(
    "div",
    { class: "hv-side" },
    h("div", { class: "hv-side-title", text: name }),
    box,
  );
  let columns = [];
  let cursor = null;
  let svg = null;
  let col = COL;
  let builtFor = 0; // the box's width when it was built

  function build() {
    // The columns spend the box's width: a short run is spread out, a long one scrolls.
    builtFor = box.clientWidth;
    const room = (builtFor - GUTTER - 12) / Math.max(1, moments.length);
    col = builtFor > 0 ? Math.max(COL, Math.min(COL_MAX, Math.floor(room))) : COL;
    const x = (k) => GUTTER + k * col + col / 2;
    const width = GUTTER + Math.max(1, moments.length) * col + 12;
    const height = TOP + lanes.length * ROW + 6;
    svg = s("svg", {
      class: "hv-svg",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": t("compiled.diagram_img", { side: name }),
    });
    stepBands(t, svg, moments, col, height);
    lanes.forEach((lane, i) => {
      const text = s("text", { x: 6, y: laneY(i) + 4, class: "hv-lane-label" });
      text.textContent = lane[0];
      const title = s("title");
      title.textContent = `${lane[0]}: ${kindWords(t, data.kinds, lane)} ${lane[2]}`;
      text.append(title);
      svg.append(
        s("line", { x1: GUTTER, x2: width, y1: laneY(i), y2: laneY(i), class: "hv-lane" }),
        text,
        mark(lane[1], data.kinds, GUTTER - 10, laneY(i), false), // its kind, as the legend shows
      );
    });
    cursor = s("rect", {
      x: 0,
      y: TOP - 6,
      width: col,
      height: lanes.length * ROW + 10,
      class: "hv-cursor",
    });
    svg.append(cursor);
    columns = moments.map((m, k) => {
      const g = column(t, side, data, m, k, x(k), col);
      if (g.childNodes.length) g.addEventListener("click", () => onPick(k + 1));
      svg.append(g);
      return g;
    });
    box.replaceChildren(svg);
  }

  function draw(step) {
    svg.classList.toggle("hv-overview", step === 0);
    columns.forEach((g, k) => {
      g.classList.toggle("hv-future", k >= step);
      g.classList.toggle("hv-now", k === step - 1);
    });
    cursor.setAttribute("x", GUTTER + (step - 1) * col);
    cursor.style.display = step ? "" : "none";
  }
  // The current column in view (the box scrolls sideways on a long run).
  function reveal(step) {
    if (!step) return;
    const left = GUTTER + (step - 1) * col;
    if (left - box.scrollLeft < GUTTER) box.scrollLeft = left - GUTTER - col;
    else if (left + col - box.scrollLeft > box.clientWidth)
      box.scrollLeft = left + 2 * col - box.clientWidth;
  }
  // Built before it was in the page (0 wide), or the page changed width: build again.
  const resized =
    typeof ResizeObserver === "function"
      ? new ResizeObserver(() => {
          if (Math.abs(box.clientWidth - builtFor) > 8) onResize();
        })
      : null;
  if (resized) resized.observe(box);
  const dispose = () => resized && resized.disconnect();
  return { node, box, build, draw, reveal, dispose };
}

// A band per step, alternating, labelled at the top ("step 2", or "2" where the band is narrow).
function stepBands(t, svg, moments, col, height) {
  let start = 0;
  moments.forEach((m, k) => {
    if (k < moments.length - 1 && moments[k + 1].step === m.step) return;
    const width = (k + 1 - start) * col;
    svg.append(
      s("rect", {
        x: GUTTER + start * col,
        y: 0,
        width,
        height,
        class: `hv-step-band${m.step % 2 ? " hv-odd" : ""}`,
      }),
    );
    const label = s("text", { x: GUTTER + start * col + 3, y: 13, class: "hv-band-label" });
    label.textContent = width >= 48 ? t("compiled.step_band", { step: m.step }) : String(m.step);
    svg.append(label);
    start = k + 1;
  });
}

// One moment's column on one side: a mark, a cross, an event's band, or nothing.
function column(t, side, data, m, k, x, col) {
  const { lanes, kinds, events } = data;
  const g = s("g", { class: "hv-moment", "data-moment": k + 1 });
  if (m.event >= 0 && side === "compiled") {
    const [kind, step, title, where] = events[m.event];
    g.append(
      s("rect", {
        x: x - col / 2 + 1,
        y: TOP - 6,
        width: col - 2,
        height: lanes.length * ROW + 10,
        class: `hv-event hv-ev-${kind}`,
      }),
    );
    const text = s("text", {
      x: x - 3,
      y: TOP,
      class: "hv-event-label",
      transform: `rotate(90 ${x - 3} ${TOP})`,
    });
    text.textContent = t(`compiled.band_${kind}`);
    const tip = s("title");
    const at = where ? ` ${t("compiled.at", { where })}` : "";
    tip.textContent = `${t(`compiled.event_${kind}`)} (${t("compiled.step_band", { step })}): ${title}${at}`;
    g.append(text, tip);
  } else if (m.lane >= 0) {
    const kind = lanes[m.lane][1];
    const y = laneY(m.lane);
    if (side === "eager" && m.eager) g.append(mark(kind, kinds, x, y, false));
    if (side === "compiled" && m.compiled)
      g.append(mark(kind, kinds, x, y, m.compiled === "eager"));
    if (side === "compiled" && !m.compiled && m.eager) g.append(cross(x, y));
    if (g.childNodes.length) {
      const tip = s("title");
      tip.textContent = `#${k + 1} ${momentText(t, data, m)}`;
      g.append(tip);
    }
  }
  return g;
}

// Keep the two sides scrolled together: the same moment stands at the same place in both.
function scrollTogether(a, b) {
  let busy = false;
  const follow = (from, to) => () => {
    if (busy) return;
    busy = true;
    to.scrollLeft = from.scrollLeft;
    busy = false;
  };
  const ab = follow(a, b);
  const ba = follow(b, a);
  a.addEventListener("scroll", ab);
  b.addEventListener("scroll", ba);
  return () => {
    a.removeEventListener("scroll", ab);
    b.removeEventListener("scroll", ba);
  };
}

// What the moment shown is, and why the compiled run differs, in torch's words.
function explainView(t, data) {
  const { lanes, causes, events } = data;
  const node = h("div", { class: "hv-panel hv-explain" });
  function draw(m, step) {
    if (!m) {
      node.replaceChildren(h("span", { class: "hv-muted", text: t("compiled.intro") }));
      return;
    }
    if (m.event >= 0) {
      const [kind, at, title, where, text] = events[m.event];
      const event = t(`compiled.event_${kind}`);
      node.replaceChildren(
        h(
          "div",
          {},
          h("b", { text: `#${step} ${t("compiled.event_line", { event, step: at })}` }),
          ` · ${title}`,
          where ? h("div", { class: "hv-muted", text: t("compiled.at", { where }) }) : null,
          h("pre", { class: "hv-reason", text: text }),
        ),
      );
      return;
    }
    const lane = lanes[m.lane];
    const parts = [
      h("b", { text: `#${step} ${lane[0]}` }),
      ` · ${kindWords(t, data.kinds, lane)} · `,
      h("code", { text: lane[2] }),
      h("div", { text: t(m.eager ? "compiled.eager_fired" : "compiled.eager_none") }),
      h("div", {
        class: m.compiled === "graph" ? "" : "hv-warn",
        text: t(m.compiled ? `compiled.compiled_${m.compiled}` : "compiled.compiled_none"),
      }),
    ];
    if (m.compiled !== "graph") {
      const found = causes[m.lane];
      if (!found.length) parts.push(h("div", { class: "hv-muted", text: t("compiled.no_cause") }));
      for (const [kind, title, where, own, count] of found.slice(0, 3)) {
        const times = count > 1 ? ` ×${count}` : "";
        const wake = own ? "" : ` (${t("compiled.cause_wake")})`;
        const cause = `${t(`compiled.cause_${kind}`)}${times}${wake}: ${title}`;
        parts.push(
          h(
            "div",
            { class: "hv-cause" },
            t("compiled.why", { cause }),
            where
              ? h("span", { class: "hv-muted", text: ` ${t("compiled.at", { where })}` })
              : null,
          ),
        );
      }
    }
    node.replaceChildren(h("div", {}, ...parts));
  }
  return { node, draw };
}

// Every hook in a row: where, kind, name, the steps it fired in each run, what happened.
function tableView(t, data, onPick) {
  const { lanes, kinds, moments } = data;
  const head = ["hook", "kind", "name", "eager", "compiled", "status"].map((c) =>
    h("th", { scope: "col", text: t(`compiled.col_${c}`) }),
  );
  const rows = lanes.map((lane, i) => {
    const first = moments.findIndex((m) => m.lane === i && m.compiled !== "graph");
    const anyMoment = moments.findIndex((m) => m.lane === i);
    const row = h(
      "tr",
      {
        class: `hv-row hv-s-${lane[3]}`,
        onclick: () => onPick((first >= 0 ? first : anyMoment) + 1),
      },
      h("td", { class: "hv-mono", text: lane[0] }),
      h("td", { text: kindWords(t, kinds, lane) }),
      h("td", { class: "hv-mono", text: lane[2] }),
      h("td", { class: "hv-mono", text: lane[5] || "–" }),
      h("td", { class: "hv-mono", text: lane[6] || "–" }),
      h(
        "td",
        {},
        h("span", { class: `hv-badge hv-s-${lane[3]}`, text: t(`compiled.status_${lane[3]}`) }),
      ),
    );
    return row;
  });
  const node = scrollable(
    h(
      "div",
      { class: "hv-table-box" },
      h(
        "table",
        { class: "hv-table" },
        h("thead", {}, h("tr", {}, ...head)),
        h("tbody", {}, ...rows),
      ),
    ),
    t("compiled.table_region"),
  );
  const draw = (m) => rows.forEach((row, i) => row.classList.toggle("hv-now", !!m && m.lane === i));
  return { node, draw };
}

// The kinds of hook on the rows (shape and colour), then what the compiled side's marks mean.
function legendView(t, kinds, lanes) {
  const item = (shape, text) => h("span", { class: "hv-legend-item" }, symbol(shape), ` ${text}`);
  const shown = [...new Set(lanes.map((lane) => lane[1]))];
  return h(
    "div",
    { class: "hv-legend" },
    shown.map((kind) => item(mark(kind, kinds, 0, 0, false), kindWords(t, kinds, ["", kind]))),
    item(mark("forward", kinds, 0, 0, false), t("compiled.legend_graph")),
    item(mark("forward", kinds, 0, 0, true), t("compiled.legend_eager")),
    item(cross(0, 0), t("compiled.legend_missing")),
    item(
      s("rect", { x: -3, y: -7, width: 6, height: 14, class: "hv-event hv-ev-graph_break" }),
      t("compiled.legend_bands"),
    ),
  );
}

function render({ model, el }) {
  const data = {
    lanes: model.get("lanes"),
    causes: model.get("causes"),
    events: model.get("events"),
    kinds: model.get("kinds"),
    moments: model
      .get("moments")
      .map(([step, lane, eager, compiled, event]) => ({ step, lane, eager, compiled, event })),
  };
  const { moments } = data;
  const t = words(model);
  const root = widgetRoot("hv-compiled", t("compiled.root"), t);
  const player = createPlayer(model, { length: () => moments.length, show: (step) => show(step) });
  const controls = transport(model, player, t, t("compiled.noun"));
  const header = headerView(t, model);
  const pick = (step) => player.go(step);
  const rebuild = () => {
    eager.build();
    compiled.build();
    show(player.step);
  };
  const eager = sideView(t, "eager", data, pick, rebuild);
  const compiled = sideView(t, "compiled", data, pick, rebuild);
  const explain = explainView(t, data);
  const table = tableView(t, data, pick);
  const live = announcer();
  root.append(
    header.node,
    controls.bar,
    h("div", { class: "hv-sides" }, eager.node, compiled.node),
    explain.node,
    table.node,
    legendView(t, data.kinds, data.lanes),
    h("div", { class: "hv-keys", text: t("common.player_keys") }),
    live.node,
  );
  el.append(root);

  let announced = null; // what the live region last said (nothing on the first frame)
  function show(step) {
    step = Math.max(0, Math.min(step, moments.length));
    const m = step ? moments[step - 1] : null;
    eager.draw(step);
    compiled.draw(step);
    header.draw(step, moments.length);
    explain.draw(m, step);
    table.draw(m);
    controls.refresh(step, moments.length);
    root.dataset.step = String(step);
    root.dataset.current = !m
      ? ""
      : m.event >= 0
        ? data.events[m.event][0]
        : `${data.lanes[m.lane][0]} ${data.lanes[m.lane][1]} ${m.eager ? "eager" : "-"} ${m.compiled || "-"}`;
    const sentence = m
      ? t("compiled.say_step", { step, total: moments.length, what: momentText(t, data, m) })
      : t("compiled.say_start", { total: moments.length });
    if (announced !== null && sentence !== announced) live.say(sentence);
    announced = sentence;
    eager.reveal(step);
    compiled.reveal(step);
  }

  const cleanups = [
    followTheme(root, model),
    () => player.dispose(),
    controls.dispose,
    live.dispose,
    eager.dispose,
    compiled.dispose,
    scrollTogether(eager.box, compiled.box),
    onKeys(root, playerKeys(player, model)),
  ];
  eager.build();
  compiled.build();
  show(player.step);
  return () => cleanups.forEach((f) => f());
}

export default { render };
