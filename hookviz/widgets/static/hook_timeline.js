// HookTimeline: modules down, time across; each hook firing is a mark, played in order.
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

const COL = 18; // a firing's column: at least this wide, wider when the diagram has room
const COL_MAX = 44;
let col = COL; // the column of the diagram being built (set by build, read while it draws)
const ROW = 22;
const GUTTER = 150;
const TOP = 22;

// Each kind's shape and colour come from Python (hookviz/hook_kinds.py) in the "kinds" trait:
// forward hooks circles, backward hooks squares, torch's markers small diamonds.
function markShape(kind, kinds, x, y) {
  const { shape, colour } = kinds[kind];
  const style = `fill: var(--hv-${colour})`;
  if (shape === "diamond") {
    return s("path", {
      d: `M${x} ${y - 4}L${x + 4} ${y}L${x} ${y + 4}L${x - 4} ${y}Z`,
      class: `hv-mark hv-torch hv-k-${kind}`,
      style,
    });
  }
  if (shape === "square")
    return s("rect", {
      x: x - 5,
      y: y - 5,
      width: 10,
      height: 10,
      class: `hv-mark hv-k-${kind}`,
      style,
    });
  return s("circle", { cx: x, cy: y, r: 5, class: `hv-mark hv-k-${kind}`, style });
}

function symbol(...shapes) {
  return s(
    "svg",
    { width: 14, height: 14, viewBox: "-7 -7 14 14", "aria-hidden": "true" },
    ...shapes,
  );
}

// The legend's entries ([label, kind, torch's name]) come from Python in the "legend" trait:
// the course's words, and torch's names in a tooltip.
function legendView(t, legend, kinds) {
  return h(
    "div",
    { class: "hv-legend" },
    legend.map(([label, k, torchName]) =>
      h(
        "span",
        { class: "hv-legend-item", title: torchName || k },
        symbol(markShape(k, kinds, 0, 0)),
        ` ${label}`,
      ),
    ),
    h(
      "span",
      { class: "hv-legend-item" },
      symbol(s("circle", { r: 6, class: "hv-replaced" })),
      ` ${t("timeline.legend_replaced")}`,
    ),
  );
}

// The title, the firing shown, and the switch for torch's own markers.
function headerView(t, model) {
  const status = h("span", { class: "hv-status" });
  const torch = h("input", { type: "checkbox", "aria-label": t("timeline.torch_label") });
  torch.checked = model.get("show_torch");
  torch.addEventListener("change", () => {
    model.set("step", 0);
    model.set("show_torch", torch.checked);
    model.save_changes();
  });
  const node = h(
    "div",
    { class: "hv-header" },
    h("span", { class: "hv-title", text: model.get("title") }),
    status,
    h("label", { class: "hv-muted" }, torch, ` ${t("timeline.torch_toggle")}`),
  );
  const draw = (step, total) => {
    torch.checked = model.get("show_torch");
    status.textContent = t("timeline.status", { step, total });
  };
  return { node, draw };
}

// Where firing k's column and a lane's row are drawn.
const colX = (k) => GUTTER + k * col + col / 2;
const laneY = (lane) => TOP + lane * ROW + ROW / 2;

// The forward and backward bands behind the firings, each labelled.
function phaseBands(t, svg, seq, backward, height) {
  const firstBack = seq.findIndex((f) => backward.has(f.kind));
  const split = firstBack < 0 ? seq.length : firstBack;
  svg.append(
    s("rect", { x: GUTTER, y: 0, width: split * col, height, class: "hv-band hv-band-forward" }),
    s("rect", {
      x: GUTTER + split * col,
      y: 0,
      width: (seq.length - split) * col,
      height,
      class: "hv-band hv-band-backward",
    }),
  );
  const label = (text, at) => {
    const node = s("text", { x: at, y: 14, class: "hv-band-label" });
    node.textContent = text;
    return node;
  };
  if (split > 0) svg.append(label(t("timeline.band_forward"), GUTTER + 4));
  if (split < seq.length) svg.append(label(t("timeline.band_backward"), GUTTER + split * col + 4));
}

// forward() as an interval on its lane, from the start marker to the return marker:
// [index of forward() starting, bar].
function forwardIntervals(seq) {
  const open = new Map();
  const intervals = [];
  seq.forEach((f, k) => {
    if (f.kind === "forward_call") open.set(f.lane, k);
    if (f.kind === "forward_return" && open.has(f.lane)) {
      const from = open.get(f.lane);
      open.delete(f.lane);
      const bar = s("rect", {
        x: colX(from),
        y: laneY(f.lane) - 3,
        width: colX(k) - colX(from),
        height: 6,
        class: "hv-interval",
      });
      intervals.push([from, bar]);
    }
  });
  return intervals;
}

// Firing k: its mark (ringed when its hook replaced a value) and a title that says what it was.
function firingMark(t, f, k, lanes, meaning, kinds) {
  const g = s("g", { class: "hv-firing", "data-seq": f.seq });
  if (f.replaced)
    g.append(s("circle", { cx: colX(k), cy: laneY(f.lane), r: 8, class: "hv-replaced" }));
  g.append(markShape(f.kind, kinds, colX(k), laneY(f.lane)));
  const title = s("title");
  const hook = f.who === "user" ? ` (${f.name})` : "";
  const replaced = f.replaced ? `, ${t("timeline.replaced", { what: f.replaced })}` : "";
  title.textContent = `#${k + 1} ${lanes[f.lane][0]}: ${meaning[f.kind]}${hook}${replaced}`;
  g.append(title);
  return g;
}

// The diagram: one lane per module, one column per firing, forward() as an interval on its lane.
function diagramView(t, { lanes, meaning, backward, kinds }, onPick, onResize) {
  const node = scrollable(h("div", { class: "hv-diagram" }), t("timeline.diagram_region"));
  let marks = [];
  let intervals = []; // [index of forward() starting, bar]
  let cursor = null;
  let svg = null;
  let ownCol = COL; // this diagram's column width
  let builtFor = 0; // the box's width when it was built
  function build(seq) {
    // The columns spend the box's width: a short pass is spread out, a long one scrolls.
    builtFor = node.clientWidth;
    const room = (builtFor - GUTTER - 20) / Math.max(1, seq.length);
    col = ownCol = builtFor > 0 ? Math.max(COL, Math.min(COL_MAX, Math.floor(room))) : COL;
    const width = GUTTER + Math.max(1, seq.length) * col + 20;
    const height = TOP + lanes.length * ROW + 6;
    svg = s("svg", {
      class: "hv-svg",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": t("timeline.diagram_img"),
    });
    phaseBands(t, svg, seq, backward, height);
    lanes.forEach(([name, depth], i) => {
      const text = s("text", { x: 6 + depth * 10, y: laneY(i) + 4, class: "hv-lane-label" });
      text.textContent = name;
      svg.append(
        s("line", { x1: GUTTER, x2: width, y1: laneY(i), y2: laneY(i), class: "hv-lane" }),
        text,
      );
    });
    intervals = forwardIntervals(seq);
    svg.append(...intervals.map(([, bar]) => bar));
    cursor = s("rect", {
      x: 0,
      y: TOP - 4,
      width: col,
      height: lanes.length * ROW + 8,
      class: "hv-cursor",
    });
    svg.append(cursor);
    marks = seq.map((f, k) => {
      const g = firingMark(t, f, k, lanes, meaning, kinds);
      g.addEventListener("click", () => onPick(k + 1));
      svg.append(g);
      return g;
    });
    node.replaceChildren(svg);
  }

  function draw(step) {
    // Before the first step, the whole pass at full strength; then what is to come, faint.
    svg.classList.toggle("hv-overview", step === 0);
    marks.forEach((g, k) => {
      g.classList.toggle("hv-future", k >= step);
      g.classList.toggle("hv-now", k === step - 1);
    });
    for (const [from, bar] of intervals) bar.classList.toggle("hv-future", from >= step);
    cursor.setAttribute("x", GUTTER + (step - 1) * ownCol);
    cursor.style.display = step ? "" : "none";
  }

  const reveal = (step) => {
    if (step) revealIn(node, marks[step - 1].getBoundingClientRect(), "x");
  };
  // Built before it was in the page (0 wide), or the page changed width: build again.
  const resized =
    typeof ResizeObserver === "function"
      ? new ResizeObserver(() => {
          if (Math.abs(node.clientWidth - builtFor) > 8) onResize();
        })
      : null;
  if (resized) resized.observe(node);
  const dispose = () => resized && resized.disconnect();
  return { node, build, draw, reveal, dispose };
}

// The same firings as a numbered list, the current one highlighted.
function listView(t, lanes, meaning, onPick) {
  const list = h("ol", { class: "hv-list" });
  const node = scrollable(h("div", { class: "hv-list-box" }, list), t("timeline.list_region"));
  let items = [];

  function build(seq) {
    items = seq.map((f, k) =>
      h(
        "li",
        {
          class: `hv-item ${f.who === "user" ? "hv-user" : "hv-torch-item"}`,
          onclick: () => onPick(k + 1),
        },
        h("span", { class: "hv-item-n", text: String(k + 1) }),
        h("span", { class: "hv-item-lane", text: lanes[f.lane][0] }),
        h("span", { class: "hv-item-what", text: meaning[f.kind] }),
        f.who === "user" ? h("span", { class: "hv-item-hook", text: f.name }) : null,
        f.replaced
          ? h("span", {
              class: "hv-tag hv-warn",
              text: t("timeline.replaced", { what: f.replaced }),
            })
          : null,
      ),
    );
    list.replaceChildren(...items);
  }

  function draw(step) {
    items.forEach((li, k) => {
      li.classList.toggle("hv-future", k >= step);
      li.classList.toggle("hv-now", k === step - 1);
    });
  }

  const reveal = (step) => {
    if (step) revealIn(node, items[step - 1].getBoundingClientRect(), "y");
  };
  return { node, build, draw, reveal };
}

// What the current firing is, and one sentence that ties it to the moment around it.
function explainView(t, lanes, meaning, backward) {
  const node = h("div", { class: "hv-panel hv-explain" });

  function contextFor(seq, k) {
    const f = seq[k];
    const lane = lanes[f.lane][0];
    if (f.who === "user" && f.kind === "forward") {
      const ret = seq
        .slice(0, k)
        .map((g, j) => [g, j])
        .reverse()
        .find(([g]) => g.lane === f.lane && g.kind === "forward_return");
      return ret
        ? t("timeline.after_return_at", { lane, firing: ret[1] + 1 })
        : t("timeline.after_return", { lane });
    }
    if (f.who === "user" && f.kind === "forward_pre") return t("timeline.before_forward", { lane });
    if (f.who === "user" && (f.kind === "backward" || f.kind === "backward_pre")) {
      const count = seq.slice(k + 1).filter((g) => backward.has(g.kind)).length;
      if (!count) return t("timeline.backward_last");
      return t(count === 1 ? "timeline.backward_more_one" : "timeline.backward_more", { count });
    }
    return "";
  }

  function draw(seq, step) {
    const f = step ? seq[step - 1] : null;
    if (!f) {
      node.replaceChildren(h("span", { class: "hv-muted", text: t("timeline.intro") }));
      return;
    }
    const parts = [h("b", { text: `#${step} ${lanes[f.lane][0]}` }), ` · ${meaning[f.kind]}`];
    if (f.who === "user")
      parts.push(
        h("span", { class: "hv-muted", text: ` · ${t("timeline.your_hook", { name: f.name })}` }),
      );
    if (f.replaced)
      parts.push(
        h("div", { class: "hv-warn", text: t("timeline.replaced_sentence", { what: f.replaced }) }),
      );
    const context = contextFor(seq, step - 1);
    if (context) parts.push(h("div", { class: "hv-muted", text: context }));
    node.replaceChildren(h("div", {}, ...parts));
  }

  return { node, draw };
}

// What a screen reader hears after a step: the firing the explanation panel shows.
function firingSentence(t, lanes, meaning, seq, step) {
  const f = step ? seq[step - 1] : null;
  if (!f) return t("timeline.say_start", { total: seq.length });
  const hook = f.who === "user" ? ` (${t("timeline.your_hook", { name: f.name })})` : "";
  const replaced = f.replaced ? `; ${t("timeline.say_replaced", { what: f.replaced })}` : "";
  const what = `${lanes[f.lane][0]}, ${meaning[f.kind]}${hook}${replaced}`;
  return t("timeline.say_step", { step, total: seq.length, what });
}

function revealIn(box, r, axis) {
  const b = box.getBoundingClientRect();
  if (axis === "x") {
    if (r.left < b.left + GUTTER) box.scrollLeft -= b.left + GUTTER - r.left + 20;
    else if (r.right > b.right) box.scrollLeft += r.right - b.right + 20;
  } else if (r.top < b.top) box.scrollTop -= b.top - r.top + 4;
  else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom + 4;
}

function render({ model, el }) {
  const kinds = model.get("kinds"); // kind -> {meaning, backward, shape, colour}, from Python
  const meaning = Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, v.meaning]));
  const backward = new Set(Object.keys(kinds).filter((k) => kinds[k].backward));
  const lanes = model.get("lanes");
  const all = model
    .get("firings")
    .map(([lane, kind, who, name, replaced], seq) => ({ seq, lane, kind, who, name, replaced }));
  const sequence = () => (model.get("show_torch") ? all : all.filter((f) => f.who === "user"));

  const t = words(model);
  const root = widgetRoot("hv-timeline", t("timeline.root"), t);
  const player = createPlayer(model, {
    length: () => sequence().length,
    show: (step) => show(step),
  });
  const controls = transport(model, player, t, t("timeline.noun"));
  const header = headerView(t, model);
  const diagram = diagramView(
    t,
    { lanes, meaning, backward, kinds },
    (step) => player.go(step),
    () => {
      diagram.build(sequence());
      show(player.step);
    },
  );
  const explain = explainView(t, lanes, meaning, backward);
  const list = listView(t, lanes, meaning, (step) => player.go(step));
  const live = announcer();
  root.append(
    header.node,
    controls.bar,
    diagram.node,
    explain.node,
    list.node,
    legendView(t, model.get("legend"), kinds),
    h("div", { class: "hv-keys", text: t("common.player_keys") }),
    live.node,
  );
  el.append(root);

  const build = () => {
    const seq = sequence();
    diagram.build(seq);
    list.build(seq);
  };
  let announced = null; // what the live region last said (nothing on the first frame)
  function show(step) {
    const seq = sequence();
    step = Math.max(0, Math.min(step, seq.length));
    diagram.draw(step);
    list.draw(step);
    header.draw(step, seq.length);
    root.dataset.step = String(step);
    const f = step ? seq[step - 1] : null;
    root.dataset.current = f ? `${lanes[f.lane][0]} ${f.kind}` : "";
    controls.refresh(step, seq.length);
    explain.draw(seq, step);
    const sentence = firingSentence(t, lanes, meaning, seq, step);
    if (announced !== null && sentence !== announced) live.say(sentence);
    announced = sentence;
    diagram.reveal(step); // last: the layout is measured after every write
    list.reveal(step);
  }

  const onFilter = () => {
    build();
    player.reset();
  };
  model.on("change:show_torch", onFilter);
  const cleanups = [
    followTheme(root, model),
    () => player.dispose(),
    controls.dispose,
    live.dispose,
    diagram.dispose,
    () => model.off("change:show_torch", onFilter),
    onKeys(root, playerKeys(player, model)),
  ];
  build();
  show(player.step);
  return () => cleanups.forEach((f) => f());
}

export default { render };
