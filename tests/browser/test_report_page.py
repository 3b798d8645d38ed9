"""`hookviz report`'s page in Chromium: every figure shows, nothing is blocked or fetched, nothing runs."""

from __future__ import annotations

from pathlib import Path

from hookviz.grading.report.write import write_report


def test_the_report_page_shows_every_figure_and_fetches_nothing(
    chromium, graded_batch, tmp_path: Path
) -> None:
    report = write_report(graded_batch.out, destination=tmp_path / "report.html", similarity="off")
    page = chromium.new_page(viewport={"width": 1000, "height": 900})
    messages, requests = [], []
    page.on("console", lambda message: messages.append(message.text))  # a CSP violation logs here
    page.on("pageerror", lambda error: messages.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    try:
        page.goto(report.html.as_uri())
        images = page.eval_on_selector_all(
            "img", "images => images.map(i => [i.complete, i.naturalWidth, i.naturalHeight, i.alt])"
        )
        headings = page.eval_on_selector_all("h2", "hs => hs.map(h => h.textContent)")
    finally:
        page.close()
    assert len(images) == len(report.figures) == 5
    assert all(
        complete and width >= 500 and height >= 200 and alt
        for complete, width, height, alt in images
    )
    assert messages == []
    assert all(url == report.html.as_uri() or url.startswith("data:") for url in requests)
    assert headings == [
        "Scores",
        "Checks",
        "Most common failure messages",
        "Time per submission",
        "Flags",
        "Near-identical answers",
    ]
