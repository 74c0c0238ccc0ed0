"""Execute the notebooks headless and render them as HTML pages and reveal.js slides, offline.

Part of the instructor build, not of the student package: run it from the course's checkout
as `python -m tools.render` (what `make course` does). Browser assets come from the
npm packages pinned in package.json (installed into node_modules/ by `npm ci`) and are copied
into build/vendor/, so the pages load nothing from the network.
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the course's checkout
TEMPLATES = Path(__file__).resolve().parent / "templates"  # nbconvert templates for the course
# (package folder in node_modules, what to copy, destination under build/vendor)
VENDOR_FILES = [
    ("reveal.js", "dist", "reveal.js/dist"),
    ("reveal.js", "plugin", "reveal.js/plugin"),
    ("requirejs", "require.js", "require.js"),
    ("jquery", "dist/jquery.min.js", "jquery.min.js"),
    ("mathjax", ".", "mathjax"),
    ("@jupyter-widgets/html-manager", "dist", "html-manager"),
]
# Seconds any one cell may run before an execution fails (the slowest cell of a full-size GPU
# run takes well under this); a hung kernel then fails the build instead of blocking it.
CELL_TIMEOUT = 900
# The slides' size in CSS pixels (reveal.js scales them to the screen): a 1280x800 screen.
SLIDE_SIZE = (1280, 800)
# Parts of the MathJax 2 package a browser never loads.
MATHJAX_SKIP = ("unpacked", "test", "docs", "*.md")


@dataclass(frozen=True)
class Rendered:
    """The files made from one notebook."""

    name: str
    executed: Path
    page: Path
    slides: Path
    seconds: float
    recorded: Path | None = None  # the page of the newest recorded GPU run of this notebook


def vendor_assets(build: Path, node_modules: Path | None = None) -> Path:
    """Copy the pinned browser assets from node_modules/ into build/vendor/ and return that folder."""
    node_modules = node_modules or ROOT / "node_modules"
    if not node_modules.is_dir():
        raise FileNotFoundError(
            f"{node_modules} is missing: run `npm ci --ignore-scripts` in {ROOT} "
            "(make course does this) to install the pinned slide assets."
        )
    vendor = build / "vendor"
    for package, part, dest in VENDOR_FILES:
        src = node_modules / package / part
        if not src.exists():
            raise FileNotFoundError(f"{src} is missing: reinstall with `npm ci --ignore-scripts`.")
        target = vendor / dest
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            ignore = shutil.ignore_patterns(*MATHJAX_SKIP) if package == "mathjax" else None
            shutil.copytree(src, target, ignore=ignore)
        else:
            shutil.copy2(src, target)
    return vendor


def exporter_config(vendor_url: str) -> Any:
    """Return nbconvert config that points every script and stylesheet at the local vendor folder."""
    from traitlets.config import Config

    c = Config()
    c.HTMLExporter.require_js_url = f"{vendor_url}/require.js"
    c.HTMLExporter.jquery_url = f"{vendor_url}/jquery.min.js"
    c.HTMLExporter.mathjax_url = f"{vendor_url}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"
    c.HTMLExporter.widget_renderer_url = f"{vendor_url}/html-manager/embed-amd.js"
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.SlidesExporter.reveal_url_prefix = f"{vendor_url}/reveal.js"
    # "white" ships its font (Source Sans Pro) beside it; nbconvert's default, "simple",
    # imports its fonts from Google's servers.
    c.SlidesExporter.reveal_theme = "white"
    c.SlidesExporter.reveal_scroll = True
    # The slide's own size, in CSS pixels: that of a 1280x800 screen, which reveal.js scales
    # to whatever screen shows it. (nbconvert's 960x700 clips an 88-character line of code.)
    c.SlidesExporter.reveal_width = str(SLIDE_SIZE[0])
    c.SlidesExporter.reveal_height = str(SLIDE_SIZE[1])
    c.SlidesExporter.exclude_input_prompt = True
    c.SlidesExporter.exclude_output_prompt = True
    return c


def export(executed: Path, page: Path, slides: Path | None, vendor_url: str,
           banner: str | None = None) -> None:
    """Write the HTML page and (unless `slides` is None) the reveal.js slides of one executed
    notebook; `banner`, Markdown, opens the page (not the slides)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(executed, as_version=4)
    if banner:  # the page's first cell; the slides are written from the notebook as it is
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(banner))
    resources = {"metadata": {"name": executed.stem}}
    body, _ = HTMLExporter(config=exporter_config(vendor_url),
                           template_name="course_lab").from_notebook_node(nb, resources)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(body, encoding="utf-8")
    if slides is not None:
        write_slides(executed, slides, vendor_url)


def write_slides(executed: Path, slides: Path, vendor_url: str,
                 continued: frozenset[str] = frozenset()) -> None:
    """Write the reveal.js slides of one executed notebook. Each cell whose id is in
    `continued` starts a continuation slide (a subslide below the one it was on)."""
    import nbformat
    from nbconvert import SlidesExporter

    nb = nbformat.read(executed, as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):  # plumbing, not a slide
            cell.metadata["slideshow"] = {"slide_type": "skip"}
        elif cell.get("id") in continued:
            cell.metadata["slideshow"] = {"slide_type": "subslide"}
    resources = {"metadata": {"name": executed.stem}}
    body, _ = SlidesExporter(config=exporter_config(vendor_url),
                             template_name="course_reveal").from_notebook_node(nb, resources)
    end = body.rindex("</body>")
    slides.write_text(body[:end] + FIGURES_FIT_JS + body[end:], encoding="utf-8")


def fit_slides(executed: Path, slides: Path, vendor_url: str, chromium: str,
               passes: int = 6) -> list[dict[str, Any]]:
    """Rewrite the slides of `executed` until each fits SLIDE_SIZE or cannot be split: a
    slide taller than the screen goes on, from its first cell that reaches below the screen,
    on a continuation slide, one split per slide and pass (the deck has already shrunk its
    figures, to FIGURE_MIN_SCALE at least). Return the slides that still do not fit: a single
    cell taller than the screen, or a block wider than it."""
    continued: set[str] = set()
    write_slides(executed, slides, vendor_url)
    for _ in range(passes):
        misfits = slide_fit(slides, chromium)
        splits = {next((cell for cell, top, height in s["cells"][1:]
                        if top + height > SLIDE_SIZE[1]), None) for s in misfits
                  if s["height"] > SLIDE_SIZE[1]} - {None}
        if not splits:
            return misfits
        continued |= splits
        write_slides(executed, slides, vendor_url, frozenset(continued))
    return slide_fit(slides, chromium)


def render_recorded(source: Path, build: Path, results: Path | None = None) -> tuple[Path, str] | None:
    """The newest recorded GPU run of `source` (data/results/<device>/), rendered as a page in
    build/html/recorded/<device>/ under a banner that says where and when it ran and how
    many of the notebook's code cells changed since; its path and that label, or None."""
    from course_utils import data_path
    from course_utils.recorded_runs import recorded_notebooks, run_label

    runs = recorded_notebooks(source.name, results or data_path("results"))
    runs = [(p, d) for p, d in runs if p.name == source.name]
    if not runs:
        return None
    recorded, data = runs[0]
    label = run_label(data, recorded, current=source)
    page = build / "html" / "recorded" / recorded.parent.name / f"{source.stem}.html"
    export(recorded, page, None, vendor_url="../../../vendor",
           banner=f"**A recorded run, not this build's:** {html.escape(label)}. "
                  f"[This build's run of the notebook](../../{source.stem}.html).")
    return page, label


def _timed_out_cell(source: Path, message: str) -> tuple[int, str] | None:
    """The index and first line of the code cell in `source` whose preview nbclient's
    timeout `message` shows (a short cell whole, a long one's first and last five lines)."""
    import nbformat

    rule = "-------------------"  # nbclient frames the preview with these lines
    for i, cell in enumerate(nbformat.read(source, as_version=4).cells):
        lines = cell.source.strip().split("\n")
        preview = cell.source if len(lines) < 11 else f"{lines[:5]}\n...\n{lines[-5:]}"
        if cell.cell_type == "code" and f"{rule}\n{preview}\n{rule}" in message:
            return i, lines[0]
    return None


def execute(source: Path, executed: Path, parameters: dict[str, Any], progress: bool = True,
            cell_timeout: int = CELL_TIMEOUT, cwd: Path | None = None) -> None:
    """Run a notebook top to bottom with papermill, writing the executed copy (never the source).

    A cell running longer than `cell_timeout` seconds stops the run with a TimeoutError that
    names the notebook and the cell, so a hung kernel never blocks a build or a test run.
    The executed copy is written once, at the end (or at a cell's error): papermill's
    default, a save after every cell, costs seconds per notebook.
    """
    import papermill
    from nbclient.exceptions import CellTimeoutError

    try:
        papermill.execute_notebook(
            str(source), str(executed), parameters=parameters, kernel_name="python3",
            cwd=str(cwd or source.parent), progress_bar=progress, log_output=False,
            execution_timeout=cell_timeout, request_save_on_cell_execute=False,
            # The kernel's own log: only errors. Its one warning otherwise, on every start,
            # is that it listens on localhost TCP without encryption, as every local
            # Jupyter kernel does.
            extra_arguments=["--IPKernelApp.log_level=ERROR"],
        )
    except CellTimeoutError as err:
        found = _timed_out_cell(source, str(err))
        where = f"cell {found[0]} ({found[1]!r})" if found else "a cell"
        raise TimeoutError(f"{source.name}: {where} ran longer than {cell_timeout} s and was "
                           "stopped") from err



def write_index(build: Path, rendered: list[Rendered], device: str | None) -> Path:
    """Write build/index.html linking every page and slide deck."""
    rows = "\n".join(
        f"<tr><td>{html.escape(r.name)}</td>"
        f"<td><a href=\"{r.page.relative_to(build)}\">page</a></td>"
        f"<td><a href=\"{r.slides.relative_to(build)}\">slides</a></td>"
        f"<td><a href=\"{r.executed.relative_to(build)}\">notebook</a></td>"
        f"<td>{r.seconds:.0f} s</td><td>"
        + (f"<a href=\"{r.recorded.relative_to(build)}\">{html.escape(r.recorded.parent.name)}</a>"
           if r.recorded else "none") + "</td></tr>"
        for r in rendered
    )
    when = time.strftime("%Y-%m-%d %H:%M")
    index = build / "index.html"
    index.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>Deep Learning on GPUs with PyTorch</title>"
        "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto}"
        "td,th{padding:.3em 1em;text-align:left}</style></head><body>"
        "<h1>Deep Learning on GPUs with PyTorch</h1>"
        f"<p>Executed on {html.escape(device or 'the best available device')} on {when}. "
        "In the slides, press <kbd>s</kbd> for the speaker notes; open a deck with "
        "<code>?print-pdf</code> after its address and print to save it as PDF.</p>"
        "<table><tr><th>notebook</th><th>page</th><th>slides</th><th>executed</th><th>run time</th>"
        "<th>recorded GPU run</th></tr>"
        f"{rows}</table></body></html>\n",
        encoding="utf-8",
    )
    return index


def render_course(
    notebooks: list[Path],
    build: Path,
    device: str | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    progress: bool = True,
) -> list[Rendered]:
    """Execute and render `notebooks` into `build`; return what was made for each."""
    from tqdm.auto import tqdm

    if not notebooks:
        raise ValueError("no notebooks to render")
    for folder in ("executed", "html", "slides"):
        (build / folder).mkdir(parents=True, exist_ok=True)
    vendor_assets(build)
    chromium = find_chromium()
    done = []
    bar = tqdm(notebooks, desc="course", unit="notebook", disable=not progress)
    for source in bar:
        bar.set_postfix_str(source.stem)
        start = time.perf_counter()
        parameters = {"DEVICE": device, **(params or {}).get(source.name, {})}
        executed = build / "executed" / source.name
        execute(source, executed, parameters, progress=progress)
        page = build / "html" / f"{source.stem}.html"
        slides = build / "slides" / f"{source.stem}.slides.html"
        recorded = render_recorded(source, build)
        banner = (None if recorded is None else
                  f"**What did this notebook show on a GPU?** [Its recorded run]"
                  f"(recorded/{recorded[0].parent.name}/{recorded[0].name}), "
                  f"{html.escape(recorded[1])}.")
        export(executed, page, slides, vendor_url="../vendor", banner=banner)
        if chromium:  # continuation slides where a slide is taller than the screen
            fit_slides(executed, slides, "../vendor", chromium)
        done.append(Rendered(source.stem, executed, page, slides, time.perf_counter() - start,
                             recorded[0] if recorded else None))
    write_index(build, done, device)
    return done


# The least a deck shrinks a figure to (of its own size) to fit a slide on the screen, and
# the lowest (in pixels) it makes a printed output or a cell's code that scrolls.
FIGURE_MIN_SCALE = 0.5
PRINTED_MIN_HEIGHT = 160
# In every deck, once reveal.js is ready and the figures are loaded: each slide taller than
# the screen shrinks its figures by the share that would make it fit (to FIGURE_MIN_SCALE at
# least), then, where one cell alone is too tall, lets a printed output and then its code
# scroll. reveal.js hides every slide but the current one, and a vertical stack (a slide and
# its subslides) as a whole: each slide and the sections around it are shown to lay it out.
FIGURES_FIT_JS = """
<script>
(function () {
  function shown(s, use) {
    var kept = [];
    for (var e = s; e && e.tagName === "SECTION"; e = e.parentElement) {
      kept.push([e, e.style.display, e.hasAttribute("hidden")]);
      e.removeAttribute("hidden"); e.style.display = "block";
    }
    var result = use(s);
    kept.forEach(function (k) {
      k[0].style.display = k[1]; if (k[2]) k[0].setAttribute("hidden", "");
    });
    return result;
  }
  window.courseSlideShown = shown;
  function fit() {
    var slides = Array.prototype.filter.call(document.querySelectorAll(".reveal .slides section"),
      function (s) { return !s.querySelector("section"); });
    slides.forEach(function (s) {
      shown(s, function (s) {
        var figures = Array.prototype.slice.call(s.querySelectorAll("img"));
        var total = figures.reduce(function (sum, f) { return sum + f.offsetHeight; }, 0);
        var excess = s.scrollHeight - %(height)d;
        if (excess > 0 && total > 0) {
          var scale = Math.max(%(min_scale)s, (total - excess) / total);
          figures.forEach(function (f) {
            f.style.height = Math.floor(f.offsetHeight * scale) + "px"; f.style.width = "auto";
          });
        }
        // Still too tall, with its first cell reaching below the screen (tools/render.py
        // splits a slide at any later cell that does): that cell's tallest printed output
        // (text or a table, not a figure) scrolls within the slide.
        excess = s.scrollHeight - %(height)d;
        var first = s.querySelector('[id^="cell-id="]');
        if (excess <= 0 || !first || first.offsetTop + first.offsetHeight <= %(height)d) return;
        var printed = Array.prototype.filter.call(first.querySelectorAll(".jp-OutputArea-output"),
          function (o) { return !o.querySelector("img"); });
        printed.sort(function (a, b) { return b.offsetHeight - a.offsetHeight; });
        // Then the next tallest, and so on; last, its code: the first lines show, the rest
        // scrolls. (Padding and borders come on top of a max-height: 16 pixels to spare.)
        printed.push(first.querySelector(".jp-InputArea-editor"));
        printed.forEach(function (box) {
          excess = s.scrollHeight - %(height)d;
          if (excess <= 0 || !box || box.offsetHeight <= %(min_box)d) return;
          box.style.maxHeight = Math.max(%(min_box)d, box.offsetHeight - excess - 16) + "px";
          box.style.overflowY = "auto";
          box.style.display = "block";  // a table cell (lab's style) takes no max-height
        });
      });
    });
    document.documentElement.setAttribute("data-figures-fit", "");
  }
  window.addEventListener("load", function () {
    var timer = setInterval(function () {
      if (document.querySelector(".reveal.ready")) { clearInterval(timer); fit(); }
    }, 50);
  });
})();
</script>
""" % {"height": SLIDE_SIZE[1], "min_scale": FIGURE_MIN_SCALE, "min_box": PRINTED_MIN_HEIGHT}

# Measures, once the deck has fitted its figures, every slide at its own size (all its
# fragments shown): its height, its <pre> blocks (code, printed output) wider than the
# slide, and each cell on it: [cell id, top, height] in pixels.
SLIDE_FIT_JS = """
<script>
(function () {
  function measure() {
    var out = [];
    var slides = Array.prototype.filter.call(document.querySelectorAll(".reveal .slides section"),
      function (s) { return !s.querySelector("section"); });
    slides.forEach(function (s, i) {
      window.courseSlideShown(s, function (s) {
        var wide = Array.prototype.filter.call(s.querySelectorAll("pre"), function (p) {
          return p.scrollWidth > p.clientWidth + 1; }).length;
        var heading = s.querySelector("h1, h2, h3, h4");
        var text = (heading ? heading.textContent : s.textContent).replace(/\\s+/g, " ").trim();
        var cells = Array.prototype.map.call(s.querySelectorAll('[id^="cell-id="]'),
          function (c) { return [c.id.slice(8), c.offsetTop, c.offsetHeight]; });
        out.push({slide: i, height: s.scrollHeight, wide_blocks: wide, text: text.slice(0, 70),
                  cells: cells});
      });
    });
    var pre = document.createElement("pre"); pre.id = "slide-fit";
    pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
  }
  var timer = setInterval(function () {
    if (document.documentElement.hasAttribute("data-figures-fit")) {
      clearInterval(timer); measure();
    }
  }, 100);
})();
</script>
"""


def find_chromium() -> str | None:
    """A Chromium or Chrome binary on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def slide_fit(deck: Path, chromium: str) -> list[dict[str, Any]]:
    """The slides of `deck` (a rendered .slides.html) that do not fit SLIDE_SIZE: each slide
    taller than it, or with a code or output block wider than it (clipped), measured in
    headless Chromium; [] when all fit."""
    import re
    import subprocess
    import tempfile

    probe = deck.with_name(deck.name.replace(".slides.html", ".fit.html"))
    text = deck.read_text(encoding="utf-8")
    probe.write_text(text[:text.rindex("</html>")] + SLIDE_FIT_JS + "</html>\n", encoding="utf-8")
    try:
        with tempfile.TemporaryDirectory(prefix="slide_fit_") as profile:
            done = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--allow-file-access-from-files",
                 f"--window-size={SLIDE_SIZE[0]},{SLIDE_SIZE[1]}", f"--user-data-dir={profile}",
                 "--virtual-time-budget=20000", "--dump-dom", probe.resolve().as_uri()],
                capture_output=True, text=True, timeout=180)
    finally:
        probe.unlink()
    found = re.search(r'<pre id="slide-fit">(.*?)</pre>', done.stdout, re.S)
    if found is None:
        raise RuntimeError(f"{deck.name}: the slides could not be measured in Chromium "
                           f"(exit {done.returncode}): {done.stderr[-500:]}")
    slides = json.loads(html.unescape(found.group(1)))
    unlaid = [s["slide"] for s in slides if s["height"] == 0]  # a slide always has a height
    if unlaid:
        raise RuntimeError(f"{deck.name}: slides {unlaid} were not laid out to be measured")
    return [s for s in slides if s["height"] > SLIDE_SIZE[1] or s["wide_blocks"]]


def report_slide_fit(decks: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """Check every deck with slide_fit and print the slides that do not fit (Chromium needed:
    without it, one line says the check was skipped)."""
    chromium = find_chromium()
    if chromium is None:
        print("Slide sizes not checked: no Chromium here (make browser installs it).")
        return {}
    misfits = {deck.name: slide_fit(deck, chromium) for deck in decks}
    for name, slides in misfits.items():
        for s in slides:
            why = (f"{s['height']} px tall" if s["height"] > SLIDE_SIZE[1] else "") + (
                f"{', ' if s['height'] > SLIDE_SIZE[1] else ''}{s['wide_blocks']} block(s) "
                "wider than the slide" if s["wide_blocks"] else "")
            print(f"  {name}, slide {s['slide'] + 1}: {why} ({s['text']!r})")
    bad = sum(len(s) for s in misfits.values())
    print(f"Slides at {SLIDE_SIZE[0]}x{SLIDE_SIZE[1]}: "
          + ("all fit." if not bad else f"{bad} do not fit (reveal.js scrolls them)."))
    return misfits


def main(argv: list[str] | None = None) -> int:
    """Command line: python -m tools.render [--device D] [--params FILE] [--build DIR] [NOTEBOOK ...]."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to render (default: all)")
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="output folder")
    parser.add_argument("--device", default=None, help="force a device, e.g. cpu or cuda:0")
    parser.add_argument("--params", type=Path, default=None,
                        help="JSON file mapping notebook file names to papermill parameters")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for nb in notebooks:
        if not nb.is_file():
            parser.error(f"{nb} is not a notebook file")
    params = json.loads(args.params.read_text()) if args.params else {}
    if not isinstance(params, dict):
        parser.error(f"{args.params} must hold a JSON object: notebook file name -> parameters")
    rendered = render_course(notebooks, args.build.resolve(), args.device or None, params)
    report_slide_fit([r.slides for r in rendered])
    index = args.build.resolve() / "index.html"
    print(f"\nRendered {len(rendered)} notebook(s). Open {index}")
    print(f"  or serve them: python -m http.server -d {args.build} 8000  ->  http://localhost:8000/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
