"""Open a job's report in a real headless browser and check it against the job's own records.

Debian's chromium, driven by Selenium through Debian's chromedriver (no browser is
downloaded: `.ci/run` installs both). `check_job_report` reads the page through
the DOM: a lane per replica and attempt of the timeline, a mark per --kill, the
goodput figure equal to the timeline's. Then a picture of the timeline, checked
against its layout (not a golden image): each lane's training bar is green where
the DOM places it, and each kill's cross is red.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vtrain.timeline.reader import read_job

TRAINING = (0x2E, 0x9D, 0x5B)
KILL = (0xCF, 0x22, 0x2E)


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """A headless chromium under Selenium, closed at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "Debian's chromium and chromium-driver: apt-get install them"
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager: never a download
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,1600"):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def written_report(folder: Path) -> Path:
    """`vtrain report FOLDER`, as a user types it: the page it wrote."""
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "report", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(done.stdout.strip())


def check_job_report(path: Path, job_folder: Path) -> None:
    """Check the report at `path` against the timeline in `job_folder`."""
    from selenium.webdriver.common.by import By

    job = read_job(str(job_folder))
    kills = [r for r in job.launcher if r["e"] == "kill"]
    found = job.goodput
    assert found is not None and kills, "a report of a job that trained, and was killed"
    with browser() as page:
        page.get(path.resolve().as_uri())
        lanes = page.find_elements(By.CSS_SELECTOR, "svg#timeline g.lane")
        shown = [
            (e.get_attribute("data-replica"), int(e.get_attribute("data-attempt"))) for e in lanes
        ]
        assert shown == list(job.lanes), (shown, list(job.lanes))
        marks = page.find_elements(By.CSS_SELECTOR, "svg#timeline g.mark.kill")
        assert [m.get_attribute("data-replica") for m in marks] == [k["replica"] for k in kills]
        figure = page.find_element(By.ID, "goodput")
        assert float(figure.get_attribute("data-goodput")) == round(found.job.goodput, 6)
        assert figure.text == f"{found.job.goodput:.0%}"
        assert page.find_elements(By.CSS_SELECTOR, "svg.metric g.series"), "a metric's line"
        _check_picture(page)


def check_study_report(path: Path, study_folder: Path) -> None:
    """Check a study's report at `path` against its study.json: a point per finished trial
    and parameter, a bar per trial over time."""
    import json

    from selenium.webdriver.common.by import By

    trials = json.loads((study_folder / "study.json").read_text())["trials"]
    finished = [t for t in trials if t.get("final_metric") is not None]
    names = sorted({p for t in trials for p in t["parameters"]})
    with browser() as page:
        page.get(path.resolve().as_uri())
        shown = page.find_elements(By.CSS_SELECTOR, "svg.scatter")
        assert sorted(e.get_attribute("data-parameter") for e in shown) == names
        points = page.find_elements(By.CSS_SELECTOR, "svg.scatter circle.trial-point")
        assert len(points) == len(finished) * len(names)
        bars = page.find_elements(By.CSS_SELECTOR, "svg#trials-over-time rect.trial-bar")
        assert sorted(b.get_attribute("data-trial") for b in bars) == sorted(
            t["trial_id"] for t in trials
        )


def _check_picture(page: Any) -> None:
    """The timeline's picture: green where the DOM puts a training bar, red at each kill."""
    from selenium.webdriver.common.by import By

    timeline = page.find_element(By.ID, "timeline")
    page.execute_script("arguments[0].scrollIntoView()", timeline)
    width, height, pixels = decode_png(timeline.screenshot_as_png)
    box = timeline.rect
    scale = width / box["width"]  # device pixels per CSS pixel

    def colours(element: Any, across: int) -> list[tuple[int, int, int]]:
        """The colours at `across` points along the middle of `element`, as drawn."""
        b = page.execute_script(
            "const b = arguments[0].getBoundingClientRect(), s = arguments[1]"
            ".getBoundingClientRect(); return [b.x - s.x, b.y - s.y, b.width, b.height]",
            element,
            timeline,
        )
        y = min(height - 1, int((b[1] + b[3] / 2) * scale))
        xs = [b[0] + b[2] * (i + 1) / (across + 1) for i in range(across)]
        return [pixels[y][min(width - 1, int(x * scale))] for x in xs]

    bars = timeline.find_elements(By.CSS_SELECTOR, "rect.phase.training")
    assert bars, "a training bar"
    for bar in bars:  # a resume's mark may sit on it: most of it is green
        if float(bar.get_attribute("width")) < 12:
            continue  # a few pixels: its edges' blending is all there is
        seen = colours(bar, 9)
        assert sum(_near(c, TRAINING) for c in seen) >= 5, seen
    for mark in timeline.find_elements(By.CSS_SELECTOR, "g.mark.kill path"):
        assert any(_near(c, KILL, 60) for c in colours(mark, 3)), colours(mark, 3)


def _near(found: tuple[int, int, int], expected: tuple[int, int, int], within: int = 24) -> bool:
    return all(abs(a - b) <= within for a, b in zip(found, expected, strict=True))


def decode_png(data: bytes) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and RGB rows of an 8-bit RGB or RGBA PNG (what a browser's screenshot is)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6) and body[12] == 0, "8-bit RGB(A), not interlaced"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    rows: list[list[tuple[int, int, int]]] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[i : i + 3]) for i in range(0, stride, channels)])  # type: ignore[misc]
        previous = line
    return width, height, rows
