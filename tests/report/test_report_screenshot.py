"""Headless Chromium screenshots of the weekly report's index and scorecard pages are not blank.

The report comes from the session's tiny chain (the ``tiny_chain`` fixture, ``tests/conftest.py``). Chromium is
Debian's package, installed by ``make setup``; outside CI its absence skips, in CI it fails. The browser
runs with every host name mapped to "not found" and background networking off: the pages are
self-contained and the screenshot never leaves the machine. The report's links are checked statically on the same
report (every ``href`` resolves; a prompt on the scorecard opens its run page and transcript), without a second
browser start.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest
from PIL import Image, ImageStat

from tests.helpers.shared import IN_CI

WIDTH, HEIGHT = 1280, 1600
# the report is the tiny chain's, which test_notebooks resumes in place: run beside its other users (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("tiny_chain")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if IN_CI:
        pytest.fail("CI must have Chromium: `make setup` installs Debian's chromium package")
    pytest.skip("chromium is not installed (run `make setup` as root)")


def screenshot(page: Path, out: Path, profile: Path) -> Image.Image:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-default-apps", "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={out}", page.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.is_file(), f"no screenshot of {page.name}: {proc.stderr[-2000:]}"
    return Image.open(out).convert("L")


def assert_not_blank(img: Image.Image, name: str) -> None:
    assert img.size == (WIDTH, HEIGHT), f"{name}: {img.size}"
    stat = ImageStat.Stat(img)
    assert stat.stddev[0] > 12, f"{name}: almost uniform (stddev {stat.stddev[0]:.1f})"
    # Text and tables: a real share of the pixels is clearly darker than the page background.
    histogram = img.histogram()
    dark = sum(histogram[:160]) / (img.size[0] * img.size[1])
    assert dark > 0.005, f"{name}: only {dark:.2%} dark pixels"


@pytest.fixture(scope="module")
def report_dir(request: pytest.FixtureRequest) -> Path:
    chromium()  # before the chain: without a browser there is nothing to run it for
    chain = request.getfixturevalue("tiny_chain")
    assert chain["result"].ok, chain["result"].state["error"]
    return chain["result"].report_dir


@pytest.mark.parametrize("page", ["index.html", "scorecard.html", "05_scorecard.html"])
def test_report_page_screenshot_is_not_blank(report_dir, tmp_path, page):
    img = screenshot(report_dir / page, tmp_path / f"{page}.png", tmp_path / "profile")
    assert_not_blank(img, page)


def test_blank_page_is_detected(tmp_path):
    """The check itself: an empty page fails it."""
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body style='background:#fff'></body></html>")
    img = screenshot(blank, tmp_path / "blank.png", tmp_path / "profile")
    with pytest.raises(AssertionError):
        assert_not_blank(img, "blank.html")


def test_every_link_of_the_report_resolves_and_a_number_clicks_through_to_a_transcript(report_dir):
    """Statically, as a browser would follow them (no second browser start): every ``href`` of every page of the
    week's report, run pages included, names a file of the report (and, into the run pages, an anchor that page
    has); and from
    scorecard.html a prompt of the per-stimulus table leads to its run page, whose transcripts are collapsed
    ``<details>``."""
    from tests.report.test_run_pages import parse

    pages = sorted(report_dir.rglob("*.html"))
    assert (report_dir / "runs" / "index.html") in pages
    ids: dict[Path, set[str]] = {}
    for page in pages:
        m = parse(page)
        ids[page] = {str(a["id"]) for _, a in m.tags if a.get("id")}
    checked = 0
    for page in pages:
        for attrs in parse(page).named("a"):
            href = str(attrs.get("href") or "")
            path, _, anchor = href.partition("#")
            target = (page.parent / unquote(path)).resolve() if path else page.resolve()
            assert target.is_file(), f"{page.relative_to(report_dir)}: {href} names no file"
            runs = (report_dir / "runs").resolve()
            if anchor and (target.is_relative_to(runs) or page.resolve().is_relative_to(runs)):
                # a link into or within the run pages names an anchor that page has (the index's families and
                # prompts, a run's transcript)
                assert unquote(anchor) in ids[report_dir / target.relative_to(report_dir.resolve())], \
                    f"{page.name}: {href}: no such anchor"
            checked += 1
    assert checked > 50
    scorecard = parse(report_dir / "scorecard.html")
    run_links = [str(a["href"]) for a in scorecard.named("a") if str(a.get("href", "")).startswith("runs/")
                 and "#" not in str(a["href"])]
    assert run_links, "scorecard.html links no prompt to its run page"
    run_page = parse(report_dir / unquote(run_links[0]))
    transcripts = [a for a in run_page.named("details") if a.get("class") == "transcript"]
    assert transcripts and all("open" not in a for a in transcripts)
    assert any(a.get("class", "").startswith("step") for a in run_page.named("details"))
