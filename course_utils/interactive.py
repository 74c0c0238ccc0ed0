"""Controls that redraw what a function prints, without an Output widget."""

from __future__ import annotations

import contextlib
import html
import io
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import ipywidgets as widgets


def live_printout(fn: Callable[..., Any], **controls: widgets.ValueWidget) -> widgets.VBox:
    """Show `controls` above the text fn(**their values) prints, redrawn whenever one changes.

    The text goes into an HTML widget, not an Output widget (as `interact` uses), which can
    deadlock a headless run (nbclient). Displayed, the box also offers its current text as plain
    text: a viewer without widgets (a saved copy, GitHub) shows that instead, JupyterLab the
    controls and their text alone.
    """
    import ipywidgets as widgets  # here: scripts that import course_utils need no widgets

    if not callable(fn):
        raise TypeError(f"live_printout needs a callable, got {type(fn).__name__}.")
    if not controls:
        raise ValueError("live_printout needs at least one control, e.g. n=IntSlider(...).")
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise TypeError(f"control {name!r} must be an ipywidgets control with a value "
                            f"(IntSlider, Dropdown, ...), got {type(control).__name__}.")
        if not control.description:
            control.description = name
    view = widgets.HTML()
    text = [""]

    def redraw(_change: Any = None) -> None:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                fn(**{name: control.value for name, control in controls.items()})
        except Exception as err:  # show it where the reader looks, not in the kernel's log
            printed.write(f"error: {type(err).__name__}: {err}\n")
        text[0] = printed.getvalue()
        view.value = f"<pre>{html.escape(text[0])}</pre>"

    class Printout(widgets.VBox):
        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            bundle = super()._repr_mimebundle_(**kwargs)
            if isinstance(bundle, dict):
                bundle["text/plain"] = text[0]  # in place of "VBox(children=...)"
            return bundle

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    return Printout([*controls.values(), view])
