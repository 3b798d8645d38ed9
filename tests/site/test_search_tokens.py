"""One tokeniser in two languages: hookviz/site/tokens.py cuts the build's term index, and
static/search-core.js cuts the query and marks the matches in the page. Both get the same texts
(every markdown cell of the walkthrough in English and in Korean, and the odd cases) and must
give the same tokens, term, offsets, position and kind alike."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hookviz.site.search import postings
from hookviz.site.tokens import tokenize

REPO = Path(__file__).resolve().parents[2]
SEARCH_CORE = REPO / "hookviz" / "site" / "static" / "search-core.js"
ODD_CASES = [
    "훅을 등록합니다. 훅은 역전파 중에 실행됩니다.",
    "순전파(forward pass)와 역전파(backward pass)",
    "후위 순회(post-order traversal)로 방문합니다",
    "register_full_backward_hook(fn)__init__ _private trailing_",
    "x1훅ab2 Layer_AB의 fc1 가중치 ㄱㄴ ᄀ 한글abc한글",
    "İstanbul ΣΑΣ straße Ǆemal ½ ² ٣ 漢字 カタカナ",
    "𝑥 + 𝑦 = 😀 훅😀훅 emoji_😀_name 𝟙𝟚",
    "",
    "   \n\t ",
]
JS_TOKENS = """
const { tokenize } = require(process.argv[1]);
const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
const kinds = (t) => ({ term: t.term, start: t.start, end: t.end, pos: t.pos,
                        part: Boolean(t.part), pair: Boolean(t.pair) });
process.stdout.write(JSON.stringify(texts.map((text) => tokenize(text).map(kinds))));
"""


def corpus() -> list[str]:
    """Every markdown cell of the English and the Korean walkthrough, and the odd cases."""
    texts = list(ODD_CASES)
    for folder in ("notebooks", "ko/notebooks"):
        for path in sorted((REPO / folder).glob("*.ipynb")):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return texts


def js_tokens(texts: list[str]) -> list[list[dict]]:
    if shutil.which("node") is None:
        pytest.skip("node runs search-core.js")
    done = subprocess.run(
        ["node", "-e", JS_TOKENS, str(SEARCH_CORE)],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def py_tokens(text: str) -> list[dict]:
    return [vars(t) for t in tokenize(text)]


def test_python_and_javascript_cut_every_text_alike():
    texts = corpus()
    assert sum(any("\uac00" <= ch <= "\ud7a3" for ch in t) for t in texts) > 50, "no Korean"
    for text, expected in zip(texts, js_tokens(texts), strict=True):
        assert py_tokens(text) == expected, text[:80]


def test_hangul_is_cut_into_syllables_and_pairs():
    terms = [t.term for t in tokenize("순전파 훅을")]
    assert terms == ["순", "순전", "전", "전파", "파", "훅", "훅을", "을"]
    assert [t.term for t in tokenize("register_full_hook")] == [
        "register_full_hook",
        "register",
        "full",
        "hook",
    ]


def test_the_term_index_finds_words_inside_korean_words():
    docs = [
        {"title": "순전파", "page": "03", "text": "훅을 등록합니다"},
        {"title": "Backward", "page": "04", "text": "register_full_backward_hook"},
    ]
    terms = postings(docs)
    assert terms["전파"] == [0] and terms["훅"] == [0]  # 순전파 holds 전파; 훅을 holds 훅
    assert terms["backward"] == [1] and terms["register_full_backward_hook"] == [1]
    assert "훅을" in terms and "을" in terms
