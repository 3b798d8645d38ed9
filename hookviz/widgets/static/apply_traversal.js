// ApplyTraversal: the module tree, apply()'s visits played back in the browser, the call stack.

const STRIP_PAGE = 30; // chips shown at once in the order strip of a long order
const AUTO_COLLAPSE = 150; // trees bigger than this start with only the top level open

function buildTree(rows) {
  const nodes = rows.map(([name, type, parent, params, shared], i) => ({
    i, name, type, parent, params, shared: Boolean(shared), children: [],
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

function render({ model, el }) {
  const nodes = buildTree(model.get("nodes"));
  const visits = model.get("visits");
  const preorder = model.get("preorder");
  const applyOrder = visits.map((v) => v[0]);
  const applyNumber = new Map(applyOrder.map((n, k) => [n, k + 1]));
  const sequence = () => (model.get("order") === "modules" ? preorder : applyOrder);

  const root = widgetRoot("hv-apply", "apply traversal: space plays and pauses, arrows step");
  const cleanups = [followTheme(root, model)];

  // -- header and controls ---------------------------------------------------------------
  const status = h("span", { class: "hv-status" });
  const applyButton = button("apply() post-order", () => setOrder("apply"),
    { cls: "hv-order-apply", title: "Show the order apply() visits: children first, then the module (post-order)" });
  const modulesButton = button("modules() pre-order", () => setOrder("modules"),
    { cls: "hv-order-modules", title: "Show the order modules() yields: the module first, then its children (pre-order)" });
  const follow = h("input", { type: "checkbox", checked: true, "aria-label": "follow the current module" });
  const header = h("div", { class: "hv-header" },
    h("span", { class: "hv-title", text: model.get("title") }), status,
    h("span", { class: "hv-switch", role: "group", "aria-label": "order" }, applyButton, modulesButton),
    h("label", { class: "hv-muted hv-follow" }, follow, " follow"));

  const player = createPlayer(model, { length: () => sequence().length, show: (step) => show(step) });
  const controls = transport(model, player, "steps");
  cleanups.push(() => player.dispose(), controls.dispose);

  // -- the tree ------------------------------------------------------------------------------
  const rowOf = new Array(nodes.length);
  const boxOf = new Array(nodes.length);
  const badgeOf = new Array(nodes.length);
  const countOf = new Array(nodes.length);
  const autoOpened = new Set();
  const treePanel = h("div", { class: "hv-tree", role: "tree" });

  const setOpen = (node, open) => {
    boxOf[node.i].classList.toggle("hv-collapsed", !open);
    rowOf[node.i].setAttribute("aria-expanded", open ? "true" : "false");
  };
  const isOpen = (node) => !boxOf[node.i].classList.contains("hv-collapsed");

  const makeNode = (node) => {
    const caret = node.children.length
      ? button(`open or close ${node.label}`, () => {
        autoOpened.delete(node.i);
        setOpen(node, !isOpen(node));
        dirty.add(node.i);
        show(player.step);
      },
        { iconName: "caret", cls: "hv-caret" })
      : h("span", { class: "hv-caret-space" });
    badgeOf[node.i] = h("span", { class: "hv-badge" });
    countOf[node.i] = h("span", { class: "hv-count hv-muted" });
    const row = h("div", {
      class: "hv-row", role: "treeitem", "data-path": node.path, style: `padding-left:${node.depth * 16}px`,
    },
    caret, badgeOf[node.i],
    h("span", { class: "hv-name", text: node.parent < 0 ? node.type : node.name }),
    node.parent < 0 ? null : h("span", { class: "hv-type", text: node.type }),
    node.params ? h("span", { class: "hv-params", text: node.params }) : null,
    node.shared ? h("span", { class: "hv-tag hv-shared", text: "shared", title: "reached through more than one parent" }) : null,
    countOf[node.i]);
    row.title = applyNumber.has(node.i) ? `apply() visits ${node.label} at #${applyNumber.get(node.i)}` : node.label;
    rowOf[node.i] = row;
    const box = h("div", { class: "hv-node" }, row);
    boxOf[node.i] = box;
    if (node.children.length) box.append(h("div", { class: "hv-children", role: "group" }, node.children.map(makeNode)));
    return box;
  };
  treePanel.append(makeNode(nodes[0]));
  if (nodes.length > AUTO_COLLAPSE) for (const node of nodes) if (node.depth >= 1 && node.children.length) setOpen(node, false);
  for (const node of nodes) if (node.children.length && isOpen(node)) setOpen(node, true);

  // -- the side panel and the order strip ----------------------------------------------------
  const now = h("div", { class: "hv-now" });
  const stack = h("div", { class: "hv-stack" });
  const printed = h("div");
  const changed = h("div");
  const side = h("div", { class: "hv-side" },
    h("div", { class: "hv-panel" }, h("h4", { text: "Now" }), now),
    h("div", { class: "hv-panel hv-stack-panel" }, h("h4", { text: "Call stack (innermost on top)" }), stack),
    h("div", { class: "hv-panel" }, h("h4", { text: "fn printed" }), printed),
    h("div", { class: "hv-panel" }, h("h4", { text: "fn changed" }), changed));
  const strip = h("div", { class: "hv-strip" });
  const banner = model.get("complete") ? null
    : h("div", { class: "hv-warn hv-banner", text: `fn raised at visit ${visits.length}: apply stopped there.` });

  root.append(header, controls.bar, ...(banner ? [banner] : []), h("div", { class: "hv-main" }, treePanel, side), strip,
    h("div", { class: "hv-keys", text: "space: play/pause · ←/→: step · Home/End: start/end · +/−: speed" }));
  el.append(root);

  function setOrder(order) {
    if (order === model.get("order")) return;
    model.set("step", 0);
    model.set("order", order);
    model.save_changes();
  }
  const onOrder = () => player.reset();
  model.on("change:order", onOrder);
  cleanups.push(() => model.off("change:order", onOrder));
  follow.addEventListener("change", () => show(player.step));
  onKeys(root, playerKeys(player, model));

  // -- drawing one step ---------------------------------------------------------------------
  function ancestors(i) {
    const chain = [];
    for (let p = nodes[i].parent; p >= 0; p = nodes[p].parent) chain.push(p);
    return chain;
  }

  // What the tree shows is kept between frames, so that one step repaints a few rows, not all.
  const numberOf = new Int32Array(nodes.length); // visit number shown on each row, 0 for none
  const doneOf = new Int32Array(nodes.length); // numbered rows in each subtree
  const painted = { step: 0, order: model.get("order"), current: -1, hidden: -1 };
  const dirty = new Set(); // rows whose "k/n visited" count may be stale

  function setNumber(i, value) {
    const was = numberOf[i];
    if ((was > 0) !== (value > 0)) {
      const delta = value > 0 ? 1 : -1;
      doneOf[i] += delta;
      dirty.add(i);
      for (const a of ancestors(i)) { doneOf[a] += delta; dirty.add(a); }
    }
    numberOf[i] = value;
    badgeOf[i].textContent = value ? String(value) : "";
    rowOf[i].classList.toggle("hv-visited", value > 0);
  }

  function paintTree(step, seq) {
    const order = model.get("order");
    if (painted.order !== order) {
      for (let k = painted.step - 1; k >= 0; k--) setNumber((painted.order === "modules" ? preorder : applyOrder)[k], 0);
      painted.step = 0;
      painted.order = order;
    }
    for (let k = painted.step; k < step; k++) setNumber(seq[k], k + 1);
    for (let k = painted.step - 1; k >= step; k--) setNumber(seq[k], 0);
    painted.step = step;
    const current = step ? seq[step - 1] : -1;
    if (current >= 0 && follow.checked) {
      const keep = new Set([current, ...ancestors(current)]);
      for (const i of [...autoOpened]) if (!keep.has(i)) { setOpen(nodes[i], false); autoOpened.delete(i); dirty.add(i); }
      for (const i of ancestors(current)) if (!isOpen(nodes[i])) { setOpen(nodes[i], true); autoOpened.add(i); dirty.add(i); }
    }
    let hidden = -1; // the nearest visible ancestor of a current module inside a closed subtree
    if (current >= 0) for (const a of ancestors(current).reverse()) if (!isOpen(nodes[a])) { hidden = a; break; }
    if (painted.current >= 0) rowOf[painted.current].classList.remove("hv-current");
    if (current >= 0) rowOf[current].classList.add("hv-current");
    if (painted.hidden >= 0) rowOf[painted.hidden].classList.remove("hv-has-current");
    if (hidden >= 0) rowOf[hidden].classList.add("hv-has-current");
    painted.current = current;
    painted.hidden = hidden;
    for (const i of dirty) {
      const node = nodes[i];
      const count = node.children.length && !isOpen(node) ? `${doneOf[i]}/${node.size} visited` : "";
      if (countOf[i].textContent !== count) countOf[i].textContent = count;
    }
    dirty.clear();
    return current;
  }

  function show(step) {
    const seq = sequence();
    step = Math.max(0, Math.min(step, seq.length));
    const modules = model.get("order") === "modules";
    const current = paintTree(step, seq);
    status.textContent = `step ${step} / ${seq.length}`;
    root.dataset.step = String(step);
    root.dataset.order = modules ? "modules" : "apply";
    root.dataset.current = current >= 0 ? nodes[current].label : "";
    applyButton.classList.toggle("hv-on", !modules);
    modulesButton.classList.toggle("hv-on", modules);
    applyButton.setAttribute("aria-pressed", String(!modules));  // a switch: say which order is shown
    modulesButton.setAttribute("aria-pressed", String(modules));
    controls.refresh(step, seq.length);
    showSide(step, current, modules);
    showStrip(step, modules);
    // Last, after every write: measuring the layout once per frame, not once per change.
    if (current >= 0) reveal(rowOf[painted.hidden >= 0 ? painted.hidden : current]);
  }

  function reveal(row) {
    const box = treePanel.getBoundingClientRect();
    const r = row.getBoundingClientRect();
    if (r.top < box.top) treePanel.scrollTop -= box.top - r.top + 8;
    else if (r.bottom > box.bottom) treePanel.scrollTop += r.bottom - box.bottom + 8;
  }

  function showSide(step, current, modules) {
    const total = sequence().length;
    stack.parentElement.hidden = modules;
    printed.parentElement.hidden = modules;
    changed.parentElement.hidden = modules;
    if (current < 0) {
      now.replaceChildren(modules
        ? h("p", { text: "modules() lists a module first, then its children (pre-order). It calls nothing." })
        : h("p", { text: "Nothing visited yet. apply(fn) first calls apply(fn) on each child, and calls fn(module) only after all of them returned: children before parents (post-order)." }));
      stack.replaceChildren(h("span", { class: "hv-muted", text: "apply has not started." }));
      printed.replaceChildren();
      changed.replaceChildren();
      return;
    }
    const node = nodes[current];
    if (modules) {
      const at = applyNumber.get(current);
      now.replaceChildren(
        h("div", {}, h("b", { text: `modules() yields ${node.label}` }), ` (${step} of ${total})`,
          node.parent >= 0 ? h("span", { class: "hv-muted", text: ` · ${node.type}` }) : null),
        h("p", { text: node.children.length
          ? `before its ${node.children.length} ${node.children.length === 1 ? "child" : "children"}: pre-order.`
          : "a leaf: no children." }),
        h("p", { class: "hv-muted", text: at ? `apply() visits it at #${at}.` : "apply() reaches it only through another parent path." }));
      return;
    }
    const [, frames, text, changes] = visits[step - 1];
    now.replaceChildren(
      h("div", {}, h("b", { text: `fn(${node.label})` }), ` visit ${step} of ${total}`,
        node.parent >= 0 ? h("span", { class: "hv-muted", text: ` · ${node.type}` }) : null),
      h("p", { text: node.children.length
        ? `All ${node.children.length} ${node.children.length === 1 ? "child" : "children"} returned first, so fn sees ${node.label} after them.`
        : "A leaf: nothing below it, so fn runs as soon as apply reaches it." }));
    const lines = [h("div", { class: "hv-frame hv-frame-fn" }, h("span", { class: "hv-mono", text: `fn(${node.label})` }),
      h("span", { class: "hv-tag", text: "running" }))];
    for (let k = frames.length - 1; k >= 0; k--) {
      const frame = nodes[frames[k]];
      const inner = k + 1 < frames.length ? frames[k + 1] : -1;
      const kids = frame.children.map((c) => {
        const state = inner === c.i ? "hv-kid-now" : (numberOf[c.i] > 0 ? "hv-kid-done" : "hv-kid-wait");
        const mark = state === "hv-kid-done" ? "✓" : state === "hv-kid-now" ? "…" : "·";
        return h("span", { class: `hv-kid ${state}`, text: `${c.name} ${mark}` });
      });
      const what = inner < 0 ? (frame.children.length ? "children done → fn(self)" : "no children → fn(self)")
        : "waiting for a child";
      lines.push(h("div", { class: "hv-frame" },
        h("span", { class: "hv-mono", text: `${frame.label}.apply(fn)` }),
        h("span", { class: "hv-muted", text: what }),
        kids.length ? h("span", { class: "hv-kids" }, kids) : null));
    }
    stack.replaceChildren(...lines);
    printed.replaceChildren(text ? h("pre", { text }) : h("span", { class: "hv-muted", text: "(nothing)" }));
    changed.replaceChildren(changes.length
      ? h("ul", { class: "hv-changes" }, changes.map((c) => h("li", { class: "hv-mono", text: c })))
      : h("span", { class: "hv-muted", text: "(no parameter changed)" }));
  }

  // The two orders as chips. A long order shows one page of STRIP_PAGE chips around the
  // current one; chips are rebuilt only when the page changes, otherwise restyled.
  const lines = [
    { label: "apply()", seq: applyOrder, key: null, chips: [] },
    { label: "modules()", seq: preorder, key: null, chips: [] },
  ];
  strip.append(...lines.map((line) => (line.el = h("div", { class: "hv-line" }))));

  function showStrip(step, modules) {
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
        if (from > 0) parts.push(h("span", { class: "hv-muted", text: `… ${from} before` }));
        for (let k = from; k < to; k++) {
          const chip = h("span", { class: "hv-chip", text: nodes[seq[k]].label });
          line.chips.push(chip);
          parts.push(chip);
          if (k + 1 < to) parts.push(h("span", { class: "hv-arrow", text: "→" }));
        }
        if (to < seq.length) parts.push(h("span", { class: "hv-muted", text: `… ${seq.length - to} more` }));
        line.el.replaceChildren(...parts);
      }
      line.el.classList.toggle("hv-line-active", active);
      line.chips.forEach((chip, j) => {
        chip.classList.toggle("hv-chip-now", from + j === at);
        chip.classList.toggle("hv-chip-done", from + j < at);
      });
    });
  }

  for (const node of nodes) dirty.add(node.i);
  show(player.step);
  return () => cleanups.forEach((f) => f());
}

export default { render };
