// HookInventory: a table of the hooks on a model, duplicates flagged, remove buttons.
// A click sends one message to Python, which removes the hook and sends the new list back.

function render({ model, el }) {
  const root = widgetRoot("hv-inventory", "hook inventory: arrows choose a hook, Delete removes it");
  const cleanups = [followTheme(root, model)];
  let selected = 0;

  const send = (content) => model.send(content);
  const count = h("span", { class: "hv-status" });
  const status = h("div", { class: "hv-muted hv-inv-status", role: "status" });
  const removeDuplicates = button("Remove duplicates", () => send({ action: "remove_duplicates" }),
    { cls: "hv-with-text hv-remove-duplicates", iconName: "remove", title: "Keep the first copy of each duplicated hook" });
  const removeAll = button("Remove all", () => send({ action: "remove_all" }),
    { cls: "hv-with-text hv-remove-all", iconName: "remove", title: "Remove every hook on the model and its parameters" });
  const refresh = button("Refresh", () => send({ action: "refresh" }),
    { cls: "hv-with-text hv-refresh", iconName: "refresh", title: "Read the hooks again (r)" });
  const body = h("tbody");
  const table = h("table", { class: "hv-table" },
    h("thead", {}, h("tr", {}, ["where", "kind", "hook", "defined at", "id", "flags", ""].map((c) => h("th", { text: c })))),
    body);
  const empty = h("div", { class: "hv-muted hv-empty", text: "No hooks on this model." });
  root.append(
    h("div", { class: "hv-header" }, h("span", { class: "hv-title", text: model.get("title") }), count,
      h("span", { class: "hv-actions" }, removeDuplicates, removeAll, refresh)),
    h("div", { class: "hv-table-panel" }, table), empty, status,
    h("div", { class: "hv-keys", text: "↑/↓: choose a hook · Delete: remove it · r: refresh" }));
  el.append(root);

  function draw() {
    const hooks = model.get("hooks");
    selected = Math.max(0, Math.min(selected, hooks.length - 1));
    const extra = hooks.reduce((n, row) => n + (row.first && row.copies > 1 ? row.copies - 1 : 0), 0);
    count.textContent = `${hooks.length} hook${hooks.length === 1 ? "" : "s"}${extra ? ` · ${extra} duplicate${extra === 1 ? "" : "s"}` : ""}`;
    root.dataset.count = String(hooks.length);
    removeDuplicates.disabled = extra === 0;
    removeAll.disabled = hooks.every((row) => row.target === "global");
    empty.hidden = hooks.length > 0;
    body.replaceChildren(...hooks.map((row, i) => {
      const remove = button("Remove", () => send({ action: "remove", id: row.id }),
        { cls: "hv-with-text hv-remove", iconName: "remove", title: `Remove ${row.kind} hook ${row.name} (id ${row.id})` });
      return h("tr", {
        class: `hv-hook${row.copies > 1 ? " hv-dup" : ""}${i === selected ? " hv-selected" : ""}`,
        "data-id": row.id, onclick: () => { selected = i; draw(); },
      },
      h("td", { class: "hv-mono", text: row.where }),
      h("td", { text: row.kind }),
      h("td", { class: "hv-mono" }, row.name,
        row.copies > 1 ? h("span", { class: "hv-tag hv-warn", title: "the same hook registered more than once: it runs once per copy",
          text: row.first ? `×${row.copies} (first)` : `×${row.copies} (copy)` }) : null),
      h("td", { class: "hv-mono hv-muted", text: row.source }),
      h("td", { class: "hv-mono hv-muted", text: String(row.id) }),
      h("td", { class: "hv-muted", text: row.flags.join(", ") }),
      h("td", {}, remove));
    }));
    status.textContent = model.get("status");
  }

  model.on("change:hooks", draw);
  model.on("change:status", draw);
  cleanups.push(() => { model.off("change:hooks", draw); model.off("change:status", draw); });
  const move = (delta) => { selected += delta; draw(); };
  onKeys(root, {
    ArrowDown: () => move(1),
    ArrowUp: () => move(-1),
    Delete: () => { const row = model.get("hooks")[selected]; if (row) send({ action: "remove", id: row.id }); },
    Backspace: () => { const row = model.get("hooks")[selected]; if (row) send({ action: "remove", id: row.id }); },
    r: () => send({ action: "refresh" }),
  });
  draw();
  return () => cleanups.forEach((f) => f());
}

export default { render };
