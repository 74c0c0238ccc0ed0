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
    deadlock a headless run (nbclient); the first text is also printed, for saved copies.
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

    def redraw(_change: Any = None) -> str:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                fn(**{name: control.value for name, control in controls.items()})
        except Exception as err:  # show it where the reader looks, not in the kernel's log
            printed.write(f"error: {type(err).__name__}: {err}\n")
        view.value = f"<pre>{html.escape(printed.getvalue())}</pre>"
        return printed.getvalue()

    for control in controls.values():
        control.observe(redraw, names="value")
    print(redraw(), end="")
    return widgets.VBox([*controls.values(), view])
