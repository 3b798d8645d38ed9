// hookviz site: copy buttons, the contents menu on small screens, "/" to search, the language
// switch, and the search page (search-core.js over the sections' text, indexed when the page
// loads). No request leaves the site.
"use strict";

function copyButtons() {
  for (const button of document.querySelectorAll(".site-copy")) {
    const label = button.textContent; // in the page's language, as are data-copied and data-selected
    button.addEventListener("click", async () => {
      const code = button.parentElement.querySelector("pre");
      // A check cell shows its packed code shortened; data-copy holds the cell that runs.
      const text = button.dataset.copy ?? (code ? code.innerText : "");
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = button.dataset.copied;
      } catch (error) {
        // file:// pages and old browsers may refuse the clipboard: select the code instead.
        const range = document.createRange();
        range.selectNodeContents(code);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = button.dataset.selected;
      }
      setTimeout(() => {
        button.textContent = label;
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

/** The language switch keeps the reader's place: the same section (#anchor) in the other
 *  language, whose headings have the same ids. Without JS it is a plain link to the page. */
function languageSwitch() {
  for (const link of document.querySelectorAll(".site-language")) {
    link.addEventListener("click", () => {
      if (window.location.hash) link.hash = window.location.hash;
      if (document.getElementById("search-results")) link.search = window.location.search;
    });
  }
}

function escapeHtml(text) {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

function markedHtml(pieces) {
  return pieces
    .map((p) => (p.mark ? `<mark>${escapeHtml(p.text)}</mark>` : escapeHtml(p.text)))
    .join("");
}

function searchPage() {
  const list = document.getElementById("search-results");
  const engine = window.HookvizSearch;
  if (!list || !window.HOOKVIZ_SEARCH || !engine) return;
  const status = document.getElementById("search-status");
  const box = document.getElementById("search-page-box");
  const query = new URLSearchParams(window.location.search).get("q") || "";
  box.value = query;
  document.getElementById("search-box").value = query;
  const words = status.dataset; // the page's language's sentences (labels.py)
  const fill = (template, values) =>
    template.replace(/\{(\w+)\}/g, (whole, name) => String(values[name] ?? whole));
  if (!query.trim()) {
    status.textContent = words.empty;
    return;
  }
  const index = engine.buildIndex(window.HOOKVIZ_SEARCH.docs, window.HOOKVIZ_SEARCH.terms);
  const { results } = engine.search(index, query);
  const root = document.body.dataset.root || "";
  const shown = results.slice(0, engine.MAX_RESULTS);
  list.replaceChildren(
    ...shown.map((hit) => {
      const doc = hit.doc;
      const item = document.createElement("li");
      const page = doc.page && doc.page !== doc.title ? doc.page : "";
      item.innerHTML =
        `<a href="${escapeHtml(root + doc.url)}">${markedHtml(engine.highlight(doc.title, hit.titleMarks))}</a>` +
        (page ? `<span class="site-muted"> · ${escapeHtml(page)}</span>` : "") +
        `<p>${markedHtml(engine.snippet(doc.text, hit.marks, hit.byUnit))}</p>`;
      return item;
    }),
  );
  const count = results.length;
  const values = { count, query, shown: shown.length };
  status.textContent = count
    ? fill(count === 1 ? words.foundOne : words.found, values) +
      (count > shown.length ? ` ${fill(words.more, values)}.` : ".") +
      ` ${words.hint}`
    : fill(words.none, values);
  performance.mark("hookviz-search-results"); // bench/bench_site.py reads when this happened
}

document.addEventListener("DOMContentLoaded", () => {
  copyButtons();
  contentsMenu();
  slashToSearch();
  languageSwitch();
  searchPage();
});
