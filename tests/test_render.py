"""The instructors' render: offline slides and pages, checked in headless Chromium."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from PIL import Image, ImageChops, ImageStat

from tests.nbtools import REPO, course_notebooks, read
from tools.render import render_course
from tests.browser import chromium, find_chromium, serve
from tests.notebook_params import CI_PARAMS

NOTEBOOK = REPO / "notebooks" / "00_check_your_setup.ipynb"
CHROMIUM = find_chromium()
IN_CI = bool(os.environ.get("CI"))
needs_assets = pytest.mark.skipif(
    not (REPO / "node_modules").is_dir() and not IN_CI,
    reason="slide assets not installed: run `make course` or `npm ci --ignore-scripts` first",
)


class _AssetLinks(HTMLParser):
    """Collects the URLs of scripts, stylesheets and images a page loads."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "img") and a.get("src"):
            self.urls.append(a["src"] or "")
        if tag == "link" and a.get("href"):
            self.urls.append(a["href"] or "")


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("build")
    render_course([NOTEBOOK], folder, device="cpu", params={NOTEBOOK.name: CI_PARAMS.get(NOTEBOOK.name, {})},
                  progress=False)
    return folder


@needs_assets
def test_build_layout(build: Path) -> None:
    stem = NOTEBOOK.stem
    for path in (f"executed/{stem}.ipynb", f"html/{stem}.html", f"slides/{stem}.slides.html", "index.html",
                 "vendor/reveal.js/dist/reveal.js", "vendor/require.js", "vendor/jquery.min.js",
                 "vendor/mathjax/MathJax.js"):
        assert (build / path).is_file(), path
    index = (build / "index.html").read_text()
    assert f"slides/{stem}.slides.html" in index and f"html/{stem}.html" in index


@needs_assets
def test_the_recorded_gpu_run_is_one_click_away(build: Path) -> None:
    from course_utils import data_path
    from course_utils.recorded_runs import recorded_notebooks, run_label

    (newest, data), *_ = recorded_notebooks(NOTEBOOK.name, data_path("results"))
    label = run_label(data, newest, current=NOTEBOOK)  # computed from the two notebooks
    assert label.startswith(f"recorded on {data['device']} ({data['date']}")
    recorded = f"html/recorded/{newest.parent.name}/{NOTEBOOK.stem}.html"
    page = (build / recorded).read_text()
    assert "A recorded run, not this build&#x27;s" in page or "A recorded run, not this build's" in page
    assert html_text(label) in html_text(page)
    assert f'href="../../{NOTEBOOK.stem}.html"' in page  # back to this build's page
    own = (build / "html" / f"{NOTEBOOK.stem}.html").read_text()
    assert f'href="recorded/{newest.parent.name}/{NOTEBOOK.stem}.html"' in own
    assert f'href="{recorded}"' in (build / "index.html").read_text()
    assert "device cuda:0" in html_text(page)  # the GPU's own outputs, not this build's


def html_text(page: str) -> str:
    """A page's words, tags and entities removed, spaces collapsed."""
    import html as _html

    return " ".join(_html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@needs_assets
def test_notes_are_marked_asides_on_the_page(build: Path) -> None:
    notes = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells
             if c.metadata.get("slideshow", {}).get("slide_type") == "notes"]
    page = (build / "html" / f"{NOTEBOOK.stem}.html").read_text()
    asides = re.findall(r'<aside[^>]*class="course-note"[^>]*>.*?</aside>', page, re.S)
    assert notes and len(asides) == len(notes)
    words = re.findall(r"[A-Za-z]+", notes[0].source)[:6]
    assert " ".join(words) in " ".join(re.findall(r"[A-Za-z]+", re.sub(r"<[^>]+>", " ", asides[0])))


_CSS_URL = re.compile(r"""(?:@import\s+(?:url\()?|url\()\s*['"]?([^'")\s;]+)""")
_EXTERNAL = re.compile(r"^(https?:)?//")


def _css_urls(css: Path, seen: set[Path]) -> list[str]:
    """Every URL a stylesheet reaches (@import and url()), following its local imports."""
    if css in seen or not css.is_file():
        return []
    seen.add(css)
    found = []
    for url in _CSS_URL.findall(css.read_text(errors="replace")):
        found.append(url)
        if url.endswith(".css") and not _EXTERNAL.match(url):
            found += _css_urls((css.parent / url).resolve(), seen)
    return found


@needs_assets
@pytest.mark.parametrize("kind", ["html", "slides"])
def test_no_external_assets(build: Path, kind: str) -> None:
    for page in (build / kind).rglob("*.html"):  # the recorded runs' pages too
        text = page.read_text()
        parser = _AssetLinks()
        parser.feed(text)
        assert parser.urls, "no assets found: the parser saw nothing"
        external = [u for u in parser.urls if _EXTERNAL.match(u)]
        assert not external, f"{page.name} loads {external}"
        seen: set[Path] = set()
        for url in parser.urls:
            if not url.startswith("data:"):
                path = (page.parent / url.split("?")[0]).resolve()
                assert path.is_file(), url
                if path.suffix == ".css":  # a theme's fonts, its own imports
                    external += [u for u in _css_urls(path, seen) if _EXTERNAL.match(u)]
        # Stylesheets inside the page (nbconvert inlines some) may import too.
        external += [u for u in _CSS_URL.findall(text) if _EXTERNAL.match(u)]
        assert not external, f"{page.name} reaches {sorted(set(external))} through its stylesheets"


def _blank(image: Image.Image) -> bool:
    """True when a screenshot is (nearly) one flat colour."""
    stat = ImageStat.Stat(image.convert("L"))
    return stat.stddev[0] < 5


@needs_assets
@pytest.mark.skipif(CHROMIUM is None and not IN_CI, reason="no chromium: `apt-get install chromium`")
def test_slides_in_headless_chromium(build: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None, "CI must have chromium (make test installs it)"
    page = f"slides/{NOTEBOOK.stem}.slides.html"
    with serve(build) as (base, log):
        first, later = tmp_path / "first.png", tmp_path / "later.png"
        chromium(CHROMIUM, f"{base}/{page}", tmp_path / "p1", screenshot=first)
        chromium(CHROMIUM, f"{base}/{page}#/3", tmp_path / "p2", screenshot=later)
        dom = chromium(CHROMIUM, f"{base}/{page}#/2/1", tmp_path / "p3")
    failed = [(path, code) for path, code in log if code >= 400 and "favicon" not in path]
    assert not failed, f"failed requests: {failed}"
    requested = {path.split("?")[0] for path, _ in log}
    assert {"/vendor/reveal.js/dist/reveal.js", "/vendor/require.js", "/vendor/mathjax/MathJax.js"} <= requested
    # Reveal.js ran: it marks its container ready and shows exactly one present slide.
    assert re.search(r'class="reveal[^"]*\bready\b', dom), "reveal.js did not initialise"
    assert len(re.findall(r'<section[^>]*class="[^"]*\bpresent\b', dom)) >= 1
    # MathJax typeset the formula on that slide.
    assert "MathJax_CHTML" in dom or "mjx-chtml" in dom, "math was not rendered"
    a, b = Image.open(first), Image.open(later)
    assert a.size == b.size == (1280, 800)  # one screen, not a long scrolling page
    assert not _blank(a) and not _blank(b)
    assert ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox() is not None, \
        "the first and a later slide look the same"


def test_a_build_prints_no_kernel_warnings(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from tools.render import execute

    source = tmp_path / "tiny.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("print(1 + 1)")]
    nbformat.write(nb, source)
    execute(source, tmp_path / "out.ipynb", {}, progress=False)
    assert nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs[0]["text"] == "2\n"
    assert "WARNING" not in capfd.readouterr().err  # e.g. the kernel's TCP notice, per kernel


def test_the_built_deck_fits_a_1280x800_screen(build: Path) -> None:
    from tools.render import SLIDE_SIZE, slide_fit

    assert CHROMIUM is not None, "CI must have chromium (make test installs it)"
    assert SLIDE_SIZE == (1280, 800)
    deck = build / "slides" / f"{NOTEBOOK.stem}.slides.html"
    assert 'width: 1280' in deck.read_text() and 'height: 800' in deck.read_text()
    assert slide_fit(deck, CHROMIUM) == []  # every slide of it, executed, fits


@needs_assets
def test_no_cell_of_any_deck_is_taller_than_the_screen(build: Path, tmp_path: Path) -> None:
    """make course splits a slide that is too tall between its cells (fit_slides), never inside
    one: every markdown and code cell of every notebook must fit the screen alone. Outputs are
    left out (a deck shrinks tall figures and scrolls tall printouts); the executed deck of 00
    is measured whole above, and make course measures every executed deck. All the notebooks'
    cells go into one deck, one cell per slide, measured in one Chromium run."""
    from tools.render import slide_fit, write_slides

    assert CHROMIUM is not None, "CI must have chromium (make test installs it)"
    cells = []
    for path in course_notebooks():
        nb = read(path)
        for cell in nb.cells:
            if cell.metadata.get("slideshow", {}).get("slide_type") in ("skip", "notes"):
                continue  # not on a slide
            if cell.cell_type == "code":
                cell.outputs = []
            cell.metadata["slideshow"] = {"slide_type": "slide"}
            cell["id"] = f"{path.name[:2]}-{cell['id']}"  # ids are unique per notebook only
            cells.append(cell)
    nb.cells = cells
    source = tmp_path / "every_cell.ipynb"
    nbformat.write(nb, source)
    deck = build / "slides" / "every_cell.slides.html"  # beside the build's vendor folder
    try:
        write_slides(source, deck, "../vendor")
        misfits = slide_fit(deck, CHROMIUM)
    finally:
        deck.unlink(missing_ok=True)
    assert len(cells) > 18 * 15  # every notebook's slides went in
    assert [(s["cells"][0][0], s["height"], s["wide_blocks"]) for s in misfits] == []


def test_a_slide_too_tall_or_too_wide_is_found(build: Path, tmp_path: Path) -> None:
    from tools.render import export, slide_fit

    assert CHROMIUM is not None, "CI must have chromium (make test installs it)"
    nb = nbformat.v4.new_notebook()
    fits = nbformat.v4.new_markdown_cell("# A slide that fits\n\nOne line.")
    tall = nbformat.v4.new_markdown_cell("## Too tall\n\n" + "\n\n".join(
        f"Paragraph {k}." for k in range(40)))
    wide = nbformat.v4.new_code_cell("x = " + " + ".join(["1"] * 80))  # 320 characters
    # A stack: a slide and a subslide below it; reveal.js hides the stack as a whole.
    top = nbformat.v4.new_markdown_cell("## A stack\n\nIts top fits.")
    below = nbformat.v4.new_markdown_cell("### Below the top, too tall\n\n" + "\n\n".join(
        f"Line {k}." for k in range(40)))
    cells = ((fits, "slide"), (tall, "slide"), (wide, "slide"), (top, "slide"), (below, "subslide"))
    for cell, kind in cells:
        cell.metadata["slideshow"] = {"slide_type": kind}
    nb.cells = [cell for cell, _ in cells]
    source = tmp_path / "demo.ipynb"
    nbformat.write(nb, source)
    deck = build / "slides" / "demo.slides.html"  # beside the build's vendor folder
    try:
        export(source, tmp_path / "demo.html", deck, vendor_url="../vendor")
        misfits = slide_fit(deck, CHROMIUM)
    finally:
        deck.unlink(missing_ok=True)
    assert [(s["slide"], s["height"] > 800, s["wide_blocks"] > 0) for s in misfits] == [
        (1, True, False), (2, False, True), (4, True, False)]
    assert misfits[0]["text"].startswith("Too tall")  # named by its heading
    assert misfits[2]["text"].startswith("Below the top")  # measured, though hidden


def test_a_crowded_deck_is_fitted_by_splits_smaller_figures_and_scrolled_outputs(
        build: Path, tmp_path: Path) -> None:
    import base64
    import io

    from tools.render import fit_slides, slide_fit, write_slides

    assert CHROMIUM is not None, "CI must have chromium (make test installs it)"

    def code(source: str, kind: str, output: dict) -> nbformat.NotebookNode:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["slideshow"] = {"slide_type": kind}
        cell.outputs = [output]
        return cell

    def printed(lines: int) -> dict:
        return nbformat.v4.new_output("stream", name="stdout",
                                      text="".join(f"line {k}\n" for k in range(lines)))

    png = io.BytesIO()
    Image.new("RGB", (1000, 1300), "steelblue").save(png, format="PNG")  # a tall figure
    figure = nbformat.v4.new_output("display_data", data={
        "image/png": base64.b64encode(png.getvalue()).decode(), "text/plain": "<Figure>"})
    heading = nbformat.v4.new_markdown_cell("## Three printouts")
    heading.metadata["slideshow"] = {"slide_type": "slide"}
    nb = nbformat.v4.new_notebook()
    nb.cells = [heading, *(code(f"print({k})", "fragment", printed(14)) for k in range(3)),
                code("plot()", "slide", figure), code("print(long)", "slide", printed(80))]
    source = tmp_path / "crowded.ipynb"
    nbformat.write(nb, source)
    deck = build / "slides" / "crowded.slides.html"  # beside the build's vendor folder
    try:
        write_slides(source, deck, "../vendor")
        before = slide_fit(deck, CHROMIUM)
        assert fit_slides(source, deck, "../vendor", CHROMIUM) == []
        after = slide_fit(deck, CHROMIUM)
        text = deck.read_text()
    finally:
        deck.unlink(missing_ok=True)
    # Before: the printouts overflow their slide, the figure and the long printout do not
    # (the deck shrank the one and let the other scroll); after, a continuation slide.
    assert [s["text"].rstrip("¶") for s in before] == ["Three printouts"]
    assert after == [] and text.count("<section") > 4
    assert nbformat.read(source, as_version=4).cells[3].metadata["slideshow"] == {
        "slide_type": "fragment"}  # the notebook is left as it was
