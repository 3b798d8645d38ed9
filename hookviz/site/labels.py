"""The words of the site's own frame (header, navigation, actions, search) in each language.

The pages' articles come from the notebooks of their language; what the site adds around them
comes from here, so a language is one more table, never a copy of a template.
"""

from __future__ import annotations

from ..language import ENGLISH

LANGUAGE_NAMES = {"en": "English", "ko": "한국어"}  # each language's name, in itself

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "skip": "Skip to the content",
        "contents": "Contents",
        "search_label": "Search the course",
        "search_placeholder": "Search the course (/)",
        "search": "Search",
        "nav_course": "Course",
        "start": "Start",
        "home": "Home",
        "walkthrough": "Walkthrough",
        "assignments": "Assignments",
        "reference": "Reference",
        "package_reference": "Package reference",
        "on_this_page": "On this page",
        "previous_next": "Previous and next",
        "previous": "Previous",
        "next": "Next",
        "open_in_colab": "Open in Colab",
        "run_locally": "Run in JupyterLab",
        "run_locally_intro": "On Linux or macOS with Python 3.10+ and <code>make</code>, "
        "in a terminal:",
        "run_locally_then": "sets up .venv, then opens JupyterLab; then open",
        "more_ways": "More ways to run it",
        "more_ways_which": "(Colab, conda, Binder).",
        "download": "Download the notebook",
        "copy": "Copy",
        "copy_label": "Copy this code",
        "copied": "Copied",
        "selected": "Selected: press Ctrl+C",
        "example": "What this check prints for a correct answer:",
        "language": "Language",
        "anchor": "Link to this section:",
        "footer": "a course on PyTorch's <code>nn.Module</code> hooks and <code>Module.apply</code>. "
        "Built from the course's notebooks; every widget plays here without a kernel, from "
        "what it recorded when the notebook ran.",
        "search_title": "Search the course",
        "search_words": "Words to look for",
        "search_empty": "Type a few words, then press Enter.",
        "search_found_one": "{count} section matches “{query}”",
        "search_found": "{count} sections match “{query}”",
        "search_more": "(the first {shown} shown)",
        "search_hint": "Every word must match; put a phrase in quotes.",
        "search_none": "Nothing matches “{query}”: every word must match. Try fewer words.",
        "search_noscript": "Search needs JavaScript; the contents on the left list every page.",
    },
    "ko": {
        "skip": "본문으로 건너뛰기",
        "contents": "목차",
        "search_label": "강좌 검색",
        "search_placeholder": "강좌 검색 (/)",
        "search": "검색",
        "nav_course": "강좌",
        "start": "시작",
        "home": "처음",
        "walkthrough": "해설 노트북",
        "assignments": "과제",
        "reference": "참고 자료 (영어)",
        "package_reference": "패키지 레퍼런스",
        "on_this_page": "이 페이지의 내용",
        "previous_next": "이전과 다음",
        "previous": "이전",
        "next": "다음",
        "open_in_colab": "Colab에서 열기",
        "run_locally": "JupyterLab에서 실행하기",
        "run_locally_intro": "Python 3.10 이상과 <code>make</code>가 있는 Linux나 macOS의 "
        "터미널에서:",
        "run_locally_then": ".venv를 만들고 JupyterLab을 엽니다. 그다음 열 노트북:",
        "more_ways": "다른 실행 방법",
        "more_ways_which": "(Colab, conda, Binder).",
        "download": "노트북 내려받기",
        "copy": "복사",
        "copy_label": "이 코드 복사",
        "copied": "복사했습니다",
        "selected": "선택했습니다: Ctrl+C를 누르세요",
        "example": "답이 맞을 때 이 검사가 출력하는 내용:",
        "language": "언어",
        "anchor": "이 절로 가는 링크:",
        "footer": "PyTorch의 <code>nn.Module</code> 훅과 <code>Module.apply</code> 메소드를 다루는 "
        "강좌입니다. 강좌 노트북으로 만들었으며, 모든 위젯은 노트북을 실행할 때 기록한 상태로 "
        "커널 없이 이 페이지에서 재생됩니다.",
        "search_title": "강좌 검색",
        "search_words": "찾을 낱말",
        "search_empty": "낱말을 몇 개 입력하고 Enter 키를 누르세요.",
        "search_found_one": "“{query}”에 맞는 절이 {count}개 있습니다",
        "search_found": "“{query}”에 맞는 절이 {count}개 있습니다",
        "search_more": "(처음 {shown}개를 보여 줍니다)",
        "search_hint": "모든 낱말이 맞아야 합니다. 구절은 따옴표로 묶으세요.",
        "search_none": "“{query}”에 맞는 절이 없습니다. 모든 낱말이 맞아야 하니 낱말을 줄여 보세요.",
        "search_noscript": "검색에는 JavaScript가 필요합니다. 왼쪽 목차에 모든 페이지가 있습니다.",
    },
}


def labels(lang: str) -> dict[str, str]:
    """The site's words in ``lang`` (English for a language with no table)."""
    return LABELS.get(lang, LABELS[ENGLISH])
