// Prediction: the reader commits to an answer first. The page sends the choice (or the words)
// to Python, which checks it and only then sends the verdict, the answer and the why: before
// that, nothing of the answer is in the page.
import { button, followTheme, h, takeKeys, widgetRoot, words } from "./common.js";

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// Text with `code spans` in backticks: <code> for those, text nodes for the rest (never HTML).
function inline(text) {
  const parts = text.split("`");
  if (parts.length % 2 === 0)
    parts.splice(-2, 2, `${parts[parts.length - 2]}\`${parts[parts.length - 1]}`);
  return parts.map((part, i) =>
    i % 2 ? h("code", { text: part }) : document.createTextNode(part),
  );
}

// Paragraphs split at blank lines; inside one, any run of white space is one space.
function paragraphs(text) {
  return text
    .trim()
    .split(/\n[ \t]*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => h("p", {}, inline(p.split(/\s+/).join(" "))));
}

// What a screen reader says for a text: the code spans without their backticks.
const spoken = (text) => text.replaceAll("`", "");

// The keys a list of buttons answers to: arrows move, Home/End jump, Enter/space presses.
const MOVES = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };

function questionView(model) {
  const node = h("div", { class: "hv-question" });
  const draw = () => node.replaceChildren(...paragraphs(model.get("question")));
  draw();
  return { node, draw };
}

// Multiple choice: one real button per choice; all reachable by Tab, arrows move between them.
function choicesView(t, model, commit) {
  const items = model.get("choices").map((choice, i) => {
    const mark = h("span", { class: "hv-mark" });
    const node = h(
      "button",
      {
        type: "button",
        class: "hv-choice",
        "data-index": i,
        "aria-label": `${LETTERS[i]}: ${spoken(choice)}`,
      },
      h("span", { class: "hv-letter", "aria-hidden": "true", text: LETTERS[i] }),
      h("span", { class: "hv-choice-text" }, inline(choice)),
      mark,
    );
    node.addEventListener("click", () => commit({ action: "choose", choice: i }));
    return { node, mark, choice };
  });
  const node = h(
    "div",
    { class: "hv-choices", role: "group", "aria-label": t("prediction.choices") },
    items.map((it) => it.node),
  );
  const key = (event) => {
    // true when the key was one of ours
    const at = items.findIndex((it) => it.node === event.target);
    if (at < 0) return false;
    let to = null;
    if (event.key in MOVES) to = (at + MOVES[event.key] + items.length) % items.length;
    else if (event.key === "Home") to = 0;
    else if (event.key === "End") to = items.length - 1;
    else if (event.key !== "Enter" && event.key !== " ") return false;
    if (to === null) commit({ action: "choose", choice: at });
    else items[to].node.focus();
    return true;
  };
  const draw = (phase) => {
    const answered = phase === "answered";
    const chosen = model.get("chosen");
    const right = model.get("answer_index");
    items.forEach((it, i) => {
      const isChosen = answered && i === chosen;
      const isRight = answered && i === right;
      it.node.classList.toggle("hv-chosen", isChosen);
      it.node.classList.toggle("hv-right", isRight);
      it.node.classList.toggle("hv-wrong", isChosen && !isRight);
      const which = isChosen
        ? isRight
          ? "chosen_right"
          : "chosen_wrong"
        : isRight
          ? "answer"
          : "";
      const says = which ? t(`prediction.says_${which}`) : "";
      it.mark.textContent = which ? t(`prediction.mark_${which}`) : "";
      it.node.setAttribute(
        "aria-label",
        `${LETTERS[i]}: ${spoken(it.choice)}${says ? ` (${says})` : ""}`,
      );
      if (phase === "open") it.node.removeAttribute("aria-disabled");
      else it.node.setAttribute("aria-disabled", "true"); // still focusable: the keys keep their place
    });
  };
  return { node, draw, key, first: () => items[0].node };
}

// Short answer: an input and a Check button; Enter checks.
function shortAnswerView(t, model, commit, note) {
  const input = h("input", {
    type: "text",
    class: "hv-answer-input",
    "aria-label": t("prediction.input"),
    placeholder: t("prediction.input"),
    autocomplete: "off",
    spellcheck: "false",
  });
  const submit = () => {
    if (input.readOnly) return;
    const text = input.value.trim();
    if (!text) {
      note(t("prediction.write_first"));
      input.focus();
      return;
    }
    commit({ action: "answer", text });
  };
  const check = button(t("prediction.check"), submit, {
    cls: "hv-with-text hv-check",
    title: t("prediction.check_title"),
  });
  const mark = h("span", { class: "hv-mark" });
  const key = (event) => {
    // Enter in the input checks
    if (event.target !== input || event.key !== "Enter") return false;
    submit();
    return true;
  };
  const node = h("div", { class: "hv-short" }, input, check, mark);
  const draw = (phase) => {
    const answered = phase === "answered";
    input.readOnly = phase !== "open";
    if (phase === "open") check.removeAttribute("aria-disabled");
    else check.setAttribute("aria-disabled", "true");
    if (answered) input.value = model.get("given");
    const correct = model.get("correct");
    node.classList.toggle("hv-right", answered && correct === true);
    node.classList.toggle("hv-wrong", answered && correct === false);
    mark.textContent = answered
      ? t(correct ? "prediction.mark_right" : "prediction.mark_wrong")
      : "";
  };
  return { node, draw, key, first: () => input };
}

// The verdict (announced), the right answer, then the why. Empty until Python sends them.
function resultView(t, model) {
  const verdict = h("div", { class: "hv-verdict", role: "status", "aria-live": "polite" });
  const answer = h("div", { class: "hv-answer" });
  const why = h("div", { class: "hv-why" });
  const node = h("div", { class: "hv-result" }, verdict, answer, why);
  const draw = (phase) => {
    const answered = phase === "answered";
    node.classList.toggle("hv-shown", answered);
    if (!answered) {
      verdict.textContent = "";
      answer.replaceChildren();
      why.replaceChildren();
      return;
    }
    const correct = model.get("correct") === true;
    const choices = model.get("choices");
    const right = model.get("answer_index");
    const label = choices.length
      ? `${LETTERS[right]}: ${choices[right]}`
      : model.get("answer_text");
    const yours = choices.length
      ? t("prediction.you_chose", { letter: LETTERS[model.get("chosen")] })
      : t("prediction.you_wrote", { text: model.get("given") });
    verdict.textContent = correct
      ? t("prediction.verdict_right", { answer: spoken(label) })
      : t("prediction.verdict_wrong", { yours, answer: spoken(label) });
    verdict.classList.toggle("hv-right", correct);
    verdict.classList.toggle("hv-wrong", !correct);
    answer.replaceChildren(
      h(
        "span",
        { class: "hv-label", text: `${t("prediction.answer")} ` },
        choices.length ? h("span", { class: "hv-letter", text: LETTERS[right] }) : null,
      ),
      h("span", {}, inline(choices.length ? choices[right] : `\`${model.get("answer_text")}\``)),
    );
    why.replaceChildren(
      h("div", { class: "hv-label", text: t("prediction.why") }),
      ...paragraphs(model.get("why")),
    );
  };
  return { node, draw };
}

function render({ model, el }) {
  const t = words(model);
  const root = widgetRoot("hv-prediction", t("prediction.root"), t);
  const cleanups = [followTheme(root, model)];
  const note = h("div", { class: "hv-muted hv-note" });
  let pending = false;
  const commit = (content) => {
    if (pending || model.get("state") !== "open") return;
    pending = true;
    note.textContent = t("prediction.checking");
    draw();
    model.send(content);
  };
  const question = questionView(model);
  const multiple = model.get("choices").length > 0;
  const ask = multiple
    ? choicesView(t, model, commit)
    : shortAnswerView(t, model, commit, (text) => {
        note.textContent = text;
      });
  const result = resultView(t, model);
  root.append(
    h(
      "div",
      { class: "hv-header" },
      h("span", { class: "hv-title", text: t("prediction.title") }),
      h("span", {
        class: "hv-muted hv-kind",
        text: t(multiple ? "prediction.kind_choice" : "prediction.kind_short"),
      }),
    ),
    question.node,
    ask.node,
    note,
    result.node,
  );
  el.append(root);

  function draw() {
    const state = model.get("state");
    const phase = state === "answered" ? "answered" : pending ? "checking" : "open";
    root.dataset.state = phase;
    root.dataset.correct = state === "answered" ? String(model.get("correct")) : "";
    root.setAttribute("aria-busy", phase === "checking" ? "true" : "false");
    ask.draw(phase);
    result.draw(phase);
  }

  const onState = () => {
    pending = false;
    note.textContent = model.get("status");
    draw();
  };
  const onStatus = () => {
    note.textContent = model.get("status");
    if (model.get("state") === "open") {
      pending = false;
      draw();
    } // Python turned the message down
  };
  model.on("change:state", onState);
  model.on("change:status", onStatus);
  model.on("change:question", question.draw);
  cleanups.push(() => {
    model.off("change:state", onState);
    model.off("change:status", onStatus);
    model.off("change:question", question.draw);
  });
  cleanups.push(
    takeKeys(root, (event) => {
      if (event.shiftKey) return false; // Shift+Enter and Shift+Tab keep their meaning
      if (event.target === root && (event.key === "ArrowDown" || event.key === "ArrowRight")) {
        ask.first().focus(); // from the widget into its choices (or its input)
        return true;
      }
      return ask.key(event);
    }),
  );
  note.textContent = model.get("status");
  draw();
  return () => cleanups.forEach((f) => f());
}

export default { render };
