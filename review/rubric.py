"""The withheld rubric as HTML for reviewers' and raters' pages."""

from __future__ import annotations


def rubric_html(text: str):
    """rubric.md as HTML for the reviewer's task page (a `Markup`): CommonMark with raw HTML off, so
    any tag in the source (object names are the task author's text) is shown escaped, never run; no
    links or images (a rubric has none, and the page loads nothing the build does not hold); its
    headings two levels down, under the page's own "Rubric" heading."""
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    md = MarkdownIt("commonmark", {"html": False}).disable(["link", "image", "autolink"])
    tokens = md.parse(text)
    for t in tokens:
        if t.type in ("heading_open", "heading_close"):
            t.tag = f"h{min(6, int(t.tag[1]) + 2)}"
    return Markup(md.renderer.render(tokens, md.options, {}))
