// hookviz site search: the tokeniser and the matcher, for the search page (and for node, as
// CommonJS: the tests compare tokenize() with its Python twin, hookviz/site/tokens.py, which
// cuts the build's term index). The build ships each section's plain text and the sections of
// each term; the page tokenises the sections a query may be in, with tokenize() below. Hangul
// is indexed as syllables and syllable pairs (Korean attaches particles to words: 훅을, 훅은;
// 순전파 holds 전파), everything else as words of letters, digits and underscores.
"use strict";
/* global module */ // node loads this file as CommonJS; the page, as a classic script

(function (root) {
  const WORD = /[\p{L}\p{N}_]+/gu;
  const HANGUL = /[\uAC00-\uD7A3]/;
  const MAX_RESULTS = 50;
  const SNIPPET_BEFORE = 70;
  const SNIPPET_AFTER = 170;

  /** The terms of `text` in order: {term, start, end, pos}. `pos` counts words, so that a
   *  phrase is terms at consecutive positions; the parts of an identifier (register, full,
   *  backward, hook of register_full_backward_hook) share its position, and so do a Hangul
   *  run's syllable and the pair it starts. */
  function tokenize(text) {
    const tokens = [];
    let pos = 0;
    for (const match of text.matchAll(WORD)) {
      const word = match[0];
      const start = match.index;
      if (HANGUL.test(word)) {
        pos = hangul(word, start, pos, tokens);
        continue;
      }
      const term = word.toLowerCase();
      tokens.push({ term, start, end: start + word.length, pos });
      if (term.includes("_")) {
        let offset = 0;
        for (const part of term.split("_")) {
          if (part && part !== term) {
            tokens.push({
              term: part,
              start: start + offset,
              end: start + offset + part.length,
              pos,
              part: true,
            });
          }
          offset += part.length + 1;
        }
      }
      pos += 1;
    }
    return tokens;
  }

  /** A word with Hangul in it: each Hangul syllable, each pair of neighbouring syllables, and
   *  any other run (letters, digits) as a word of its own. */
  function hangul(word, start, pos, tokens) {
    const chars = Array.from(word);
    let offset = 0;
    let latin = "";
    let latinStart = 0;
    const flush = () => {
      if (latin) {
        tokens.push({
          term: latin.toLowerCase(),
          start: start + latinStart,
          end: start + latinStart + latin.length,
          pos: pos++,
        });
        latin = "";
      }
    };
    chars.forEach((ch, i) => {
      if (HANGUL.test(ch)) {
        flush();
        const at = start + offset;
        tokens.push({ term: ch, start: at, end: at + ch.length, pos });
        if (i + 1 < chars.length && HANGUL.test(chars[i + 1])) {
          tokens.push({ term: ch + chars[i + 1], start: at, end: at + 2, pos, pair: true });
        }
        pos += 1;
      } else {
        if (!latin) latinStart = offset;
        latin += ch;
      }
      offset += ch.length;
    });
    flush();
    return pos;
  }

  /** The query as units that must all match: a quoted phrase, or a word (a word that the
   *  tokeniser splits, like post-order, is a phrase of its parts). */
  function parseQuery(query) {
    const units = [];
    const pattern = /"([^"]*)"?|(\S+)/g;
    for (const match of query.matchAll(pattern)) {
      const text = match[1] !== undefined ? match[1] : match[2];
      const terms = phraseTerms(text);
      if (terms.length) units.push({ text, terms, quoted: match[1] !== undefined });
    }
    return units;
  }

  /** A phrase's terms at consecutive positions (a Hangul word: its pairs, or its syllable). */
  function phraseTerms(text) {
    const tokens = tokenize(text).filter((t) => !t.part);
    const byPos = new Map();
    for (const t of tokens) {
      if (!byPos.has(t.pos) || t.pair) byPos.set(t.pos, t);
    }
    const terms = [];
    const positions = [...byPos.keys()].sort((a, b) => a - b);
    for (let i = 0; i < positions.length; i++) {
      const t = byPos.get(positions[i]);
      terms.push(t.term);
      if (t.pair) i += 1; // a pair covers its next syllable too
    }
    return terms;
  }

  /** One section's tokens, grouped for matching: term -> positions, and the token list. */
  function indexText(text) {
    return { text, tokens: tokenize(text) };
  }

  /** The sections to search: `docs`, and `terms` (term -> the sections that hold it, cut at
   *  build time by the same tokeniser in Python, hookviz/site/tokens.py), when the build gave
   *  them. A section is tokenised only when a query's terms may be in it. */
  function buildIndex(docs, terms) {
    const entries = docs.map((doc) => ({ doc, fields: null }));
    return { entries, terms: terms || null };
  }

  function fieldsOf(entry) {
    if (!entry.fields) {
      const doc = entry.doc;
      entry.fields = {
        title: indexText(doc.title),
        page: indexText(doc.page),
        body: indexText(doc.text),
      };
    }
    return entry.fields;
  }

  /** The sections that hold every term of every unit somewhere (a superset of the matches), or
   *  null for all of them when the index has no terms. */
  function candidates(index, units) {
    if (!index.terms) return null;
    let found = null;
    for (const unit of units) {
      unit.terms.forEach((wanted, i) => {
        const prefix = i === unit.terms.length - 1 && !unit.quoted;
        const holding = new Set();
        for (const [term, sections] of Object.entries(index.terms)) {
          if (termMatches(term, wanted, prefix)) sections.forEach((d) => holding.add(d));
        }
        found = found === null ? holding : new Set([...found].filter((d) => holding.has(d)));
      });
    }
    return found;
  }

  /** Where `terms` occur one after the other in `field`: [{start, end, exact}] per occurrence.
   *  Every term but the last must match a whole word or identifier part; the last may be the
   *  start of a longer word ("hook" finds hooks), unless the unit was quoted. */
  function occurrences(field, terms, quoted) {
    const found = [];
    const tokens = field.tokens;
    const atPos = new Map();
    for (const t of tokens) {
      if (!atPos.has(t.pos)) atPos.set(t.pos, []);
      atPos.get(t.pos).push(t);
    }
    const first = terms[0];
    const last = terms.length - 1;
    for (const t of tokens) {
      if (!termMatches(t.term, first, last === 0 && !quoted)) continue;
      let end = t.end;
      let exact = t.term === first;
      let ok = true;
      let pos = t.pos;
      let step = t.pair ? 2 : 1; // a syllable pair covers the next position too
      for (let i = 1; i <= last; i++) {
        pos += step;
        const next = (atPos.get(pos) || []).find((n) =>
          termMatches(n.term, terms[i], i === last && !quoted),
        );
        if (!next) {
          ok = false;
          break;
        }
        step = next.pair ? 2 : 1;
        exact = exact && next.term === terms[i];
        end = next.end;
      }
      if (ok) found.push({ start: t.start, end, exact, whole: !t.part });
    }
    return found;
  }

  /** A term matches a wanted one when it is the same, begins with it (`prefix`), or, for an
   *  identifier part such as full_backward, holds it between underscores. */
  function termMatches(term, wanted, prefix) {
    if (prefix ? term.startsWith(wanted) : term === wanted) return true;
    return wanted.includes("_") && `_${term}_`.includes(`_${wanted}_`);
  }

  /** Sections where every unit matches (in the section's title, its page's title or its
   *  text), best first: sections whose heading holds every unit, then those whose heading or
   *  page title does (the page that teaches a term names it), then the rest; within each,
   *  whole words in the title, then parts of identifiers in the title, the page's title, the
   *  words close together in the text, how often, then the site's order. One result per
   *  section. */
  function search(index, query) {
    const units = parseQuery(query);
    if (!units.length) return { units, results: [] };
    const results = [];
    const seen = new Set();
    const wanted = candidates(index, units);
    index.entries.forEach((entry, order) => {
      if (wanted && !wanted.has(order)) return;
      const fields = fieldsOf(entry);
      let score = 0;
      let headed = 0; // units in the section's heading
      let named = 0; // units in the heading or the page's title
      const marks = [];
      const firstInBody = []; // each unit's occurrences in the text
      for (const unit of units) {
        const inTitle = occurrences(fields.title, unit.terms, unit.quoted);
        const inPage = occurrences(fields.page, unit.terms, unit.quoted);
        const inBody = occurrences(fields.body, unit.terms, unit.quoted);
        if (!inTitle.length && !inPage.length && !inBody.length) return;
        if (inTitle.length) headed += 1;
        if (inTitle.length || inPage.length) named += 1;
        if (inTitle.length) score += inTitle.some((o) => o.whole) ? 100 : 60;
        if (inTitle.some((o) => o.exact && o.whole)) score += 20;
        if (inPage.length) score += 30;
        if (inBody.length) {
          score += Math.min(inBody.length, 10) * 2 + (inBody.some((o) => o.exact) ? 5 : 0);
          firstInBody.push(inBody);
        }
        marks.push(...inBody);
      }
      if (units.length > 1 && firstInBody.length === units.length && near(firstInBody)) score += 40;
      if (seen.has(entry.doc.url)) return;
      seen.add(entry.doc.url);
      const titles = titleMarks(fields, units);
      // the page that teaches a term names it: every word in the heading, then in the heading
      // or the page's title, before sections that only mention it, however often
      const tier = headed === units.length ? 2 : named === units.length ? 1 : 0;
      results.push({
        doc: entry.doc,
        score,
        tier,
        order,
        marks,
        byUnit: firstInBody,
        titleMarks: titles,
      });
    });
    results.sort((a, b) => b.tier - a.tier || b.score - a.score || a.order - b.order);
    return { units, results };
  }

  /** Whether some occurrence of every unit lies within a sentence's reach of the first's. */
  function near(perUnit) {
    return perUnit[0].some((o) =>
      perUnit.slice(1).every((others) => others.some((p) => Math.abs(p.start - o.start) < 60)),
    );
  }

  function titleMarks(fields, units) {
    return units.flatMap((u) => occurrences(fields.title, u.terms, u.quoted));
  }

  /** A stretch of `text` around its matches, as [{text, mark}] pieces: the stretch that shows
   *  the most of the query's units (`byUnit`: each unit's occurrences), the earliest of those. */
  function snippet(text, marks, byUnit) {
    if (!marks.length) {
      const cut = text.length > SNIPPET_AFTER ? cutAt(text, SNIPPET_AFTER) : text.length;
      return [{ text: text.slice(0, cut) + (cut < text.length ? " …" : ""), mark: false }];
    }
    const sorted = [...marks].sort((a, b) => a.start - b.start);
    const units = byUnit && byUnit.length ? byUnit : [sorted];
    let anchor = sorted[0];
    let best = -1;
    for (const m of sorted) {
      const covered = units.filter((occ) =>
        occ.some((o) => o.start >= m.start - SNIPPET_BEFORE && o.end <= m.end + SNIPPET_AFTER),
      ).length;
      if (covered > best) {
        best = covered;
        anchor = m;
      }
      if (best === units.length) break;
    }
    // start a little before the first occurrence in the window that belongs to it
    const inWindow = sorted.filter(
      (m) => m.start >= anchor.start - SNIPPET_BEFORE && m.start <= anchor.start,
    );
    const lead = inWindow.length ? inWindow[0] : anchor;
    let from = Math.max(0, Math.min(lead.start, anchor.start) - 30);
    if (from > 0) from = text.indexOf(" ", from) + 1 || from;
    if (from > lead.start) from = lead.start;
    let to = Math.min(text.length, anchor.end + SNIPPET_AFTER);
    if (to < text.length) to = cutAt(text, to);
    const pieces = [];
    if (from > 0) pieces.push({ text: "… ", mark: false });
    let at = from;
    for (const m of sorted) {
      if (m.start < at || m.end > to) continue;
      if (m.start > at) pieces.push({ text: text.slice(at, m.start), mark: false });
      pieces.push({ text: text.slice(m.start, m.end), mark: true });
      at = m.end;
    }
    if (at < to) pieces.push({ text: text.slice(at, to), mark: false });
    if (to < text.length) pieces.push({ text: " …", mark: false });
    return pieces;
  }

  function cutAt(text, limit) {
    const space = text.lastIndexOf(" ", limit);
    return space > limit - 40 ? space : limit;
  }

  /** [{text, mark}] pieces of a title with its matches marked. */
  function highlight(text, marks) {
    const sorted = [...marks].sort((a, b) => a.start - b.start);
    const out = [];
    let at = 0;
    for (const m of sorted) {
      if (m.start < at) continue;
      if (m.start > at) out.push({ text: text.slice(at, m.start), mark: false });
      out.push({ text: text.slice(m.start, m.end), mark: true });
      at = m.end;
    }
    if (at < text.length) out.push({ text: text.slice(at), mark: false });
    return out;
  }

  const api = { tokenize, parseQuery, buildIndex, search, snippet, highlight, MAX_RESULTS };
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.HookvizSearch = api;
})(typeof globalThis === "object" ? globalThis : this);
