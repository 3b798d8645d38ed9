"""The words `hookviz.plots` draws (titles, axis labels, legends), one table per language.

Both tables have the same keys and the same ``{placeholders}``; the Korean uses the words of
the course's glossary (translations/ko/glossary.toml: 변화도, 순전파 훅, 역전파 훅, ...).
What a label says is chosen when the plot is drawn, in `hookviz.language.current_language()`.
"""

from __future__ import annotations

from .language import current_language

ENGLISH = {
    "apply_title": "{model}.apply({fn})\n"
    "blue: apply's visit number (post-order) · green: modules() order (pre-order)",
    "no_op": "no-op",
    "hidden_modules": "(+{count} modules)",
    "monitor_mean": "output mean ± std (latest)",
    "monitor_norm": "norm of the gradient w.r.t. the output (latest, log scale)",
    "monitor_title": "{title} · {steps} steps",
    # a flagged gradient norm, as the HookMonitor widget shows it (messages/en.json monitor.flag_*)
    "flag_vanishing": "▼ vanishing",
    "flag_exploding": "▲ exploding",
    "flag_nan/inf": "⚠ NaN/Inf",
    "heatmap_value_output": "output value",
    "heatmap_value_gradient": "gradient value",
    "heatmap_step": "step",
    "heatmap_colour": "log(1 + values per step in the bin)",
    "heatmap_title_output": "Histogram of each module's outputs over steps {first}–{last}",
    "heatmap_title_gradient": (
        "Histogram of each module's gradients w.r.t. the outputs over steps {first}–{last}"
    ),
    "heatmap_estimated": "(≈ each event's range from its sample: exact=False)",
    "timeline_forward": "forward",
    "timeline_backward": "backward",
    "timeline_replaced": "replaced {what}",
    "timeline_axis": (
        "order of events (circles: forward hooks, squares: backward hooks, diamonds: torch)"
    ),
    "timeline_title": "{model}: {events} events, {users} from the model's own hooks",
}

KOREAN = {
    "apply_title": "{model}.apply({fn})\n"
    "파란색: apply의 방문 순서(후위 순회) · 초록색: modules()의 순서(전위 순회)",
    "no_op": "빈 함수",
    "hidden_modules": "(+모듈 {count}개)",
    "monitor_mean": "출력의 평균 ± 표준편차 (최근)",
    "monitor_norm": "출력에 대한 변화도의 노름 (최근, 로그 눈금)",
    "monitor_title": "{title} · {steps}단계",
    "flag_vanishing": "▼ 소실",
    "flag_exploding": "▲ 폭발",
    "flag_nan/inf": "⚠ NaN/Inf",
    "heatmap_value_output": "출력값",
    "heatmap_value_gradient": "변화도 값",
    "heatmap_step": "단계",
    "heatmap_colour": "log(1 + 단계마다 구간에 든 값의 수)",
    "heatmap_title_output": "단계 {first}–{last} 동안 각 모듈 출력의 히스토그램",
    "heatmap_title_gradient": "단계 {first}–{last} 동안 각 모듈 출력에 대한 변화도의 히스토그램",
    "heatmap_estimated": "(≈ 각 이벤트의 범위는 그 표본의 범위: exact=False)",
    "timeline_forward": "순전파",
    "timeline_backward": "역전파",
    "timeline_replaced": "바꾼 값: {what}",
    "timeline_axis": "이벤트 순서 (원: 순전파 훅, 사각형: 역전파 훅, 마름모: torch)",
    "timeline_title": "{model}: 이벤트 {events}개, 그중 {users}개는 모델 자신의 훅",
}

LABELS = {"en": ENGLISH, "ko": KOREAN}
LABEL_KEYS = frozenset(ENGLISH)


def label(key: str, **values: object) -> str:
    """The label ``key`` in the course's language, its placeholders filled from ``values``."""
    return LABELS[current_language()][key].format(**values)
