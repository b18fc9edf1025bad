"""What every explorer shares: an anywidget with a style, the colours of both styles and the
colour maps it draws with, and the freeing of explorers whose cell is run again."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar

import anywidget
import matplotlib as mpl
import numpy as np
import traitlets

from attention_lessons.kit import plots
from attention_lessons.kit.widgets.cells import adopt

__all__ = ["ANNOTATION_DARK", "ANNOTATION_LIGHT", "Explorer", "colormap_table", "theme"]

#: The two colours of numbers written on coloured cells: each cell gets the one with the higher
#: WCAG contrast. Only black and white reach 4.5:1 on every colour (at worst 4.58:1, on a cell of
#: luminance 0.18); the styles' text colours (#222222 and #eeeeee) would fall to 3.7:1 there.
ANNOTATION_DARK = "#000000"
ANNOTATION_LIGHT = "#ffffff"


@cache
def theme(style: str) -> dict[str, Any]:
    """The colours an explorer draws with in ``style``, from :data:`attention_lessons.kit.plots.STYLES`.

    Returns
    -------
    dict
        ``background``, ``text``, ``edge``, ``tick``, ``grid`` (hex colours of the style),
        ``annotationDark`` and ``annotationLight`` (the numbers on cells), ``palette`` (Okabe–Ito,
        one colour per arrow), ``raw`` and ``scaled`` (:data:`~attention_lessons.kit.plots.RAW_COLOR`,
        :data:`~attention_lessons.kit.plots.SCALED_COLOR`), ``runningMaximum``, ``query`` and ``key`` (the
        palette's ``"running maximum"``, ``"query"`` and ``"key"``).
    """
    plots.check_style(style)
    rc = plots.STYLES[style]

    def hex_of(key: str) -> str:
        return str(mpl.colors.to_hex(str(rc[key])))

    return {
        "background": hex_of("figure.facecolor"),
        "text": hex_of("text.color"),
        "edge": hex_of("axes.edgecolor"),
        "tick": hex_of("xtick.color"),
        "grid": hex_of("grid.color"),
        "annotationDark": ANNOTATION_DARK,
        "annotationLight": ANNOTATION_LIGHT,
        "palette": list(plots.OKABE_ITO),
        "raw": plots.RAW_COLOR,
        "scaled": plots.SCALED_COLOR,
        "runningMaximum": plots.color("running maximum"),
        "query": plots.color("query"),
        "key": plots.color("key"),
    }


@cache
def colormap_table(name: str) -> tuple[str, ...]:
    """Matplotlib's colour map ``name`` as its lookup table: one hex colour per entry (256)."""
    cmap = mpl.colormaps[name]
    return tuple(str(mpl.colors.to_hex(rgba)) for rgba in cmap(np.arange(cmap.N)))


class Explorer(anywidget.AnyWidget):
    """The base of every explorer: an anywidget whose front end is one ES module drawing SVG.

    Subclasses set ``_esm`` (:func:`attention_lessons.kit.widgets.modules.module_text`) and the synced traits
    of their inputs (which the front end sets on every move). Python sends only what the browser
    cannot compute (random draws, a training replay, a real model's heads); what the front end's
    mirror computes, a subclass offers as an on-demand property computed with attnlib.

    Attributes
    ----------
    style_name : str
        ``"light"`` or ``"dark"`` (synced). Not ``style``: ipywidgets' front end reads a widget's
        ``style`` as a reference to a style model.
    themes : dict
        :func:`theme` of both styles (synced, set once).
    colormaps : dict of str to list of str
        The lookup tables of the colour maps drawn (synced, set once).
    """

    #: One line shown where widgets cannot be (a notebook viewer without a kernel).
    summary: ClassVar[str] = "An attnlib explorer"
    #: The colour maps the explorer draws with.
    colormap_names: ClassVar[tuple[str, ...]] = ()

    style_name = traitlets.Unicode("light").tag(sync=True)
    themes = traitlets.Dict().tag(sync=True)
    colormaps = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("themes", {name: theme(name) for name in plots.STYLES})
        kwargs.setdefault("colormaps", {name: list(colormap_table(name)) for name in self.colormap_names})
        super().__init__(**kwargs)
        adopt(self)

    def close(self) -> None:
        """Close the explorer and its ``Layout``: both leave ipywidgets' registry of live widgets.

        ipywidgets' ``close()`` closes the widget alone; its ``Layout`` (a widget of its own, which
        every ``DOMWidget`` has) would stay registered, about 5 KB per explorer made and closed.
        """
        layout = self.layout
        super().close()
        layout.close()

    @staticmethod
    def _checked_index(proposal: traitlets.Bunch, allowed: Sequence[int], named: str = "") -> int:
        """The value proposed for an integer trait (a step, a layer, a head, a choice), checked.

        Parameters
        ----------
        proposal : traitlets.Bunch
            What ``@traitlets.validate`` hands over: the trait and the value proposed for it.
        allowed : range or sequence of int
            The values it may take: a ``range`` is named by its first and last value
            (``"head must be from 0 to 11, got 12"``), any other sequence as it is
            (``"step must be one of the saved steps [0, 5, 10], got 7"``).
        named : str, optional
            What the sequence is (``"the saved steps"``), said before it.

        Returns
        -------
        int
            The value.

        Raises
        ------
        traitlets.TraitError
            Naming the trait, the values it may take and the value proposed.
        """
        name, value = proposal["trait"].name, proposal["value"]
        if value in allowed:
            return int(value)
        if isinstance(allowed, range):
            values = f"from {allowed.start} to {allowed.stop - 1}, got {value}"
        else:
            values = f"one of {named + ' ' if named else ''}{allowed}, got {value!r}"
        raise traitlets.TraitError(f"{name} must be {values}")

    @traitlets.validate("style_name")
    def _check_style(self, proposal: traitlets.Bunch) -> str:
        plots.check_style(proposal["value"])
        return str(proposal["value"])

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data, _metadata = bundle
            data["text/plain"] = f"{self.summary} (interactive: run the notebook in Jupyter to use it)"
        return bundle
