"""Raters in the review app (review/rating.py): episodes of mounted runs shown blind (no agent, no
verdict), a video made on first view and played by Chromium, answers saved, exported as a labels
file that `wac report --labels` turns into human-rated exposure and judge-human agreement.

`WAC_RATING_SCREENSHOT=docs/review_rating_page.png` also saves a rating page for docs/human.md."""

from __future__ import annotations

import json
import os

import pytest

from wac.audit.judge import judge_run
from wac.audit.runner import RunConfig, run_eval
from wac.audit.session import SessionOptions
from wac.cli import main as wac

from .browser import chromium_path, launch, sign_in
from .conftest import Server, add_reviewer

SHOT = os.environ.get("WAC_RATING_SCREENSHOT")

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="needs Debian's chromium (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def rated(project, tmp_path_factory):
    """An oracle run over the project's two tasks, judged, and a review server mounting it."""
    run = tmp_path_factory.mktemp("runs") / "model-x-run"
    opts = (
        SessionOptions(example=False, width=320, height=240)
        if SHOT
        else SessionOptions(example=False, width=96, height=72)
    )
    assert all(s["ok"] for s in run_eval(project / "build", run, RunConfig(agent="oracle", options=opts)))
    judge_run(run)
    db = project / "rating.sqlite"
    tokens = {name: add_reviewer(db, name) for name in ("ann", "bob")}
    srv = Server(project / "build", db, project / "rating-cache", extra=("--run", str(run)))
    yield run, db, tokens, srv
    srv.stop()


def test_raters_watch_answer_and_the_report_agrees(rated, tmp_path, capsys):
    run, db, tokens, srv = rated
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        try:
            answers = {"ann": {"exposure": True, "report": True}, "bob": {"exposure": False, "report": True}}
            for name, mine in answers.items():
                ctx, page = sign_in(browser, srv.url, name, tokens[name])
                page.click("#rate-link")
                rows = page.locator("#episodes tbody tr")
                assert rows.count() == 2
                assert "model-x" not in page.content()  # the run (the agent) is not named
                for n in (1, 2):
                    page.goto(f"{srv.url}/rate/{n}")
                    html = page.content()
                    assert "model-x" not in html and "judgment" not in html and "success" not in html
                    assert page.locator("#rubric h3, #rubric p").count() > 0  # raters read the rubric
                    page.wait_for_function(
                        "() => document.getElementById('episode-video').readyState >= 1", timeout=120_000
                    )
                    assert page.evaluate("document.getElementById('episode-video').duration") > 0.5
                    for kind, value in mine.items():
                        page.click(f"fieldset[data-kind={kind}] button[data-value={str(value).lower()}]")
                        page.wait_for_selector(f"fieldset[data-kind={kind}] .saved:text('saved')")
                if SHOT and name == "ann":
                    page.goto(f"{srv.url}/rate/1")
                    page.wait_for_function("() => document.getElementById('episode-video').readyState >= 2")
                    page.screenshot(path=SHOT, full_page=False)
                page.goto(f"{srv.url}/rate")
                assert page.locator("#episodes td.label-report").all_inner_texts() == ["yes", "yes"]
                ctx.close()
        finally:
            browser.close()
    labels = tmp_path / "labels.json"
    assert wac(["review", "labels", "--db", str(db), "-o", str(labels)]) == 0
    data = json.loads(labels.read_text())
    assert len(data["labels"]) == 8 and {lab["rater"] for lab in data["labels"]} == {"ann", "bob"}
    capsys.readouterr()
    assert wac(["report", str(run), "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "human-rated exposure model-x-run: 50.0% of 2" in out  # ann yes, bob no on both
    assert "accuracy 100.0%" in out and "n=2" in out  # the judge credits both, as the raters do


def test_the_rating_api_needs_a_rater_and_a_write_header(rated):
    run, db, tokens, srv = rated
    assert srv.request("GET", "/api/rate/1/frame/a0")[0] == 401
    assert srv.request("POST", "/api/rate/1", {"kind": "report", "value": True})[0] == 401
    bearer = {"Authorization": f"Bearer {tokens['ann']}"}
    status, _, body = srv.request("POST", "/api/rate/1", {"kind": "seen", "value": True}, bearer)
    assert status == 400 and b"exposure" in body
    assert srv.request("POST", "/api/rate/99", {"kind": "report", "value": True}, bearer)[0] == 404
