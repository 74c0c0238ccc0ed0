"""tools/render.py's parts that need neither a kernel nor a real browser: the vendor copy,
the index page, the Chromium lookup, the slide measurement read back from a stand-in
browser, the report of slides that do not fit, and the command line's refusals. (The
whole build, with a real Chromium, is tests/test_render.py.)"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import nbformat
import pytest

from tests.nbtools import REPO
from tools import render


def _node_modules(root: Path) -> Path:
    for package, part, _ in render.VENDOR_FILES:
        src = root / package / part
        if part in ("dist", "plugin", "."):
            (src / "sub").mkdir(parents=True, exist_ok=True)
            (src / "sub" / "a.js").write_text(f"// {package}")
        else:
            src.parent.mkdir(parents=True, exist_ok=True)
            src.write_text(f"// {package}")
    (root / "mathjax" / "unpacked").mkdir()
    (root / "mathjax" / "unpacked" / "big.js").write_text("// never loaded")
    (root / "mathjax" / "README.md").write_text("docs")
    return root


def test_vendor_assets_copies_each_pinned_part_once(tmp_path: Path) -> None:
    modules = _node_modules(tmp_path / "node_modules")
    vendor = render.vendor_assets(tmp_path / "build", modules)
    assert vendor == tmp_path / "build" / "vendor"
    for _, _, dest in render.VENDOR_FILES:
        assert (vendor / dest).exists(), dest
    assert (vendor / "require.js").read_text() == "// requirejs"
    assert (vendor / "reveal.js" / "dist" / "sub" / "a.js").read_text() == "// reveal.js"
    assert not (vendor / "mathjax" / "unpacked").exists()  # MathJax's unused parts skipped
    assert not (vendor / "mathjax" / "README.md").exists()
    assert (vendor / "mathjax" / "sub" / "a.js").exists()
    (vendor / "require.js").write_text("kept")  # a second build keeps what is there
    (vendor / "jquery.min.js").unlink()  # and brings back what is missing
    render.vendor_assets(tmp_path / "build", modules)
    assert (vendor / "require.js").read_text() == "kept"
    assert (vendor / "jquery.min.js").read_text() == "// jquery"


def test_vendor_assets_says_what_to_install(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Without node_modules/ in the checkout the error says what to run, and where; a part
    missing from it says to reinstall."""
    monkeypatch.setattr(render, "ROOT", tmp_path / "course")  # its node_modules/ by default
    with pytest.raises(FileNotFoundError) as err:
        render.vendor_assets(tmp_path / "build")
    assert str(err.value) == (
        f"{tmp_path / 'course' / 'node_modules'} is missing: run `npm ci --ignore-scripts` in "
        f"{tmp_path / 'course'} (make course does this) to install the pinned slide assets.")
    _node_modules(tmp_path / "course" / "node_modules")
    assert (render.vendor_assets(tmp_path / "build") / "require.js").read_text() == "// requirejs"
    modules = _node_modules(tmp_path / "node_modules")
    (modules / "jquery" / "dist" / "jquery.min.js").unlink()
    with pytest.raises(FileNotFoundError, match=r"jquery\.min\.js is missing"):
        render.vendor_assets(tmp_path / "build2", modules)


def test_the_index_links_every_page_deck_and_recorded_run(tmp_path: Path) -> None:
    build = tmp_path / "build"
    recorded = build / "html" / "recorded" / "nvidia-h200" / "05_x.html"
    rows = [render.Rendered("05_x", build / "executed" / "05_x.ipynb", build / "html" / "05_x.html",
                            build / "slides" / "05_x.slides.html", 12.4, recorded),
            render.Rendered("06_<y>", build / "executed" / "06.ipynb", build / "html" / "06.html",
                            build / "slides" / "06.slides.html", 3.6)]
    build.mkdir()
    index = render.write_index(build, rows, "cuda:0")
    assert index == build / "index.html"
    text = index.read_text()
    assert text.startswith("<!DOCTYPE html>") and "Executed on cuda:0 on " in text
    assert ('<tr><td>05_x</td><td><a href="html/05_x.html">page</a></td>'
            '<td><a href="slides/05_x.slides.html">slides</a></td>'
            '<td><a href="executed/05_x.ipynb">notebook</a></td><td>12 s</td>'
            '<td><a href="html/recorded/nvidia-h200/05_x.html">nvidia-h200</a></td></tr>') in text
    assert "<td>06_&lt;y&gt;</td>" in text and "<td>4 s</td><td>none</td>" in text
    assert "<p>Executed on the best available device on " in render.write_index(
        build, [], None).read_text()
    assert text.count("</tr>\n<tr>") == 1  # one row per line
    assert re.search(r"Executed on cuda:0 on 20\d\d-[01]\d-[0-3]\d [0-2]\d:[0-5]\d\. ", text)
    assert ('<html lang="en"><head><meta charset="utf-8">'
            "<title>Deep Learning on GPUs with PyTorch</title>"
            "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto}"
            "td,th{padding:.3em 1em;text-align:left}</style></head><body>"
            "<h1>Deep Learning on GPUs with PyTorch</h1><p>Executed on cuda:0 on ") in text
    assert (". In the slides, press <kbd>s</kbd> for the speaker notes; open a deck with "
            "<code>?print-pdf</code> after its address and print to save it as PDF.</p>"
            "<table><tr><th>notebook</th><th>page</th><th>slides</th><th>executed</th>"
            "<th>run time</th><th>recorded GPU run</th></tr><tr><td>05_x</td>") in text


def test_the_command_line_renders_every_course_notebook_into_build_by_default(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    made = [render.Rendered("05_x", Path("e"), Path("p"), Path("d/05_x.slides.html"), 1.0)]
    calls, reported = [], []
    monkeypatch.setattr(render, "render_course", lambda notebooks, build, device, params:
                        calls.append((notebooks, build, device, params)) or made)
    monkeypatch.setattr(render, "report_slide_fit", reported.append)
    assert render.main([]) == 0
    notebooks = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(notebooks) >= 18
    assert calls == [(notebooks, (REPO / "build").resolve(), None, {})]
    assert reported == [[Path("d/05_x.slides.html")]]  # every deck made is checked
    out = capsys.readouterr().out
    assert f"Rendered 1 notebook(s). Open {(REPO / 'build').resolve() / 'index.html'}" in out
    assert f"python -m http.server -d {REPO / 'build'} 8000  ->  http://localhost:8000/" in out
    with pytest.raises(SystemExit):
        render.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for words in (render.__doc__.splitlines()[0], "notebooks to render (default: all)",
                  "output folder", "force a device, e.g. cpu or cuda:0",
                  "JSON file mapping notebook file names to papermill parameters"):
        assert re.search(rf"(?<!\w){re.escape(words)}(?!\w)", help_text), words


def test_find_chromium_takes_the_first_name_found(monkeypatch: pytest.MonkeyPatch) -> None:
    found = {"google-chrome": "/opt/chrome", "chromium-browser": "/usr/bin/chromium-browser"}
    monkeypatch.setattr(render.shutil, "which", found.get)
    assert render.find_chromium() == "/usr/bin/chromium-browser"
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    assert render.find_chromium() is None
    names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
    for k, name in enumerate(names):  # each name is tried, in this order
        monkeypatch.setattr(render.shutil, "which",
                            lambda n, ok=set(names[k:]): f"/bin/{n}" if n in ok else None)
        assert render.find_chromium() == f"/bin/{name}"


def _fake_browser(tmp_path: Path, slides: list[dict] | None) -> str:
    """A 'chromium' that prints the DOM a measured deck would have (or nothing)."""
    dom = "" if slides is None else (
        '<html><pre id="slide-fit">' + json.dumps(slides).replace('"', "&quot;") + "</pre>")
    script = tmp_path / "chromium"
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{dom}\nEOF\necho oops >&2\nexit 3\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_slide_fit_keeps_only_the_slides_that_do_not_fit(tmp_path: Path) -> None:
    deck = tmp_path / "05_x.slides.html"
    deck.write_text("<html><body>slides</body></html>\n")
    slides = [{"slide": 0, "height": 800, "wide_blocks": 0, "text": "fits exactly"},
              {"slide": 1, "height": 801, "wide_blocks": 0, "text": "one pixel too tall"},
              {"slide": 2, "height": 300, "wide_blocks": 2, "text": "clipped code"}]
    assert render.slide_fit(deck, _fake_browser(tmp_path, slides)) == slides[1:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["05_x.slides.html", "chromium"]
    with pytest.raises(RuntimeError, match=r"05_x.slides.html: .* \(exit 3\): oops"):
        render.slide_fit(deck, _fake_browser(tmp_path, None))


def test_slide_fit_runs_chromium_on_a_probe_of_the_deck_then_removes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    deck = tmp_path / "05_x.slides.html"
    deck.write_text("<html><body><p>an inner </html> in the text</p></body></html>\n")
    script = tmp_path / "chromium"  # records its arguments and the page it was given
    script.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$0.args"\n'
                      'cp "${11#file://}" "$0.page"\n'
                      "echo '<pre id=\"slide-fit\">[{&quot;slide&quot;: 0, &quot;height&quot;: "
                      "0}]</pre>'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    runs, real_run = [], subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: runs.append(kw) or real_run(cmd, **kw))
    with pytest.raises(RuntimeError, match=r"05_x.slides.html: slides \[0\] were not laid out"):
        render.slide_fit(deck, str(script))  # a slide of 0 px was never shown to be measured
    args = (tmp_path / "chromium.args").read_text().splitlines()
    probe = tmp_path / "05_x.fit.html"
    assert args[:7] == ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--allow-file-access-from-files",
                        "--window-size=1280,800"]
    assert args[7].startswith("--user-data-dir=")  # a fresh profile, in a temporary folder
    assert Path(args[7].split("=", 1)[1]).name.startswith("slide_fit_")
    assert args[8:] == ["--virtual-time-budget=20000", "--dump-dom", probe.resolve().as_uri()]
    assert (tmp_path / "chromium.page").read_text() == (
        "<html><body><p>an inner </html> in the text</p></body>" + render.SLIDE_FIT_JS
        + "</html>\n")  # the measuring script before the deck's last </html>
    assert not probe.exists()  # the probe is removed
    assert runs == [{"capture_output": True, "text": True, "timeout": 180}]


def test_the_report_names_each_slide_and_why(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(render, "find_chromium", lambda: None)
    assert render.report_slide_fit([Path("a.slides.html")]) == {}
    assert capsys.readouterr().out == (
        "Slide sizes not checked: no Chromium here (make browser installs it).\n")
    misfit = {"a.slides.html": [{"slide": 2, "height": 900, "wide_blocks": 1, "text": "Both"},
                                {"slide": 4, "height": 800, "wide_blocks": 2, "text": "Wide"},
                                {"slide": 6, "height": 820, "wide_blocks": 0, "text": "Tall"}],
              "b.slides.html": []}
    monkeypatch.setattr(render, "find_chromium", lambda: "/bin/chromium")
    monkeypatch.setattr(render, "slide_fit", lambda deck, chromium: misfit[deck.name]
                        if chromium == "/bin/chromium" else None)  # the browser found is used
    decks = [Path("a.slides.html"), Path("b.slides.html")]
    assert render.report_slide_fit(decks) == misfit
    out = capsys.readouterr().out.splitlines()
    assert out == ["  a.slides.html, slide 3: 900 px tall, 1 block(s) wider than the slide "
                   "('Both')",
                   "  a.slides.html, slide 5: 2 block(s) wider than the slide ('Wide')",
                   "  a.slides.html, slide 7: 820 px tall ('Tall')",
                   "Slides at 1280x800: 3 do not fit (reveal.js scrolls them)."]
    monkeypatch.setattr(render, "slide_fit", lambda deck, chromium: [])
    render.report_slide_fit(decks)
    assert capsys.readouterr().out == "Slides at 1280x800: all fit.\n"


def test_the_command_line_refuses_what_it_cannot_render(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls = []
    monkeypatch.setattr(render, "render_course",
                        lambda notebooks, build, device, params: calls.append(
                            (notebooks, build, device, params)) or [])
    monkeypatch.setattr(render, "report_slide_fit", lambda decks: {})
    with pytest.raises(SystemExit):
        render.main([str(tmp_path / "missing.ipynb")])
    assert "is not a notebook file" in capsys.readouterr().err
    source = tmp_path / "05_x.ipynb"
    source.write_text("{}")
    params = tmp_path / "p.json"
    params.write_text("[1, 2]")
    with pytest.raises(SystemExit):
        render.main([str(source), "--params", str(params)])
    assert "must hold a JSON object" in capsys.readouterr().err
    params.write_text(json.dumps({"05_x.ipynb": {"N": 3}}))
    assert render.main([str(source), "--params", str(params), "--device", "cpu",
                        "--build", str(tmp_path / "b")]) == 0
    assert calls == [([source], (tmp_path / "b").resolve(), "cpu", {"05_x.ipynb": {"N": 3}})]
    assert "Rendered 0 notebook(s)." in capsys.readouterr().out
    assert render.exporter_config("../vendor").SlidesExporter.reveal_width == "1280"


def _executed(path: Path, injected: bool = True) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    title = nbformat.v4.new_markdown_cell("# 05 · A question?\n\nSome prose.")
    title.metadata["slideshow"] = {"slide_type": "slide"}
    code = nbformat.v4.new_code_cell("print('ran')")
    code.metadata["slideshow"] = {"slide_type": "fragment"}
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran here\n")]
    cells = [title, code]
    if injected:
        params = nbformat.v4.new_code_cell("# Parameters\nDEVICE = 'cpu'\n")
        params.metadata["tags"] = ["injected-parameters"]
        cells.insert(1, params)
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)
    return path


def test_export_writes_the_page_and_the_deck_with_a_banner_on_the_page(tmp_path: Path) -> None:
    executed = _executed(tmp_path / "05_x.ipynb")
    page, deck = tmp_path / "html" / "05_x.html", tmp_path / "05_x.slides.html"
    render.export(executed, page, deck, vendor_url="../vendor", banner="**A banner** here")
    text, slides = page.read_text(), deck.read_text()
    assert "<strong>A banner</strong> here" in text and "A banner" not in slides
    assert "ran here" in text and "ran here" in slides
    assert "../vendor/require.js" in text and "../vendor/reveal.js" in slides
    assert "DEVICE = &#39;cpu&#39;" not in slides and "DEVICE" not in slides  # skipped
    assert "width: 1280" in slides and "height: 800" in slides
    assert "<title>05_x</title>" in text and "mermaid" not in text  # the course's template
    assert text.index("A banner") < text.index("A question?")  # the banner comes first
    only_page = tmp_path / "only.html"
    render.export(executed, only_page, None, vendor_url="v")
    assert only_page.is_file() and "A banner" not in only_page.read_text()


def test_write_slides_starts_a_continuation_slide_at_each_cell_named(tmp_path: Path) -> None:
    import nbformat

    executed = _executed(tmp_path / "05_x.ipynb")
    nb = nbformat.read(executed, as_version=4)
    code_id = [c.id for c in nb.cells if c.cell_type == "code" and "ran here" in str(c.outputs)][0]
    decks = {}
    for name, continued in (("plain", frozenset()), ("split", frozenset({code_id}))):
        decks[name] = tmp_path / f"{name}.slides.html"
        render.write_slides(executed, decks[name], "../vendor", continued)
    plain, split = decks["plain"].read_text(), decks["split"].read_text()
    assert split.count("<section") == plain.count("<section") + 1  # a subslide in the stack
    for text in (plain, split):
        assert "DEVICE" not in text  # the injected parameters stay off the slides
        assert text.count("data-figures-fit") == 1  # the figures' fit, once, in the deck
        assert text.index("ran here") < text.index("data-figures-fit") < text.index(
            "</body>")  # after every cell, before the page's end
        assert "<title>05_x slides</title>" in text  # named after the notebook
        assert "mermaid" not in text  # the course's template: nothing from a CDN
    assert nbformat.read(executed, as_version=4).cells[2].metadata.get("slideshow") != {
        "slide_type": "subslide"}  # the notebook itself is left as it was


def test_fit_slides_splits_each_slide_at_its_first_cell_below_the_screen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executed, deck = tmp_path / "x.ipynb", tmp_path / "x.slides.html"
    writes: list[frozenset[str]] = []

    def fake_write(nb, slides, vendor_url, continued=frozenset()):
        assert (nb, slides, vendor_url) == (executed, deck, "v")
        writes.append(continued)

    def measure(results):
        answers = iter(results)

        def fake_fit(slides, chromium):
            assert (slides, chromium) == (deck, "chromium")
            return next(answers)
        return fake_fit

    monkeypatch.setattr(render, "write_slides", fake_write)
    wide = {"slide": 5, "height": 800, "wide_blocks": 1, "text": "wide",  # fits in height
            "cells": [["w1", 0, 400], ["w2", 400, 401]]}
    monkeypatch.setattr(render, "slide_fit", measure([
        [{"slide": 1, "height": 1300, "wide_blocks": 0, "text": "a", "cells": [
            ["a1", 0, 300], ["a2", 300, 500], ["a3", 800, 100], ["a4", 900, 400]]},
         {"slide": 3, "height": 900, "wide_blocks": 0, "text": "b", "cells": [
             ["b1", 0, 900]]},  # one cell: nothing to split
         wide],
        [{"slide": 2, "height": 850, "wide_blocks": 0, "text": "a3", "cells": [
            ["a3", 0, 100], ["a4", 100, 750]]}, wide],
        [wide]]))
    left = render.fit_slides(executed, deck, "v", "chromium")
    # a2 ends at the screen's edge (800): it fits; a3 is the first cell below it
    assert writes == [frozenset(), frozenset({"a3"}), frozenset({"a3", "a4"})]
    assert left == [wide]  # what no split can fix comes back
    stuck = [{"slide": 0, "height": 900, "wide_blocks": 0, "text": "x",
              "cells": [["x1", 0, 100], ["x2", 100, 800]]}]
    for passes, kwargs in ((2, {"passes": 2}), (6, {})):  # 6 passes unless told
        monkeypatch.setattr(render, "slide_fit", measure([stuck] * (passes + 2)))
        writes.clear()
        assert render.fit_slides(executed, deck, "v", "chromium", **kwargs) == stuck
        assert writes == [frozenset()] + [frozenset({"x2"})] * passes  # then it gives up


def test_render_recorded_pages_the_newest_recording_under_its_label(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "gpu-one").mkdir(parents=True)
    source = _executed(tmp_path / "05_x.ipynb", injected=False)
    _executed(results / "gpu-one" / "05_x.ipynb")
    _executed(results / "gpu-one" / "05_other.ipynb")
    (results / "gpu-one.json").write_text(json.dumps(
        {"device": "GPU One", "date": "2026-01-02", "torch": "2.11", "course": {"commit": "abc1234"}}))
    build = tmp_path / "build"
    page, label = render.render_recorded(source, build, results)
    assert page == build / "html" / "recorded" / "gpu-one" / "05_x.html"
    assert label.startswith("recorded on GPU One (2026-01-02, torch 2.11, course abc1234)")
    text = page.read_text()
    assert "A recorded run, not this build" in text and "../../05_x.html" in text
    assert "../../../vendor/require.js" in text  # build/vendor, from html/recorded/<device>/
    assert render.render_recorded(tmp_path / "06_y.ipynb", build, results) is None
    assert re.search(r"\d+ code cells? of it changed", label)  # compared with this source
    (results / "gpu-one" / "05_x.ipynb").unlink()  # only 05_other is left: not this one
    assert render.render_recorded(source, build, results) is None


def test_execute_hands_papermill_the_run_and_names_a_cell_that_timed_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import papermill
    from nbclient.exceptions import CellTimeoutError

    calls = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: calls.append((a, k)))
    source, out = tmp_path / "05_x.ipynb", tmp_path / "out" / "05_x.ipynb"
    render.execute(source, out, {"N": 2})
    assert calls == [((str(source), str(out)), {
        "parameters": {"N": 2}, "kernel_name": "python3", "cwd": str(tmp_path),
        "progress_bar": True, "log_output": False, "execution_timeout": render.CELL_TIMEOUT,
        "request_save_on_cell_execute": False,
        "extra_arguments": ["--IPKernelApp.log_level=ERROR"]})]
    render.execute(source, out, {}, progress=False, cell_timeout=5, cwd=Path("/else"))
    assert (calls[1][1]["cwd"], calls[1][1]["progress_bar"],
            calls[1][1]["execution_timeout"]) == ("/else", False, 5)

    nb = nbformat.v4.new_notebook()
    short = "import time\n" + "\n".join(f"x{k} = {k}" for k in range(9))  # 10 lines
    long = "\n".join(f"y{k} = {k}" for k in range(11))  # 11 lines: previewed in part
    nb.cells = [nbformat.v4.new_markdown_cell("# 05"), nbformat.v4.new_code_cell(short),
                nbformat.v4.new_code_cell(long)]
    nbformat.write(nb, source)
    rule = "-------------------"
    lines = long.split("\n")
    for preview, where in ((short, "cell 1 ('import time')"),
                           (f"{lines[:5]}\n...\n{lines[-5:]}", "cell 2 ('y0 = 0')"),
                           ("something else", "a cell")):
        def timed_out(*a, message=f"timed out\n{rule}\n{preview}\n{rule}\n", **k):
            raise CellTimeoutError(message)
        monkeypatch.setattr(papermill, "execute_notebook", timed_out)
        with pytest.raises(TimeoutError) as err:
            render.execute(source, out, {}, cell_timeout=7)
        assert str(err.value) == f"05_x.ipynb: {where} ran longer than 7 s and was stopped"


def test_the_slides_config_is_the_course_s() -> None:
    config = render.exporter_config("../vendor").SlidesExporter
    assert (config.reveal_theme, config.reveal_scroll, config.exclude_input_prompt,
            config.exclude_output_prompt) == ("white", True, True, True)
    assert (config.reveal_width, config.reveal_height) == ("1280", "800")


def test_render_course_links_the_recorded_run_and_shows_a_bar(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    monkeypatch.setattr(render, "execute", lambda source, executed, parameters, progress:
                        shutil.copy(source, executed))
    monkeypatch.setattr(render, "vendor_assets", lambda build: build / "vendor")
    monkeypatch.setattr(render, "find_chromium", lambda: None)
    build = tmp_path / "build"
    recorded = build / "html" / "recorded" / "gpu-one" / "05_x.html"
    asked = []
    monkeypatch.setattr(render, "render_recorded", lambda source, build_: asked.append(
        (source.name, build_)) or (recorded, "recorded on GPU <One>"))
    exported = []
    real_export = render.export
    monkeypatch.setattr(render, "export", lambda executed, page, slides, vendor_url, banner:
                        exported.append(banner) or real_export(executed, page, slides,
                                                               vendor_url, banner))
    source = _executed(tmp_path / "05_x.ipynb", injected=False)
    (done,) = render.render_course([source], build)  # a progress bar unless told otherwise
    assert asked == [("05_x.ipynb", build)] and done.recorded == recorded
    assert exported == ["**What did this notebook show on a GPU?** [Its recorded run]"
                        "(recorded/gpu-one/05_x.html), recorded on GPU &lt;One&gt;."]
    assert "What did this notebook show on a GPU?" in done.page.read_text()
    bar = capsys.readouterr().err
    assert "course: 100%" in bar and "1/1" in bar and "notebook/s" in bar


def test_render_course_executes_exports_and_indexes_each_notebook(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    ran = []

    def fake_execute(source, executed, parameters, progress=None):
        ran.append((source.name, parameters))
        assert progress is False  # the bar's setting, passed on
        shutil.copy(source, executed)

    monkeypatch.setattr(render, "execute", fake_execute)
    monkeypatch.setattr(render, "vendor_assets", lambda build: build / "vendor")
    monkeypatch.setattr(render, "render_recorded", lambda source, build: None)
    fitted = []  # with a browser here, each deck is fitted to the screen
    monkeypatch.setattr(render, "find_chromium", lambda: "/bin/chromium")
    monkeypatch.setattr(render, "fit_slides", lambda executed, slides, vendor_url, chromium:
                        fitted.append((executed.name, slides.name, vendor_url, chromium)))
    sources = [_executed(tmp_path / "05_x.ipynb", injected=False),
               _executed(tmp_path / "06_y.ipynb", injected=False)]
    build = tmp_path / "build"
    done = render.render_course(sources, build, device="cpu",
                                params={"06_y.ipynb": {"N": 2}}, progress=False)
    assert ran == [("05_x.ipynb", {"DEVICE": "cpu"}), ("06_y.ipynb", {"DEVICE": "cpu", "N": 2})]
    assert [r.name for r in done] == ["05_x", "06_y"] and all(r.recorded is None for r in done)
    for r in done:
        assert r.page == build / "html" / f"{r.name}.html" and r.page.is_file()
        assert r.slides == build / "slides" / f"{r.name}.slides.html" and r.slides.is_file()
        assert r.executed == build / "executed" / f"{r.name}.ipynb" and r.seconds >= 0
    assert "06_y" in (build / "index.html").read_text()
    assert "Executed on cpu on " in (build / "index.html").read_text()
    assert sorted(p.name for p in build.iterdir()) == ["executed", "html", "index.html", "slides"]
    assert all(0 <= r.seconds < 60 for r in done)  # each notebook's own time
    assert fitted == [(f"{n}.ipynb", f"{n}.slides.html", "../vendor", "/bin/chromium")
                      for n in ("05_x", "06_y")]
    monkeypatch.setattr(render, "find_chromium", lambda: None)  # none: the decks as written
    assert len(render.render_course(sources[:1], build, progress=False)) == 1 and len(fitted) == 2
    with pytest.raises(ValueError, match="^no notebooks to render$"):
        render.render_course([], build)


def test_render_recorded_reads_the_course_s_recordings_by_default(tmp_path: Path) -> None:
    """Without a results folder, render_recorded pages the recording the course ships in
    data/results/ (the H200's, which has notebook 00)."""
    source = REPO / "notebooks" / "00_check_your_setup.ipynb"
    assert (REPO / "data" / "results" / "nvidia-h200" / source.name).is_file()
    page, label = render.render_recorded(source, tmp_path / "build")
    assert page == (tmp_path / "build" / "html" / "recorded" / "nvidia-h200"
                    / f"{source.stem}.html")
    assert label.startswith("recorded on NVIDIA H200") and page.is_file()
