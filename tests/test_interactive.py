"""live_printout: the printed text follows the controls, with no Output widget involved."""

from __future__ import annotations

import html

import ipywidgets as widgets
import pytest

from course_utils import live_printout


def _text(box: widgets.VBox) -> str:
    view = box.children[-1]
    assert isinstance(view, widgets.HTML)
    assert view.value.startswith("<pre>") and view.value.endswith("</pre>")
    return html.unescape(view.value[len("<pre>"):-len("</pre>")])


def test_text_follows_the_controls(capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    def show(n: int, word: str) -> None:
        calls.append(n)
        print(word * n)

    n, word = widgets.IntSlider(value=2, min=1, max=5), widgets.Dropdown(options=["a", "<b>"])
    box = live_printout(show, n=n, word=word)
    assert capsys.readouterr().out == ""  # nothing printed: a printed copy would go stale
    assert calls == [2]
    assert list(box.children[:2]) == [n, word]
    assert n.description == "n" and word.description == "word"
    assert _text(box) == "aa\n"
    n.value = 3
    assert _text(box) == "aaa\n"
    assert capsys.readouterr().out == ""
    # Displayed: the widget for JupyterLab, and the current text for a viewer without widgets.
    bundle = box._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == "aaa\n"
    word.value = "<b>"
    assert _text(box) == "<b><b><b>\n"  # escaped in the HTML, the same text to the reader
    assert "&lt;b&gt;" in box.children[-1].value
    assert not any(isinstance(w, widgets.Output) for w in box.children)


def test_an_error_is_shown_in_the_view() -> None:
    def fails(x: int) -> None:
        print("before")
        raise ValueError(f"bad {x}")

    box = live_printout(fails, x=widgets.IntSlider(value=4))
    assert _text(box) == "before\nerror: ValueError: bad 4\n"


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="callable"):
        live_printout(3, n=widgets.IntSlider())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one control"):
        live_printout(print)
    with pytest.raises(TypeError, match="control 'n'"):
        live_printout(print, n=(1, 4))  # type: ignore[arg-type]
