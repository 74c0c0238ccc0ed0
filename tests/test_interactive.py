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


def test_a_given_description_is_kept_and_only_a_new_value_redraws() -> None:
    """A control's own label stays; changing a control's range or label, not its value, does
    not call the function again."""
    calls = []
    n = widgets.IntSlider(value=2, max=5, description="size")
    box = live_printout(lambda n: calls.append(n) or print(n), n=n)
    assert n.description == "size" and calls == [2]
    n.max = 9
    n.description = "count"
    assert calls == [2]
    n.value = 4
    assert calls == [2, 4] and _text(box) == "4\n"


def test_the_messages_for_bad_input_read_whole() -> None:
    """What a reader is told when a control, the function or every control is wrong."""
    with pytest.raises(TypeError) as info:
        live_printout(3, n=widgets.IntSlider())  # type: ignore[arg-type]
    assert str(info.value) == "live_printout needs a callable, got int."
    with pytest.raises(ValueError) as info:
        live_printout(print)
    assert str(info.value) == (
        "live_printout needs at least one control, e.g. n=IntSlider(...).")
    with pytest.raises(TypeError) as info:
        live_printout(print, n=(1, 4))  # type: ignore[arg-type]
    assert str(info.value) == ("control 'n' must be an ipywidgets control with a value "
                               "(IntSlider, Dropdown, ...), got tuple.")
