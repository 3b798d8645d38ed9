// HookInventory: a table of the hooks on a model, duplicates flagged, remove buttons.
// A click sends one message to Python, which removes the hook and sends the new list back.
// Offline (a static page, model.get("offline")), no Python holds the hooks: the buttons are off.
import { button, followTheme, h, onKeys, scrollable, widgetRoot, words } from "./common.js";

// The title, how many hooks and duplicates, and the buttons that act on all of them.
function headerView(t, model, send, offline) {
  const count = h("span", { class: "hv-status" });
  const removeDuplicates = button(
    t("inventory.remove_duplicates"),
    () => send({ action: "remove_duplicates" }),
    {
      cls: "hv-with-text hv-remove-duplicates",
      iconName: "remove",
      title: t("inventory.remove_duplicates_title"),
    },
  );
  const removeAll = button(t("inventory.remove_all"), () => send({ action: "remove_all" }), {
    cls: "hv-with-text hv-remove-all",
    iconName: "remove",
    title: t("inventory.remove_all_title"),
  });
  const refresh = button(t("inventory.refresh"), () => send({ action: "refresh" }), {
    cls: "hv-with-text hv-refresh",
    iconName: "refresh",
    title: t("inventory.refresh_title"),
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
    const total = t(hooks.length === 1 ? "inventory.count_one" : "inventory.count", {
      count: hooks.length,
    });
    const copies = t(extra === 1 ? "inventory.duplicates_one" : "inventory.duplicates", {
      count: extra,
    });
    count.textContent = extra ? `${total} · ${copies}` : total;
    removeDuplicates.disabled = offline || extra === 0;
    removeAll.disabled = offline || hooks.every((row) => row.target === "global");
  };
  refresh.disabled = offline;
  return { node, draw };
}

// One row per hook, the selected one outlined, each with its own remove button.
function tableView(t, send, onPick, offline) {
  const body = h("tbody");
  const headings = ["where", "kind", "hook", "source", "id", "flags"].map((c) =>
    h("th", { text: t(`inventory.column_${c}`) }),
  );
  const table = h(
    "table",
    { class: "hv-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headings,
        h("th", {}, h("span", { class: "hv-sr-only", text: t("inventory.column_remove") })),
      ),
    ),
    body,
  );
  const node = scrollable(h("div", { class: "hv-table-panel" }, table), t("inventory.region"));
  const row = (hook, i, selected) => {
    const remove = button(t("inventory.remove"), () => send({ action: "remove", id: hook.id }), {
      cls: "hv-with-text hv-remove",
      iconName: "remove",
      title: t("inventory.remove_title", { kind: hook.kind, name: hook.name, id: hook.id }),
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
              title: t("inventory.duplicate_title"),
              text: t(hook.first ? "inventory.first" : "inventory.copy", { count: hook.copies }),
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
  const t = words(model);
  const kernelNote = t("inventory.kernel_note");
  const refused = ({ action }) => {
    note = `${t(action === "refresh" ? "inventory.not_refreshed" : "inventory.not_removed")} ${kernelNote}`;
    draw();
  };
  const send = offline ? refused : (content) => model.send(content);
  const removeSelected = () => {
    const hook = model.get("hooks")[selected];
    if (hook) send({ action: "remove", id: hook.id });
  };

  const root = widgetRoot(
    "hv-inventory",
    t(offline ? "inventory.root_offline" : "inventory.root"),
    t,
  );
  const header = headerView(t, model, send, offline);
  const table = tableView(
    t,
    send,
    (i) => {
      selected = i;
      draw();
    },
    offline,
  );
  const empty = h("div", { class: "hv-muted hv-empty", text: t("inventory.empty") });
  const status = h("div", { class: "hv-muted hv-inv-status", role: "status" });
  root.append(
    header.node,
    ...(offline ? [h("div", { class: "hv-muted hv-kernel-note", text: kernelNote })] : []),
    table.node,
    empty,
    status,
    h("div", { class: "hv-keys", text: t(offline ? "inventory.keys_offline" : "inventory.keys") }),
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
