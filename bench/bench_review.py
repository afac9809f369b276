"""Review app benchmark: key press -> new frame on the page, in a real Chromium, on the shipped scenes.

    .venv/bin/python bench/bench_review.py [--presses 24] [--width 640 --height 480]
                                           [--screenshot docs/review_task_page.png]

Builds one task per shipped scene into a temporary build, starts `wac review` on it, signs in
with Debian's chromium (Playwright, no browser download) and, per task, presses the page's
movement keys one after another (each waits for its frame).  A key press -> frame time is the
page's own measure (`window.wacLatency`: from the keydown handler to the new JPEG decoded and
shown in the <img>), so it holds the fetch, the simulated step with its render, the JPEG and its
decoding.  The server's share (step, JPEG) comes back with each frame.  The self-check evidence
renderer is kept off while measuring (it would share the CPU); `--screenshot` then takes the
task page of the market task (and `<name>_details.png`, its lower half) for docs/review.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TASKS = (
    "tasks_src/market/floating_sacks.wa",
    "tasks_src/city/floating_mailbox.wa",
    "tasks_src/living/chair_on_desk.wa",
    "tasks_src/factory/frozen_fan.wa",
    "tasks_src/meadow/floating_boulder.wa",
)
KEYS = ["d", "w", "a", "f", "w", "r", "s", "d", "w", "a", "t", "e"] * 2  # turns, moves, looks, wait, interact


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presses", type=int, default=24)
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--screenshot", help="write a screenshot of the first task's page here")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from tests.review.browser import launch, sign_in
    from tests.review.conftest import Server
    from wac.cli import main as wac
    from wac.review.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="wac-bench-review-"))
    build = tmp / "build"
    assert (
        wac(["build", *[str(ROOT / t) for t in TASKS], "-o", str(build), "--root", str(ROOT), "-j", "1"]) == 0
    )
    ids = sorted(p.name for p in build.iterdir() if (p / "task.json").is_file())
    db = tmp / "review.sqlite"
    token = Store(db).add_reviewer("bench")
    os.environ.setdefault("WAC_CACHE_DIR", str(tmp / "examples"))
    server = Server(build, db, tmp, width=args.width, height=args.height)
    rows = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw)
            ctx, page = sign_in(browser, server.url, "bench", token, viewport=(1400, 1100))
            page.route("**/artifacts", lambda route: route.abort())  # no evidence rendering while timing
            for task_id in ids:
                page.goto(f"{server.url}/task/{task_id}")
                t0 = time.perf_counter()
                page.wait_for_selector('#frame[data-seq="1"]', timeout=120_000)
                start_s = time.perf_counter() - t0
                for i in range(args.presses):
                    seq = int(page.get_attribute("#frame", "data-seq"))
                    page.keyboard.press(KEYS[i % len(KEYS)])
                    page.wait_for_selector(f'#frame[data-seq="{seq + 1}"]', timeout=60_000)
                lat = page.evaluate("window.wacLatency")
                srv = page.evaluate("window.wacServer")
                steps = [s["step_ms"] for s in srv if s["step_ms"] is not None]
                rows.append(
                    (
                        task_id,
                        start_s,
                        statistics.median(lat),
                        pct(lat, 0.9),
                        max(lat),
                        statistics.median(steps),
                        statistics.median(s["jpeg_ms"] for s in srv),
                        sum(1 for x in lat if x <= 150) / len(lat),
                        # the app's own share: browser, HTTP, JPEG and decoding (press minus step)
                        statistics.median(x - s["step_ms"] for x, s in zip(lat, srv, strict=True)),
                    )
                )
            if args.screenshot:
                page.unroute("**/artifacts")
                first = next((i for i in ids if i.startswith("market")), ids[0])
                page.goto(f"{server.url}/task/{first}")
                page.wait_for_selector('#frame[data-seq="1"]', timeout=120_000)
                for key in ("d", "w", "w"):
                    seq = int(page.get_attribute("#frame", "data-seq"))
                    page.keyboard.press(key)
                    page.wait_for_selector(f'#frame[data-seq="{seq + 1}"]', timeout=60_000)
                page.wait_for_selector("#evidence-body figure", timeout=600_000)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=args.screenshot, full_page=False)
                # the lower half: withheld rubric, evidence with its clean/perturbed slider
                page.evaluate("document.getElementById('rubric').scrollIntoView()")
                shot = Path(args.screenshot)
                page.screenshot(
                    path=str(shot.with_name(f"{shot.stem}_details{shot.suffix}")), full_page=False
                )
            browser.close()
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
    print(f"key press -> new frame in chromium, {args.width}x{args.height}, {args.presses} presses per task")
    print(
        "| task | page -> first frame | median | p90 | max | server step (median) | JPEG | app share | <= 150 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r[0]} | {r[1]:.2f} s | **{r[2]:.0f} ms** | {r[3]:.0f} ms | {r[4]:.0f} ms | {r[5]:.0f} ms | "
            f"{r[6]:.1f} ms | {r[8]:.0f} ms | {100 * r[7]:.0f}% |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
