// hookviz site: copy buttons, the contents menu on small screens, "/" to search, and the
// search page (lunr.js over the index built at build time). No request leaves the site.
"use strict";

function copyButtons() {
  for (const button of document.querySelectorAll(".site-copy")) {
    button.addEventListener("click", async () => {
      const code = button.parentElement.querySelector("pre");
      const text = code ? code.innerText : "";
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = "Copied";
      } catch (error) {
        // file:// pages and old browsers may refuse the clipboard: select the code instead.
        const range = document.createRange();
        range.selectNodeContents(code);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Selected: press Ctrl+C";
      }
      setTimeout(() => {
        button.textContent = "Copy";
      }, 2000);
    });
  }
}

function contentsMenu() {
  const button = document.querySelector(".site-menu");
  const nav = document.getElementById("course-nav");
  if (!button || !nav) return;
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    document.body.classList.toggle("site-nav-open", open);
  });
}

function slashToSearch() {
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest("input, textarea, [contenteditable], .hv-site-widget")) return;
    event.preventDefault();
    document.getElementById("search-box").focus();
  });
}

function escapeHtml(text) {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

function searchPage() {
  const list = document.getElementById("search-results");
  if (!list || !window.HOOKVIZ_SEARCH || !window.lunr) return;
  const status = document.getElementById("search-status");
  const box = document.getElementById("search-page-box");
  const query = new URLSearchParams(window.location.search).get("q") || "";
  box.value = query;
  document.getElementById("search-box").value = query;
  if (!query.trim()) {
    status.textContent = "Type a few words, then press Enter.";
    return;
  }
  const index = window.lunr.Index.load(window.HOOKVIZ_SEARCH.index);
  // Each word as typed, and as a prefix: "post-order" finds post-order, "hook" finds hooks.
  const words = query
    .toLowerCase()
    .split(/[\s-]+/)
    .filter(Boolean)
    .map((w) => w.replace(/[:~^+*]/g, ""));
  let hits = [];
  try {
    hits = index.query((q) => {
      for (const word of words) {
        q.term(word, { boost: 10 });
        q.term(word, {
          boost: 1,
          wildcard: window.lunr.Query.wildcard.TRAILING,
          usePipeline: false,
        });
      }
    });
  } catch (error) {
    hits = [];
  }
  const docs = window.HOOKVIZ_SEARCH.docs;
  const root = document.body.dataset.root || "";
  list.replaceChildren(
    ...hits.slice(0, 50).map((hit) => {
      const doc = docs[hit.ref];
      const item = document.createElement("li");
      item.innerHTML =
        `<a href="${escapeHtml(root + doc.url)}">${escapeHtml(doc.title)}</a>` +
        `<span class="site-muted"> · ${escapeHtml(doc.page)}</span><p>${escapeHtml(doc.snippet)}…</p>`;
      return item;
    }),
  );
  status.textContent = hits.length
    ? `${hits.length} section${hits.length === 1 ? "" : "s"} match “${query}”${hits.length > 50 ? " (the first 50 shown)" : ""}.`
    : `Nothing matches “${query}”.`;
}

document.addEventListener("DOMContentLoaded", () => {
  copyButtons();
  contentsMenu();
  slashToSearch();
  searchPage();
});
