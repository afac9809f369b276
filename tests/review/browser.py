"""Debian's chromium driven by Playwright, for the review app's browser tests and its benchmark.

Never downloads a browser: it launches the system's `chromium` by its path, headless, with
networking extras off; each Playwright context is a fresh profile (own cookies and storage).
"""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    for name in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if name and Path(name).is_file():
            return name
    return None


def launch(playwright):
    """A headless chromium browser (fresh temporary profile) from the system package."""
    path = chromium_path()
    if path is None:
        raise RuntimeError("no chromium: apt-get install chromium")
    return playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)


def sign_in(browser, url: str, name: str, token: str, viewport=(1400, 1000)):
    """A new context (own cookies) signed in as `name`; returns (context, page)."""
    ctx = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = ctx.new_page()
    page.goto(url + "/signin")
    page.fill("#name", name)
    page.fill("#token", token)
    page.click("#signin button[type=submit]")
    page.wait_for_url(url + "/")
    return ctx, page
