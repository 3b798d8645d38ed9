// HookInventory: a table of the hooks on a model, duplicates flagged, remove buttons.
// A click sends one message to Python, which removes the hook and sends the new list back.
// Offline (a static page, model.get("offline")), no Python holds the hooks: the buttons are off.
import { button, followTheme, h, onKeys, scrollable, widgetRoot } from "./common.js";

const KERNEL_NOTE =
  "Removing or refreshing hooks needs a running kernel: open this notebook in JupyterLab or Colab and run it.";

// The title, how many hooks and duplicates, and the buttons that act on all of them.
function headerView(model, send, offline) {
  const count = h("span", { class: "hv-status" });
  const removeDuplicates = button(
    "Remove duplicates",
    () => send({ action: "remove_duplicates" }),
    {
      cls: "hv-with-text hv-remove-duplicates",
      iconName: "remove",
      title: "Keep the first copy of each duplicated hook",
    },
  );
  const removeAll = button("Remove all", () => send({ action: "remove_all" }), {
    cls: "hv-with-text hv-remove-all",
    iconName: "remove",
    title: "Remove every hook on the model and its parameters",
  });
  const refresh = button("Refresh", () => send({ action: "refresh" }), {
    cls: "hv-with-text hv-refresh",
    iconName: "refresh",
    title: "Read the hooks again (r)",
  });
  const node = h(
    "div",
    { class: "hv-header" },
    h("span", { class: "hv-title", text: model.get("title") }),
    count,
    h("span", { class: "hv-actions" }, removeDuplicates, removeAll, refresh),
  );
  const draw = (hooks) => {
    const extra = hooks.reduce(
      (n, row) => n + (row.first && row.copies > 1 ? row.copies - 1 : 0),
      0,
    );
    count.textContent = `${hooks.length} hook${hooks.length === 1 ? "" : "s"}${extra ? ` · ${extra} duplicate${extra === 1 ? "" : "s"}` : ""}`;
    removeDuplicates.disabled = offline || extra === 0;
    removeAll.disabled = offline || hooks.every((row) => row.target === "global");
  };
  refresh.disabled = offline;
  return { node, draw };
}

// One row per hook, the selected one outlined, each with its own remove button.
function tableView(send, onPick, offline) {
  const body = h("tbody");
  const headings = ["where", "kind", "hook", "defined at", "id", "flags"].map((c) =>
    h("th", { text: c }),
  );
  const table = h(
    "table",
    { class: "hv-table" },
    h(
      "thead",
      {},
      h("tr", {}, headings, h("th", {}, h("span", { class: "hv-sr-only", text: "remove" }))),
    ),
    body,
  );
  const node = scrollable(h("div", { class: "hv-table-panel" }, table), "hooks on the model");
  const row = (hook, i, selected) => {
    const remove = button("Remove", () => send({ action: "remove", id: hook.id }), {
      cls: "hv-with-text hv-remove",
      iconName: "remove",
      title: `Remove ${hook.kind} hook ${hook.name} (id ${hook.id})`,
    });
    remove.disabled = offline;
    return h(
      "tr",
      {
        class: `hv-hook${hook.copies > 1 ? " hv-dup" : ""}${i === selected ? " hv-selected" : ""}`,
        "data-id": hook.id,
        onclick: () => onPick(i),
      },
      h("td", { class: "hv-mono", text: hook.where }),
      h("td", { text: hook.kind }),
      h(
        "td",
        { class: "hv-mono" },
        hook.name,
        hook.copies > 1
          ? h("span", {
              class: "hv-tag hv-warn",
              title: "the same hook registered more than once: it runs once per copy",
              text: hook.first ? `×${hook.copies} (first)` : `×${hook.copies} (copy)`,
            })
          : null,
      ),
      h("td", { class: "hv-mono hv-muted", text: hook.source }),
      h("td", { class: "hv-mono hv-muted", text: String(hook.id) }),
      h("td", { class: "hv-muted", text: hook.flags.join(", ") }),
      h("td", {}, remove),
    );
  };
  const draw = (hooks, selected) =>
    body.replaceChildren(...hooks.map((hook, i) => row(hook, i, selected)));
  return { node, draw };
}

function render({ model, el }) {
  let selected = 0;
  const offline = Boolean(model.get("offline"));
  let note = ""; // offline: what a key that would have sent a message says instead
  const refused = ({ action }) => {
    note = `${action === "refresh" ? "Not refreshed" : "Not removed"}. ${KERNEL_NOTE}`;
    draw();
  };
  const send = offline ? refused : (content) => model.send(content);
  const removeSelected = () => {
    const hook = model.get("hooks")[selected];
    if (hook) send({ action: "remove", id: hook.id });
  };

  const root = widgetRoot(
    "hv-inventory",
    offline
      ? "hook inventory: arrows choose a hook; removing needs a running kernel"
      : "hook inventory: arrows choose a hook, Delete removes it",
  );
  const header = headerView(model, send, offline);
  const table = tableView(
    send,
    (i) => {
      selected = i;
      draw();
    },
    offline,
  );
  const empty = h("div", { class: "hv-muted hv-empty", text: "No hooks on this model." });
  const status = h("div", { class: "hv-muted hv-inv-status", role: "status" });
  const kernelNote = offline
    ? [h("div", { class: "hv-muted hv-kernel-note", text: KERNEL_NOTE })]
    : [];
  root.append(
    header.node,
    ...kernelNote,
    table.node,
    empty,
    status,
    h("div", {
      class: "hv-keys",
      text: offline ? "↑/↓: choose a hook" : "↑/↓: choose a hook · Delete: remove it · r: refresh",
    }),
  );
  el.append(root);

  function draw() {
    const hooks = model.get("hooks");
    selected = Math.max(0, Math.min(selected, hooks.length - 1));
    root.dataset.count = String(hooks.length);
    header.draw(hooks);
    table.draw(hooks, selected);
    empty.hidden = hooks.length > 0;
    status.textContent = note || model.get("status");
  }

  const move = (delta) => {
    selected += delta;
    draw();
  };
  model.on("change:hooks", draw);
  model.on("change:status", draw);
  const cleanups = [
    followTheme(root, model),
    () => {
      model.off("change:hooks", draw);
      model.off("change:status", draw);
    },
    onKeys(root, {
      ArrowDown: () => move(1),
      ArrowUp: () => move(-1),
      Delete: removeSelected,
      Backspace: removeSelected,
      r: () => send({ action: "refresh" }),
    }),
  ];
  draw();
  return () => cleanups.forEach((f) => f());
}

export default { render };
