"""Static pictures of attention (matplotlib and seaborn), for the lessons.

The drawing tools: :func:`figure` (a figure in one of two :data:`STYLES`, ``"light"`` and
``"dark"``), :func:`heatmap` (a matrix, every cell annotated), :func:`vectors` (2D vectors as
labelled arrows) and :func:`show` (a PNG in a notebook, with no ``<Figure …>`` text output,
carrying the figure's text alternative as its alt text). The lessons'
pictures, each one figure function: :func:`attention_figure` (lesson 07),
:func:`similarity_figure` (lessons 01 and 03), :func:`scaling_figure` (lesson 04) and
:func:`softmax_figure` (lesson 05), with the axis limits the explorers share
(:func:`score_limits`, :func:`similarity_limits`).

Colour maps are readable by colour-blind readers (viridis, cividis) and the arrows use the
Okabe–Ito palette; one colour per meaning, taken by name from :mod:`~attnlib.plots.palette`
(:func:`color`: ``"raw score"``, ``"scaled score"``, ``"query"``, ``"key"``, ``"position"``,
``"reference"``; :data:`RAW_COLOR` and :data:`SCALED_COLOR` are two of them). Every
number on a cell and every arrow label has a contrast of at least 4.5:1 with what is behind it.

Every figure function and drawing tool writes the figure's text alternative from the data it
draws (:func:`describe`, :func:`description`): what the picture shows and its key numbers, with
the long data as tables that :func:`show` folds beside the image.

Modules: :mod:`~attnlib.plots.palette`, :mod:`~attnlib.plots.styles`, :mod:`~attnlib.plots.contrast`,
:mod:`~attnlib.plots.cells`, :mod:`~attnlib.plots.limits`, :mod:`~attnlib.plots.heatmaps`,
:mod:`~attnlib.plots.arrows`, :mod:`~attnlib.plots.labels`, :mod:`~attnlib.plots.png`,
:mod:`~attnlib.plots.descriptions`, :mod:`~attnlib.plots.artists`, :mod:`~attnlib.plots.panel_text` (the
tools); :mod:`~attnlib.plots.overview`, :mod:`~attnlib.plots.dot_product`,
:mod:`~attnlib.plots.sqrt_dk`, :mod:`~attnlib.plots.temperature` (the lessons' pictures).
"""

from attnlib.plots.arrows import Arrows, vectors
from attnlib.plots.cells import format_cell
from attnlib.plots.contrast import contrast_ratio, readable_color, relative_luminance, text_color_on
from attnlib.plots.descriptions import Description, Table, describe, description
from attnlib.plots.dot_product import SimilarityFigure, similarity_figure, similarity_text
from attnlib.plots.heatmaps import Heatmap, heatmap
from attnlib.plots.labels import place_labels
from attnlib.plots.limits import color_limits, score_limits, similarity_limits, square_limits
from attnlib.plots.overview import AttentionFigure, attention_figure
from attnlib.plots.palette import MEANINGS, color, ordered
from attnlib.plots.png import figure_bundle, png_bytes, show
from attnlib.plots.sqrt_dk import ScalingFigure, scaling_bins, scaling_figure
from attnlib.plots.styles import (
    OKABE_ITO,
    RAW_COLOR,
    RAW_HATCH,
    SCALED_COLOR,
    STYLES,
    check_style,
    figure,
    style_context,
)
from attnlib.plots.temperature import SoftmaxFigure, softmax_figure

__all__ = [
    "MEANINGS",
    "OKABE_ITO",
    "RAW_COLOR",
    "RAW_HATCH",
    "SCALED_COLOR",
    "STYLES",
    "Arrows",
    "AttentionFigure",
    "Description",
    "Heatmap",
    "ScalingFigure",
    "SimilarityFigure",
    "SoftmaxFigure",
    "Table",
    "attention_figure",
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
    "scaling_bins",
    "scaling_figure",
    "score_limits",
    "show",
    "similarity_figure",
    "similarity_limits",
    "similarity_text",
    "softmax_figure",
    "square_limits",
    "style_context",
    "text_color_on",
    "vectors",
]
