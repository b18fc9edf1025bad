"""The lessons' drawing tools (matplotlib and seaborn): what every lesson's figures are made of.

The drawing tools: :func:`figure` (a figure in one of two :data:`STYLES`, ``"light"`` and
``"dark"``), :func:`heatmap` (a matrix, every cell annotated), :func:`vectors` (2D vectors as
labelled arrows) and :func:`show` (a PNG in a notebook, with no ``<Figure …>`` text output,
carrying the figure's text alternative as its alt text), with the axis limits the figures and the
explorers share (:func:`score_limits`, :func:`similarity_limits`). The lessons' pictures live in
their lesson's folder, each one figure function: ``attention_lessons/l07_whole_picture/plots.py``'s
:func:`~attention_lessons.l07_whole_picture.plots.attention_figure`, lesson 01's
:func:`~attention_lessons.l01_embeddings.plots.similarity_figure`, lesson 04's
:func:`~attention_lessons.l04_scaling.plots.scaling_figure`, lesson 05's
:func:`~attention_lessons.l05_softmax.plots.softmax_figure`, and so on.

Colour maps are readable by colour-blind readers (viridis, cividis) and the arrows use the
Okabe–Ito palette; one colour per meaning, taken by name from :mod:`~attention_lessons.kit.plots.palette`
(:func:`color`: ``"raw score"``, ``"scaled score"``, ``"query"``, ``"key"``, ``"position"``,
``"reference"``; :data:`RAW_COLOR` and :data:`SCALED_COLOR` are two of them). Every
number on a cell and every arrow label has a contrast of at least 4.5:1 with what is behind it.

Every figure function and drawing tool writes the figure's text alternative from the data it
draws (:func:`describe`, :func:`description`): what the picture shows and its key numbers, with
the long data as tables that :func:`show` folds beside the image.

Modules: :mod:`~attention_lessons.kit.plots.palette`, :mod:`~attention_lessons.kit.plots.styles`,
:mod:`~attention_lessons.kit.plots.contrast`, :mod:`~attention_lessons.kit.plots.cells`,
:mod:`~attention_lessons.kit.plots.limits`, :mod:`~attention_lessons.kit.plots.heatmaps`,
:mod:`~attention_lessons.kit.plots.arrows`, :mod:`~attention_lessons.kit.plots.labels`,
:mod:`~attention_lessons.kit.plots.png`, :mod:`~attention_lessons.kit.plots.descriptions`,
:mod:`~attention_lessons.kit.plots.artists`, :mod:`~attention_lessons.kit.plots.panel_text`,
:mod:`~attention_lessons.kit.plots.curves`.
"""

from attention_lessons.kit.plots.arrows import Arrows, vectors
from attention_lessons.kit.plots.cells import format_cell
from attention_lessons.kit.plots.contrast import (
    contrast_ratio,
    readable_color,
    relative_luminance,
    text_color_on,
)
from attention_lessons.kit.plots.descriptions import Description, Table, describe, description
from attention_lessons.kit.plots.heatmaps import Heatmap, heatmap
from attention_lessons.kit.plots.labels import place_labels
from attention_lessons.kit.plots.limits import color_limits, score_limits, similarity_limits, square_limits
from attention_lessons.kit.plots.palette import MEANINGS, color, ordered
from attention_lessons.kit.plots.png import figure_bundle, png_bytes, show
from attention_lessons.kit.plots.styles import (
    OKABE_ITO,
    RAW_COLOR,
    RAW_HATCH,
    SCALED_COLOR,
    STYLES,
    check_style,
    figure,
    style_context,
)

__all__ = [
    "MEANINGS",
    "OKABE_ITO",
    "RAW_COLOR",
    "RAW_HATCH",
    "SCALED_COLOR",
    "STYLES",
    "Arrows",
    "Description",
    "Heatmap",
    "Table",
    "check_style",
    "color",
    "color_limits",
    "contrast_ratio",
    "describe",
    "description",
    "figure",
    "figure_bundle",
    "format_cell",
    "heatmap",
    "ordered",
    "place_labels",
    "png_bytes",
    "readable_color",
    "relative_luminance",
    "score_limits",
    "show",
    "similarity_limits",
    "square_limits",
    "style_context",
    "text_color_on",
    "vectors",
]
