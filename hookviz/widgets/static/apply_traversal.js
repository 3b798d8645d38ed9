// ApplyTraversal: the module tree, apply()'s visits played back in the browser, the call stack.
import {
  announcer,
  button,
  createPlayer,
  followTheme,
  h,
  onKeys,
  playerKeys,
  scrollable,
  transport,
  widgetRoot,
  words,
} from "./common.js";

const STRIP_PAGE = 30; // chips shown at once in the order strip of a long order
const AUTO_COLLAPSE = 150; // trees bigger than this start with only the top level open

function buildTree(rows) {
  const nodes = rows.map(([name, type, parent, params, shared], i) => ({
    i,
    name,
    type,
    parent,
    params,
    shared: Boolean(shared),
    children: [],
  }));
  for (const node of nodes) {
    const parent = node.parent >= 0 ? nodes[node.parent] : null;
    if (parent) parent.children.push(node);
    node.path = parent ? (parent.path ? `${parent.path}.${node.name}` : node.name) : "";
    node.label = parent ? node.path : node.type;
    node.depth = parent ? parent.depth + 1 : 0;
  }
  for (let i = nodes.length - 1; i >= 0; i--) {
    nodes[i].size = 1 + nodes[i].children.reduce((sum, c) => sum + c.size, 0);
  }
  return nodes;
}

function ancestors(nodes, i) {
  const chain = [];
  for (let p = nodes[i].parent; p >= 0; p = nodes[p].parent) chain.push(p);
  return chain;
}

// What a screen reader hears after a step: what the tree and the "Now" panel show.
function stepSentence(t, nodes, step, total, current, modules) {
  if (current < 0)
    return t(modules ? "apply.say_modules_start" : "apply.say_apply_start", { total });
  const node = nodes[current];
  const what = node.parent >= 0 ? `${node.label}, ${node.type}` : node.label;
  return t(modules ? "apply.say_modules_step" : "apply.say_apply_step", { step, total, what });
}

// The title, the step, the order switch (which order is shown) and "follow the current module".
function headerView(t, model, onFollow) {
  const setOrder = (order) => {
    if (order === model.get("order")) return;
    model.set("step", 0);
    model.set("order", order);
    model.save_changes();
  };
  const status = h("span", { class: "hv-status" });
  const applyButton = button(t("apply.order_apply"), () => setOrder("apply"), {
    cls: "hv-order-apply",
    title: t("apply.order_apply_title"),
  });
  const modulesButton = button(t("apply.order_modules"), () => setOrder("modules"), {
    cls: "hv-order-modules",
    title: t("apply.order_modules_title"),
  });
  const follow = h("input", {
    type: "checkbox",
    checked: true,
    "aria-label": t("apply.follow_label"),
  });
  follow.addEventListener("change", onFollow);
  const node = h(
    "div",
    { class: "hv-header" },
    h("span", { class: "hv-title", text: model.get("title") }),
    status,
    h(
      "span",
      { class: "hv-switch", role: "group", "aria-label": t("apply.order_group") },
      applyButton,
      modulesButton,
    ),
    h("label", { class: "hv-muted hv-follow" }, follow, ` ${t("apply.follow")}`),
  );
  const draw = (step, total, modules) => {
    status.textContent = t("apply.status", { step, total });
    applyButton.classList.toggle("hv-on", !modules);
    modulesButton.classList.toggle("hv-on", modules);
    applyButton.setAttribute("aria-pressed", String(!modules)); // a switch: say which order is shown
    modulesButton.setAttribute("aria-pressed", String(modules));
  };
  return { node, draw, following: () => follow.checked };
}

// The module tree. What it shows is kept between frames, so that one step repaints a few rows,
// not all. `onToggle` redraws after a subtree was opened or closed by hand; `onPick(i)` jumps
// to module i's visit when its row is clicked.
function treeView(t, nodes, applyNumber, onToggle, onPick) {
  const tree = treeState(t, nodes);
  const node = scrollable(
    h(
      "div",
      // A big tree lays out only the rows in view; a small one is drawn whole (print, capture).
      { class: `hv-tree${nodes.length > AUTO_COLLAPSE ? " hv-big" : ""}`, role: "tree" },
      treeNode(tree, nodes[0], applyNumber, onToggle),
    ),
    t("apply.tree"),
  );
  node.addEventListener("click", (event) => {
    if (event.target.closest(".hv-caret")) return;
    const row = event.target.closest(".hv-row");
    if (row && row.dataset.index) onPick(Number(row.dataset.index));
  });
  if (nodes.length > AUTO_COLLAPSE)
    for (const n of nodes) if (n.depth >= 1 && n.children.length) setOpen(tree, n, false);
  for (const n of nodes) if (n.children.length && isOpen(tree, n)) setOpen(tree, n, true);

  // Number the first `step` modules of `seq`, mark the current one; returns its index or -1.
  function paint(step, seq, follow) {
    const { painted } = tree;
    if (painted.seq !== seq) {
      // the order changed: clear the other order's numbers
      for (let k = painted.step - 1; k >= 0; k--) setNumber(tree, painted.seq[k], 0);
      painted.step = 0;
      painted.seq = seq;
    }
    for (let k = painted.step; k < step; k++) setNumber(tree, seq[k], k + 1);
    for (let k = painted.step - 1; k >= step; k--) setNumber(tree, seq[k], 0);
    painted.step = step;
    const current = step ? seq[step - 1] : -1;
    if (current >= 0 && follow) openOnlyTo(tree, current);
    markCurrent(tree, current);
    refreshCounts(tree);
    return current;
  }

  // Scroll the current row (or its closed ancestor) into the tree's view. Called last in a
  // frame, after every write: the layout is measured once per frame, not once per change.
  function reveal() {
    const at = tree.painted.hidden >= 0 ? tree.painted.hidden : tree.painted.current;
    if (at < 0) return;
    const box = node.getBoundingClientRect();
    const r = tree.rowOf[at].getBoundingClientRect();
    if (r.top < box.top) node.scrollTop -= box.top - r.top + 8;
    else if (r.bottom > box.bottom) node.scrollTop += r.bottom - box.bottom + 8;
  }

  return { node, paint, reveal, visited: (i) => tree.numberOf[i] > 0 };
}

// What the tree keeps between frames: its elements by module, and what they show.
function treeState(t, nodes) {
  return {
    t,
    nodes,
    rowOf: new Array(nodes.length),
    boxOf: new Array(nodes.length),
    badgeOf: new Array(nodes.length),
    countOf: new Array(nodes.length),
    autoOpened: new Set(),
    numberOf: new Int32Array(nodes.length), // visit number shown on each row, 0 for none
    doneOf: new Int32Array(nodes.length), // numbered rows in each subtree
    painted: { step: 0, seq: null, current: -1, hidden: -1 },
    dirty: new Set(nodes.map((node) => node.i)), // rows whose "k/n visited" count may be stale
  };
}

function setOpen(tree, node, open) {
  tree.boxOf[node.i].classList.toggle("hv-collapsed", !open);
  tree.rowOf[node.i].setAttribute("aria-expanded", open ? "true" : "false");
}

function isOpen(tree, node) {
  return !tree.boxOf[node.i].classList.contains("hv-collapsed");
}

// One module's row and, below it, its children's (recursively).
function treeNode(tree, node, applyNumber, onToggle) {
  const caret = node.children.length
    ? button(
        tree.t("apply.toggle", { label: node.label }),
        () => {
          tree.autoOpened.delete(node.i);
          setOpen(tree, node, !isOpen(tree, node));
          tree.dirty.add(node.i);
          onToggle();
        },
        { iconName: "caret", cls: "hv-caret" },
      )
    : h("span", { class: "hv-caret-space" });
  tree.badgeOf[node.i] = h("span", { class: "hv-badge" });
  tree.countOf[node.i] = h("span", { class: "hv-count hv-muted" });
  const row = h(
    "div",
    {
      class: "hv-row",
      role: "treeitem",
      "data-path": node.path,
      "data-index": String(node.i),
      style: `padding-left:${node.depth * 16}px`,
    },
    caret,
    tree.badgeOf[node.i],
    h("span", { class: "hv-name", text: node.parent < 0 ? node.type : node.name }),
    // the tag before the type and parameters, which give way first in a narrow pane
    node.shared
      ? h("span", {
          class: "hv-tag hv-shared",
          text: tree.t("apply.shared"),
          title: tree.t("apply.shared_title"),
        })
      : null,
    node.parent < 0 ? null : h("span", { class: "hv-type", text: node.type }),
    node.params ? h("span", { class: "hv-params", text: node.params }) : null,
    tree.countOf[node.i],
  );
  row.title = applyNumber.has(node.i)
    ? tree.t("apply.row_title", { label: node.label, number: applyNumber.get(node.i) })
    : node.label;
  tree.rowOf[node.i] = row;
  const box = h("div", { class: "hv-node" }, row);
  tree.boxOf[node.i] = box;
  if (node.children.length)
    box.append(
      h(
        "div",
        { class: "hv-children", role: "group" },
        node.children.map((child) => treeNode(tree, child, applyNumber, onToggle)),
      ),
    );
  return box;
}

// Show visit number `value` on row `i` (0: none), keeping each subtree's count of numbered rows.
function setNumber(tree, i, value) {
  const was = tree.numberOf[i];
  if (was > 0 !== value > 0) {
    const delta = value > 0 ? 1 : -1;
    tree.doneOf[i] += delta;
    tree.dirty.add(i);
    for (const a of ancestors(tree.nodes, i)) {
      tree.doneOf[a] += delta;
      tree.dirty.add(a);
    }
  }
  tree.numberOf[i] = value;
  tree.badgeOf[i].textContent = value ? String(value) : "";
  tree.rowOf[i].classList.toggle("hv-visited", value > 0);
}

// Following the play: open the current module's ancestors, close those opened for earlier ones.
function openOnlyTo(tree, current) {
  const { nodes, autoOpened, dirty } = tree;
  const keep = new Set([current, ...ancestors(nodes, current)]);
  for (const i of [...autoOpened])
    if (!keep.has(i)) {
      setOpen(tree, nodes[i], false);
      autoOpened.delete(i);
      dirty.add(i);
    }
  for (const i of ancestors(nodes, current))
    if (!isOpen(tree, nodes[i])) {
      setOpen(tree, nodes[i], true);
      autoOpened.add(i);
      dirty.add(i);
    }
}

// Mark the current row, or its nearest visible ancestor when it is inside a closed subtree.
function markCurrent(tree, current) {
  const { nodes, rowOf, painted } = tree;
  let hidden = -1;
  if (current >= 0)
    for (const a of ancestors(nodes, current).reverse())
      if (!isOpen(tree, nodes[a])) {
        hidden = a;
        break;
      }
  if (painted.current >= 0) rowOf[painted.current].classList.remove("hv-current");
  if (current >= 0) rowOf[current].classList.add("hv-current");
  if (painted.hidden >= 0) rowOf[painted.hidden].classList.remove("hv-has-current");
  if (hidden >= 0) rowOf[hidden].classList.add("hv-has-current");
  painted.current = current;
  painted.hidden = hidden;
}

// The "k/n visited" count of each closed subtree whose rows changed.
function refreshCounts(tree) {
  for (const i of tree.dirty) {
    const n = tree.nodes[i];
    const count =
      n.children.length && !isOpen(tree, n)
        ? tree.t("apply.count", { done: tree.doneOf[i], size: n.size })
        : "";
    if (tree.countOf[i].textContent !== count) tree.countOf[i].textContent = count;
  }
  tree.dirty.clear();
}

// "Now", the call stack, what fn printed and what it changed.
function sideView(t, nodes, visits, applyNumber, visited) {
  const now = h("div", { class: "hv-now" });
  const stack = h("div", { class: "hv-stack" });
  const printed = h("div");
  const changed = h("div");
  const panel = (title, body, cls = "") =>
    h("div", { class: `hv-panel ${cls}`.trim() }, h("h4", { text: title }), body);
  const stackPanel = panel(t("apply.stack"), stack, "hv-stack-panel");
  const printedPanel = panel(t("apply.printed"), printed);
  const changedPanel = panel(t("apply.changed"), changed);
  const node = h(
    "div",
    { class: "hv-side" },
    panel(t("apply.now"), now),
    stackPanel,
    printedPanel,
    changedPanel,
  );

  function draw(step, total, current, modules) {
    stackPanel.hidden = modules;
    printedPanel.hidden = modules;
    changedPanel.hidden = modules;
    if (current < 0) {
      now.replaceChildren(notStarted(t, modules));
      stack.replaceChildren(h("span", { class: "hv-muted", text: t("apply.not_started") }));
      printed.replaceChildren();
      changed.replaceChildren();
      return;
    }
    const n = nodes[current];
    if (modules) {
      now.replaceChildren(...modulesNow(t, n, step, total, applyNumber.get(current)));
      return;
    }
    const [, frames, text, changes] = visits[step - 1];
    now.replaceChildren(...visitNow(t, n, step, total));
    stack.replaceChildren(...stackLines(t, nodes, n, frames, visited));
    printed.replaceChildren(
      text
        ? scrollable(h("pre", { text }), t("apply.printed_region"))
        : h("span", { class: "hv-muted", text: t("apply.nothing_printed") }),
    );
    changed.replaceChildren(
      changes.length
        ? h(
            "ul",
            { class: "hv-changes" },
            changes.map((c) => h("li", { class: "hv-mono", text: c })),
          )
        : h("span", { class: "hv-muted", text: t("apply.nothing_changed") }),
    );
  }

  return { node, draw };
}

// "Now" before the first step.
function notStarted(t, modules) {
  return h("p", { text: t(modules ? "apply.modules_intro" : "apply.apply_intro") });
}

function childCount(t, n) {
  const count = n.children.length;
  return t(count === 1 ? "apply.child" : "apply.children", { count });
}

// "Now" in modules() order: what it yields, and where apply() visits it (`at`).
function modulesNow(t, n, step, total, at) {
  return [
    h(
      "div",
      {},
      h("b", { text: t("apply.yields", { label: n.label }) }),
      ` ${t("apply.step_of", { step, total })}`,
      n.parent >= 0 ? h("span", { class: "hv-muted", text: ` · ${n.type}` }) : null,
    ),
    h("p", {
      text: n.children.length
        ? t("apply.before_children", { children: childCount(t, n) })
        : t("apply.leaf_modules"),
    }),
    h("p", {
      class: "hv-muted",
      text: at ? t("apply.visited_at", { at }) : t("apply.other_parent"),
    }),
  ];
}

// "Now" in apply() order: the visit, and why it comes when it does.
function visitNow(t, n, step, total) {
  return [
    h(
      "div",
      {},
      h("b", { text: `fn(${n.label})` }),
      ` ${t("apply.visit_of", { step, total })}`,
      n.parent >= 0 ? h("span", { class: "hv-muted", text: ` · ${n.type}` }) : null,
    ),
    h("p", {
      text: n.children.length
        ? t("apply.children_first", { children: childCount(t, n), label: n.label })
        : t("apply.leaf_apply"),
    }),
  ];
}

// fn on top, then each apply() frame down to the root's, with its children done or waiting.
function stackLines(t, nodes, n, frames, visited) {
  const lines = [
    h(
      "div",
      { class: "hv-frame hv-frame-fn" },
      h("span", { class: "hv-mono", text: `fn(${n.label})` }),
      h("span", { class: "hv-tag", text: t("apply.running") }),
    ),
  ];
  for (let k = frames.length - 1; k >= 0; k--) {
    const frame = nodes[frames[k]];
    const inner = k + 1 < frames.length ? frames[k + 1] : -1;
    const kids = frame.children.map((c) => {
      const state = inner === c.i ? "hv-kid-now" : visited(c.i) ? "hv-kid-done" : "hv-kid-wait";
      const mark = state === "hv-kid-done" ? "✓" : state === "hv-kid-now" ? "…" : "·";
      return h("span", { class: `hv-kid ${state}`, text: `${c.name} ${mark}` });
    });
    const what = t(
      inner < 0
        ? frame.children.length
          ? "apply.frame_done"
          : "apply.frame_leaf"
        : "apply.frame_waiting",
    );
    lines.push(
      h(
        "div",
        { class: "hv-frame" },
        h("span", { class: "hv-mono", text: `${frame.label}.apply(fn)` }),
        h("span", { class: "hv-muted", text: what }),
        kids.length ? h("span", { class: "hv-kids" }, kids) : null,
      ),
    );
  }
  return lines;
}

// The two orders as chips. A long order shows one page of STRIP_PAGE chips around the
// current one; chips are rebuilt only when the page changes, otherwise restyled.
function stripView(t, nodes, applyOrder, preorder) {
  const lines = [
    { label: "apply()", seq: applyOrder, key: null, chips: [] },
    { label: "modules()", seq: preorder, key: null, chips: [] },
  ];
  const node = h(
    "div",
    { class: "hv-strip" },
    lines.map((line) => (line.el = h("div", { class: "hv-line" }))),
  );

  function draw(step, modules) {
    lines.forEach((line, which) => {
      const active = (which === 1) === modules;
      const at = active ? step - 1 : -1;
      const { seq } = line;
      const from = Math.floor(Math.max(0, at) / STRIP_PAGE) * STRIP_PAGE;
      const to = Math.min(seq.length, from + STRIP_PAGE);
      if (line.key !== from) {
        line.key = from;
        line.chips = [];
        const parts = [h("span", { class: "hv-line-label", text: line.label })];
        if (from > 0)
          parts.push(
            h("span", { class: "hv-muted", text: t("apply.strip_before", { count: from }) }),
          );
        for (let k = from; k < to; k++) {
          const chip = h("span", { class: "hv-chip", text: nodes[seq[k]].label });
          line.chips.push(chip);
          parts.push(chip);
          if (k + 1 < to) parts.push(h("span", { class: "hv-arrow", text: "→" }));
        }
        if (to < seq.length)
          parts.push(
            h("span", {
              class: "hv-muted",
              text: t("apply.strip_more", { count: seq.length - to }),
            }),
          );
        line.el.replaceChildren(...parts);
      }
      line.el.classList.toggle("hv-line-active", active);
      line.chips.forEach((chip, j) => {
        chip.classList.toggle("hv-chip-now", from + j === at);
        chip.classList.toggle("hv-chip-done", from + j < at);
      });
    });
  }

  return { node, draw };
}

function render({ model, el }) {
  const nodes = buildTree(model.get("nodes"));
  const visits = model.get("visits");
  const preorder = model.get("preorder");
  const applyOrder = visits.map((v) => v[0]);
  const applyNumber = new Map(applyOrder.map((n, k) => [n, k + 1]));
  const sequence = () => (model.get("order") === "modules" ? preorder : applyOrder);

  const t = words(model);
  const root = widgetRoot("hv-apply", t("apply.root"), t);
  const player = createPlayer(model, {
    length: () => sequence().length,
    show: (step) => show(step),
  });
  const controls = transport(model, player, t, t("apply.noun"));
  const header = headerView(t, model, () => show(player.step));
  // A click on a row goes to that module's visit (the next one, for a module visited twice).
  const pick = (i) => {
    const seq = sequence();
    const at = seq.map((n, k) => [n, k]).filter(([n]) => n === i);
    if (!at.length) return;
    const next = at.find(([, k]) => k + 1 > player.step) || at[0];
    player.go(next[1] + 1);
  };
  const tree = treeView(t, nodes, applyNumber, () => show(player.step), pick);
  const side = sideView(t, nodes, visits, applyNumber, tree.visited);
  const strip = stripView(t, nodes, applyOrder, preorder);
  const live = announcer();
  const banner = model.get("complete")
    ? null
    : h("div", {
        class: "hv-warn hv-banner",
        text: t("apply.raised", { visit: visits.length }),
      });
  root.append(
    header.node,
    controls.bar,
    ...(banner ? [banner] : []),
    h("div", { class: "hv-main" }, tree.node, side.node),
    strip.node,
    h("div", { class: "hv-keys", text: t("common.player_keys") }),
    live.node,
  );
  el.append(root);

  let announced = null; // what the live region last said (nothing on the first frame)
  function show(step) {
    const seq = sequence();
    step = Math.max(0, Math.min(step, seq.length));
    const modules = model.get("order") === "modules";
    const current = tree.paint(step, seq, header.following());
    root.dataset.step = String(step);
    root.dataset.order = modules ? "modules" : "apply";
    root.dataset.current = current >= 0 ? nodes[current].label : "";
    header.draw(step, seq.length, modules);
    controls.refresh(step, seq.length);
    side.draw(step, seq.length, current, modules);
    strip.draw(step, modules);
    const sentence = stepSentence(t, nodes, step, seq.length, current, modules);
    if (announced !== null && sentence !== announced) live.say(sentence);
    announced = sentence;
    tree.reveal();
  }

  const onOrder = () => player.reset();
  model.on("change:order", onOrder);
  const cleanups = [
    followTheme(root, model),
    () => player.dispose(),
    controls.dispose,
    live.dispose,
    () => model.off("change:order", onOrder),
    onKeys(root, playerKeys(player, model)),
  ];
  show(player.step);
  return () => cleanups.forEach((f) => f());
}

export default { render };
