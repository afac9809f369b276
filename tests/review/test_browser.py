"""End to end in a real Chromium (Debian's package, driven by Playwright): sign in, play, accept, stale, no token."""

from __future__ import annotations

import json

import pytest

from wac.review.catalog import read_build
from wac.review.store import Store

from .browser import chromium_path, launch, sign_in
from .conftest import add_reviewer, rebuild

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="needs Debian's chromium (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


@pytest.fixture(scope="module")
def tokens(project, server):
    db = project / "review.sqlite"
    return {"alice": add_reviewer(db, "alice"), "bob": add_reviewer(db, "bob")}


def _frame(page) -> bytes:
    return page.locator("#frame").screenshot()


def _press(page, key: str, step: int) -> None:
    page.keyboard.press(key)
    page.wait_for_selector(f'#frame[data-step="{step}"]', timeout=30_000)


def _verdict(page, verdict: str, comment: str = "") -> None:
    page.check(f"input[name=verdict][value={verdict}]")
    page.fill("#comment", comment)
    page.click("#submit-verdict")
    page.wait_for_selector("#verdict-msg.ok", timeout=30_000)


def test_two_reviewers_play_and_accept(browser, server, project, tokens):
    task = read_build(project / "build")[0]
    actx, alice = sign_in(browser, server.url, "alice", tokens["alice"])
    assert alice.locator("#tasks tbody tr").count() == 2
    alice.click(f"a[href='/task/{task.id}']")
    alice.wait_for_selector('#frame[data-seq="1"]', timeout=60_000)
    assert alice.get_attribute("#frame", "data-variant") == "perturbed"
    shots = [_frame(alice)]
    _press(alice, "d", 1)  # turn right 15 deg
    shots.append(_frame(alice))
    _press(alice, "w", 2)  # move forward 0.5 m
    shots.append(_frame(alice))
    assert shots[0] != shots[1] != shots[2]
    budget = alice.inner_text("#budget")
    assert budget.startswith("2 of ") and "left" in budget
    assert "move forward 0.50 m" in alice.inner_text("#outcome")
    alice.keyboard.press("c")  # the clean world, the same two actions replayed
    alice.wait_for_selector('#frame[data-variant="clean"][data-step="2"]', timeout=60_000)
    alice.keyboard.press("b")  # flag the frame for the verdict
    alice.wait_for_selector("#flagged figure")
    # the withheld rubric is on the page and marked as such
    assert "WITHHELD" in alice.inner_text("#rubric")
    _verdict(alice, "accept", "floating mailbox is clear from the start")
    assert alice.inner_text("#task-status") == "pending"
    assert alice.locator("#current-verdicts li.accept img.thumb").count() == 1

    bctx, bob = sign_in(browser, server.url, "bob", tokens["bob"])
    bob.goto(f"{server.url}/task/{task.id}")
    bob.wait_for_selector('#frame[data-seq="1"]', timeout=60_000)
    _verdict(bob, "accept")
    assert bob.inner_text("#task-status") == "accepted"
    bob.goto(server.url + "/")
    row = bob.locator(f"#tasks tr[data-task='{task.id}']")
    assert row.get_attribute("data-status") == "accepted"
    assert "alice, bob" in row.inner_text()
    assert "1 accepted" in bob.inner_text("#progress")
    bob.select_option("select[name=status]", "accepted")
    bob.wait_for_url("**status=accepted**")
    assert bob.locator("#tasks tbody tr").count() == 1
    verdicts = Store(project / "review.sqlite").verdicts(task.id)
    assert {v.reviewer for v in verdicts} == {"alice", "bob"}
    assert [v.verdict for v in verdicts] == ["accept", "accept"]
    flagged = next(v for v in verdicts if v.reviewer == "alice").flagged
    assert flagged[0]["meta"]["variant"] == "clean" and flagged[0]["meta"]["step"] == 2
    actx.close()
    bctx.close()


def test_the_rubric_is_rendered_as_html_for_the_reviewer(browser, server, project, tokens):
    """rubric.md reads as a page, not as Markdown source: a heading and bold field labels, no `**`
    or `#` left in the text, the withheld badge beside it."""
    task = read_build(project / "build")[0]
    entry = json.loads((task.bundle / "rubric.json").read_text())["entries"][0]
    ctx, page = sign_in(browser, server.url, "alice", tokens["alice"])
    page.goto(f"{server.url}/task/{task.id}")
    body = page.locator("#rubric #rubric-body")
    assert body.locator("h3").inner_text() == f"Evaluation rubric: {task.id}"
    labels = body.locator("p > strong").all_inner_texts()
    assert labels[:5] == [
        "Category.",
        "Target.",
        "Expected behaviour.",
        "Inspection condition.",
        "Object names.",
    ]
    assert "Dynamic." in labels
    text = page.inner_text("#rubric")
    assert "WITHHELD" in text and entry["target"] in text
    assert "**" not in text and not [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]
    assert body.locator("pre, script, img, a").count() == 0
    ctx.close()


def test_a_rebuilt_task_shows_stale_verdicts(browser, server, project, tokens):
    task = read_build(project / "build")[1]
    ctx, alice = sign_in(browser, server.url, "alice", tokens["alice"])
    alice.goto(f"{server.url}/task/{task.id}")
    alice.wait_for_selector('#frame[data-seq="1"]', timeout=60_000)
    # a world the server closed (idle, or too many open) is replaced at the next key press
    old = alice.evaluate("play.id")
    alice.evaluate("fetch(`/api/play/${play.id}/close`, {method: 'POST', headers: WRITE, body: '{}'})")
    alice.keyboard.press("d")
    alice.wait_for_function("old => play.id !== null && play.id !== old", arg=old, timeout=60_000)
    assert alice.get_attribute("#frame", "data-step") == "0"
    _press(alice, "d", 1)
    _verdict(alice, "accept")
    src = project / "tasks_src" / "city" / "oversized_mailbox.wa"
    text = src.read_text()
    src.write_text(text.replace("by 1.9", "by 2.2"))  # the reviewers asked for a larger mailbox
    try:
        rebuild(project)
        new = next(t for t in read_build(project / "build") if t.id == task.id)
        assert new.version_id != task.version_id
        # a verdict from the page loaded before the rebuild is refused, not filed on the new version
        alice.check("input[name=verdict][value=accept]")
        alice.click("#submit-verdict")
        alice.wait_for_selector("#verdict-msg.error")
        assert "rebuilt" in alice.inner_text("#verdict-msg")
        alice.reload()
        alice.wait_for_selector("#stale-verdicts li.accept", timeout=30_000)
        stale = alice.inner_text("#stale-verdicts")
        assert "alice" in stale and task.version_id in stale and "stale" in stale
        assert alice.inner_text("#version-id") == new.version_id
        assert alice.inner_text("#task-status") == "pending"
        assert "none yet" in alice.inner_text("#current-verdicts")
        alice.goto(server.url + "/")
        assert "1 stale" in alice.inner_text(f"#tasks tr[data-task='{task.id}']")
    finally:
        src.write_text(text)
        rebuild(project)
        ctx.close()


def test_a_client_without_a_token_cannot_write(browser, server, project, tokens):
    task = read_build(project / "build")[0]
    before = len(Store(project / "review.sqlite").verdicts())
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(f"{server.url}/task/{task.id}")
    assert page.url == server.url + "/signin"  # nothing to see without signing in
    page.fill("#name", "mallory")
    page.fill("#token", "guessed-token")
    page.click("#signin button[type=submit]")
    assert "do not match" in page.inner_text(".error")
    statuses = page.evaluate(
        """async ([task, version]) => {
            const post = (url, body) => fetch(url, {method: "POST", headers: {"Content-Type": "application/json",
                "X-Wac-Review": "1"}, body: JSON.stringify(body)}).then(r => r.status);
            return [await post(`/api/task/${task}/verdict`, {version_id: version, verdict: "accept"}),
                    await post("/api/play", {task_id: task}),
                    await fetch("/api/tasks").then(r => r.status)];
        }""",
        [task.id, task.version_id],
    )
    assert statuses == [401, 401, 401]
    # a forged cookie is no better
    ctx.add_cookies([{"name": "wac_review_token", "value": "forged", "url": server.url}])
    resp = page.request.post(
        f"{server.url}/api/task/{task.id}/verdict",
        data=json.dumps({"version_id": task.version_id, "verdict": "accept"}),
        headers={"Content-Type": "application/json", "X-Wac-Review": "1"},
    )
    assert resp.status == 401
    assert len(Store(project / "review.sqlite").verdicts()) == before
    ctx.close()
