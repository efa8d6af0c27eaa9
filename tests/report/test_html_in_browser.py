"""The HTML report as a person sees it: rendered by a real headless Chromium (Debian's
``chromium``), checked through the DOM and the computed styles, and screenshotted.

A probe script is added to a copy of the page (the report itself has no scripts): it writes
each element's computed colours into data attributes before Chromium dumps the DOM.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from otel_oracles.cli import main; main()"]
TRACES = REPO / "tests" / "testdata" / "traces" / "pydantic-ai"
CONTRACT = REPO / "examples" / "contracts" / "support-rag.yaml"

PROBE = """<script>
for (const el of document.querySelectorAll('td, span, details')) {
  const s = getComputedStyle(el);
  el.setAttribute('data-bg', s.backgroundColor);
  el.setAttribute('data-fg', s.color);
}
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: apt-get install --no-install-recommends chromium")
    return found


def browser(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp}/ud",
         "--window-size=1400,1000", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


class Cells(HTMLParser):
    """Every element with a class, its attributes, and the text of table cells."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.texts: list[tuple[dict[str, str], str]] = []
        self._open: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        if tag == "td":
            self._open.append(a)
            self.texts.append((a, ""))

    def handle_data(self, data: str) -> None:
        if self._open and self.texts:
            a, text = self.texts[-1]
            self.texts[-1] = (a, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._open:
            self._open.pop()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "report.html"
    files = [TRACES / f"{s}.otlp.json" for s in ("a_happy", "b_tool_retry", "d_forbidden_tool")]
    proc = subprocess.run(
        [*CLI, "grade", *map(str, files), "-c", str(CONTRACT), "--html", str(out), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # d_forbidden_tool fails
    return out


def test_tolerated_is_visibly_distinct_and_the_verdicts_to_read_start_open(
    report: Path, tmp_path: Path
) -> None:
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    proc = browser("--dump-dom", probed.as_uri(), tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Cells()
    dom.feed(proc.stdout)

    def cells(css: str) -> list[tuple[dict[str, str], str]]:
        return [(a, t) for a, t in dom.texts if css in a.get("class", "").split()]

    passed = cells("o-pass")
    tolerated = cells("o-tolerated")
    failed = cells("o-invariant_failure")
    assert passed and tolerated and failed, "the three outcomes are present"
    backgrounds = {o: {a["data-bg"] for a, _ in c} for o, c in
                   (("pass", passed), ("tolerated", tolerated), ("fail", failed))}  # fmt: skip
    assert backgrounds["tolerated"].isdisjoint(backgrounds["pass"])
    assert backgrounds["tolerated"].isdisjoint(backgrounds["fail"])
    assert all("tolerated" in t for _, t in tolerated)
    summary = [t for a, t in cells("verdict-tolerated")]
    assert summary == ["pass, 1 tolerated"], "the retry trace's row says what was tolerated"
    tol_count = cells("tol")
    assert [t.strip() for _, t in tol_count] == ["1"]
    assert tol_count[0][0]["data-bg"] != cells("zero")[0][0]["data-bg"]

    opened = [a.get("id") for tag, a in dom.elements if tag == "details" and "open" in a]
    closed = [a.get("id") for tag, a in dom.elements if tag == "details" and "open" not in a]
    assert len(opened) == 2 and len(closed) == 1, "failing and tolerated verdicts start open"
    assert all(" " not in t and len(t) < 80 for a, t in dom.texts if a.get("class") == "n zero")


def test_screenshot_as_a_person_sees_it(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    proc = browser(f"--screenshot={shot}", report.as_uri(), tmp=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 1000)
    assert len(data) > 20_000, "a rendered page, not a blank one"
