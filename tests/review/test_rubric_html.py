"""The rubric on the reviewer's task page: rubric.md rendered as HTML, safely (issue 33, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("markdown_it")
from wac.review.rubric import rubric_html  # noqa: E402

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bundles"


def test_html_in_the_source_is_shown_escaped_never_run():
    """Object names are the task author's text: a tag in one is text on the page."""
    html = str(
        rubric_html(
            "# Evaluation rubric: t\n\n**Object names.** <img src=x onerror=alert(1)>, "
            "<script>alert(2)</script>, [link](javascript:alert(3)), ![i](http://e.test/x.png)\n"
        )
    )
    assert "<img" not in html and "<script" not in html and "<a " not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;" in html


def test_headings_sit_under_the_pages_own_heading():
    html = str(rubric_html("# Evaluation rubric: t\n\n## Anomaly 1 (anchor)\n\n**Target.** x\n"))
    assert "<h3>Evaluation rubric: t</h3>" in html and "<h4>Anomaly 1 (anchor)</h4>" in html
    assert "<p><strong>Target.</strong> x</p>" in html


@pytest.mark.parametrize("md", sorted(GOLDEN.glob("*/rubric.md")), ids=lambda p: p.parent.name)
def test_every_golden_rubric_renders_without_markdown_left(md):
    html = str(rubric_html(md.read_text()))
    assert "**" not in html and "\n#" not in html and not html.startswith("#")
    assert html.count("<strong>") >= 6
