"""The public API's docstrings: one style (numpy), parsed by griffe without a warning, every
parameter a reader passes described, Markdown code (single backticks) instead of reST, and
every example in them true. "Public" is what the reference documents (hookviz/site/reference.py)."""

from __future__ import annotations

import doctest

import pytest

from hookviz.site import reference

ENTRIES = reference.entries()
ITEMS = {  # griffe path -> griffe object: each entry and each member it documents, once
    item.path: item
    for entry in ENTRIES
    for item in (entry.item, *reference.documented_members(entry.item))
}


def test_the_reference_documents_the_public_api():
    import hookviz

    named = {e.qualified for e in ENTRIES}
    for name in hookviz.__all__:
        if name in ("examples", "plots", "widgets", "course"):  # modules
            continue
        assert f"hookviz.{name}" in named, name
    assert "hookviz.plots.activation_heatmap" in named
    assert "hookviz.course.predictions.predict" in named


@pytest.mark.parametrize("path", sorted(ITEMS))
def test_docstring_parses_without_warnings(path):
    item = ITEMS[path]
    assert item.docstring is not None and item.docstring.value.strip(), f"{path} has no docstring"
    sections, warnings = reference.parse_docstring(item)
    assert not warnings, f"{path}: griffe ({reference.STYLE} style) warns: {warnings}"
    assert sections and sections[0].kind.value == "text", f"{path} starts with no summary"
    text = item.docstring.value
    assert "``" not in text, f"{path}: reST double backticks; write Markdown `code`"
    assert ":class:`" not in text and ":func:`" not in text, f"{path}: a reST role"


def _needs_parameters(item) -> bool:
    if item.kind.value == "class":
        return not reference.is_dataclass(item)
    return item.kind.value == "function"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.qualified for e in ENTRIES])
def test_every_parameter_is_described(entry):
    item = entry.item
    wanted = [p.name for p in reference.parameters_of(item)]
    if not wanted or not _needs_parameters(item):
        return
    sections, _ = reference.parse_docstring(item)
    described = [
        p.name
        for s in sections
        if s.kind.value in ("parameters", "other parameters")
        for p in s.value
    ]
    assert described == wanted, f"{entry.qualified}: described {described}, signature {wanted}"
    blank = [
        p.name
        for s in sections
        if s.kind.value == "parameters"
        for p in s.value
        if not p.description.strip()
    ]
    assert not blank, f"{entry.qualified}: parameters without a description: {blank}"


def test_the_examples_in_docstrings_are_true():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for path, item in sorted(ITEMS.items()):
        test = parser.get_doctest(item.docstring.value, {}, path, str(item.filepath), 0)
        if test.examples:
            runner.run(test)
            ran += len(test.examples)
    result = runner.summarize(verbose=False)
    assert ran >= 10, f"only {ran} examples ran"
    assert result.failed == 0, f"{result.failed} docstring example(s) failed (printed above)"


def test_the_reference_page_has_no_raw_rest():
    page = reference.reference_html()
    assert "``" not in page
    assert "site-doc" not in page and "<pre class='site-doc'" not in page  # no <pre> paragraphs
    assert "<dl class='site-params'>" in page  # parameters as a list
    assert "class='site-input site-example'" in page  # examples as code
    # annotations as code with cross-links, never a quoted string
    assert "'nn.Module'" not in page and "&#x27;nn.Module&#x27;" not in page
    assert "href='#ref-hookviz-ApplyTrace'" in page
