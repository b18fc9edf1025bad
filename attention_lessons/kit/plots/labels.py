"""Where the label of each arrow goes: next to its own tip, clear of every arrow, inside the axes.

The labels of one axes are placed together, at every draw, when the layout is known and the
size of every label in pixels can be measured: a :class:`LabelPlacer` artist, drawn before the
labels, calls :func:`place_labels`.

Each label has 120 places to choose from: 24 directions around its tip, at five distances
beyond the arrow head. A place breaks a rule when it is not inside the axes, when it touches an arrow
(its own included; the arrows are sampled every :data:`SAMPLE` pixels), another text of the axes
or a label placed before it. Each label in turn takes the place that breaks the fewest rules and,
among those, points most nearly the way its arrow does, nearest the tip. The labels with the
fewest free places choose first; the other orders that start the turn elsewhere are tried too,
and the one that breaks the fewest rules over all labels is kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.quiver import Quiver
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = ["LabelPlacer", "place_labels"]

#: Distances (pixels at 100 dpi) from the edge of an arrow head to its label, nearest first.
GAPS = (3.0, 7.0, 12.0, 20.0, 30.0)
#: Directions tried around a tip: every 15°.
DIRECTIONS = 24
#: Room (pixels at 100 dpi) kept between a label and an arrow, a text or another label.
CLEARANCE = 1.5
#: Spacing (pixels at 100 dpi) of the points that stand for an arrow.
SAMPLE = 2.0
#: The cost of breaking one rule; whatever else a place costs is less than this.
_BROKEN = 1e6


@dataclass
class _Group:
    """The arrows of one :func:`~attention_lessons.kit.plots.vectors` call and their labels, one per arrow."""

    quiver: Quiver
    labels: list[Text]
    spread: bool


class LabelPlacer(Artist):
    """An invisible artist that places the labels of every arrow of its axes, at every draw.

    :func:`~attention_lessons.kit.plots.vectors` adds one to an axes (:meth:`of`) and registers its arrows
    (:meth:`add`). It is drawn before everything else of the axes (so before the labels) and
    takes no space in a layout.
    """

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[_Group] = []
        self.set_zorder(-math.inf)
        self.set_in_layout(False)

    @classmethod
    def of(cls, ax: Axes) -> LabelPlacer:
        """The placer of ``ax``, added to it if it has none yet."""
        for artist in ax.artists:
            if isinstance(artist, cls):
                return artist
        placer = cls()
        ax.add_artist(placer)
        return placer

    def add(self, quiver: Quiver, labels: Sequence[Text], *, spread: bool = True) -> None:
        """Place ``labels`` (one per arrow of ``quiver``) at every draw.

        ``spread=False`` puts each label above and right of its tip, wherever the other arrows are.
        """
        self.groups.append(_Group(quiver, list(labels), bool(spread)))

    def draw(self, renderer: object) -> None:
        """Place the labels (this artist draws nothing itself)."""
        if self.axes is not None:
            place_labels(self.axes, renderer)


def place_labels(ax: Axes, renderer: object) -> None:
    """Move the labels of every arrow drawn by :func:`~attention_lessons.kit.plots.vectors` into ``ax``.

    Each label goes next to its own tip, inside the axes, clear of every arrow, of the other
    texts of the axes and of the other labels, wherever such a place exists (see the module's
    description); the label's text and colour do not change.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Its limits and position as they will be drawn.
    renderer : matplotlib.backend_bases.RendererBase
        The renderer that measures the labels' sizes.
    """
    placer = next((a for a in ax.artists if isinstance(a, LabelPlacer)), None)
    if placer is None or ax.figure is None:
        return
    scale = ax.figure.dpi / 100.0
    points, reach = _arrow_points(ax, placer.groups, scale)
    ours = {id(label) for group in placer.groups for label in group.labels}
    texts = [_extent(text, renderer) for text in ax.texts if id(text) not in ours and _shown(text)]
    rules = _Rules(points, reach, ax.bbox.extents, np.reshape(np.array(texts, dtype=float), (-1, 4)), scale)
    jobs = []
    for group in placer.groups:
        tails, tips = _tails_and_tips(ax, group.quiver)
        head = 1.5 * _shaft_width(ax, group.quiver)
        for label, tail, tip in zip(group.labels, tails, tips, strict=True):
            if _shown(label):
                extent = label.get_window_extent(renderer)
                boxes, preference = _places(tip, tail, extent.width, extent.height, head, group.spread, scale)
                jobs.append(_Job(label, boxes, preference + rules.cost(boxes)))
    if not jobs:
        return
    jobs.sort(key=lambda job: int(np.sum(job.cost < _BROKEN)))  # the fewest free places first ...
    orders = [jobs[k:] + jobs[:k] for k in range(len(jobs))]  # ... and the same turn started elsewhere
    choices = min((_choose(order, rules) for order in orders), key=lambda chosen: chosen[0])[1]
    for job, box in choices:
        _put(ax, job.label, box)


@dataclass
class _Job:
    """A label, its places (k, 4) and what each costs before the other labels are placed (k,)."""

    label: Text
    boxes: np.ndarray
    cost: np.ndarray


def _choose(order: list[_Job], rules: _Rules) -> tuple[float, list[tuple[_Job, np.ndarray]]]:
    """Each label in turn takes its cheapest place, given the places taken before it."""
    taken = np.empty((0, 4))
    total, chosen = 0.0, []
    for job in order:
        cost = job.cost + _BROKEN * (rules.overlaps(job.boxes, taken) > 0)
        k = int(np.argmin(cost))
        total += float(cost[k])
        chosen.append((job, job.boxes[k]))
        taken = np.vstack([taken, rules.padded(job.boxes[k])])
    return total, chosen


class _Rules:
    """Whether places (rows x0, y0, x1, y1 in pixels) are inside the frame and clear of arrows and texts."""

    def __init__(
        self, points: np.ndarray, reach: np.ndarray, frame: np.ndarray, texts: np.ndarray, scale: float
    ) -> None:
        self.points, self.reach, self.texts = points, reach, texts
        self.frame = np.asarray(frame, dtype=float) + np.array([1.0, 1.0, -1.0, -1.0])
        self.pad = CLEARANCE * scale

    def cost(self, boxes: np.ndarray) -> np.ndarray:
        """_BROKEN for each rule a place breaks (outside, on an arrow, on another text)."""
        outside = (boxes[:, :2] < self.frame[:2]).any(axis=1) | (boxes[:, 2:] > self.frame[2:]).any(axis=1)
        on_arrow = (_distances(self.points, boxes) < self.reach).any(axis=1)
        on_text = self.overlaps(boxes, self.texts) > 0
        return _BROKEN * (outside.astype(float) + on_arrow + on_text)

    def overlaps(self, boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
        """How many of ``others`` (already padded) each place overlaps."""
        if others.size == 0:
            return np.zeros(len(boxes))
        width = np.minimum(boxes[:, None, 2], others[None, :, 2]) - np.maximum(
            boxes[:, None, 0], others[None, :, 0]
        )
        height = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(
            boxes[:, None, 1], others[None, :, 1]
        )
        return ((width > 0) & (height > 0)).sum(axis=1)

    def padded(self, box: np.ndarray) -> np.ndarray:
        return box + np.array([-self.pad, -self.pad, self.pad, self.pad])


def _distances(points: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The distance from each place (k, 4) to each point (m, 2): shape (k, m), 0 inside."""
    x, y = points[None, :, 0], points[None, :, 1]
    dx = np.maximum(np.maximum(boxes[:, None, 0] - x, x - boxes[:, None, 2]), 0.0)
    dy = np.maximum(np.maximum(boxes[:, None, 1] - y, y - boxes[:, None, 3]), 0.0)
    return np.hypot(dx, dy)


def _arrow_points(ax: Axes, groups: list[_Group], scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Points along every arrow, :data:`SAMPLE` pixels apart, and how far a label keeps from each.

    Half a shaft along the shaft, one and a half shafts along the head (three shafts wide, five
    long), plus :data:`CLEARANCE` and half the spacing (a label between two points).
    """
    points, reach = [], []
    spacing = SAMPLE * scale
    for group in groups:
        tails, tips = _tails_and_tips(ax, group.quiver)
        shaft = _shaft_width(ax, group.quiver)
        for tail, tip in zip(tails, tips, strict=True):
            length = float(np.hypot(*(tip - tail)))
            t = np.linspace(0.0, 1.0, max(2, math.ceil(length / spacing) + 1))
            points.append(tail + t[:, None] * (tip - tail))
            from_tip = (1.0 - t) * length
            reach.append(
                np.where(from_tip <= 5 * shaft, 1.5 * shaft, 0.5 * shaft) + CLEARANCE * scale + spacing / 2
            )
    if not points:
        return np.empty((0, 2)), np.empty(0)
    return np.vstack(points), np.concatenate(reach)


def _places(
    tip: np.ndarray, tail: np.ndarray, w: float, h: float, head: float, spread: bool, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """The places (k, 4) of a w × h label around ``tip``, and how much each is liked (k,), lower better.

    A place in direction u at distance g has its side facing the tip g pixels from it, centred on
    u (a place to the right starts g to the right of the tip, a place above ends g above it);
    g is the arrow head's half-width ``head`` plus one of :data:`GAPS`. The further u turns from
    the direction the arrow points in, and the further out, the less a place is liked. Without
    ``spread``, the only place is above and right of the tip.
    """
    if spread:
        angles = np.tile(2 * np.pi * np.arange(DIRECTIONS) / DIRECTIONS, len(GAPS))
        gaps = np.repeat(np.array(GAPS), DIRECTIONS)
    else:
        angles, gaps = np.array([np.pi / 4]), np.array(GAPS[:1])
    u = np.column_stack([np.cos(angles), np.sin(angles)])
    distance = head + gaps * scale
    x0 = tip[0] + distance * u[:, 0] - w * (1 - u[:, 0]) / 2
    y0 = tip[1] + distance * u[:, 1] - h * (1 - u[:, 1]) / 2
    along = tip - tail
    length = float(np.hypot(*along))
    pointing = along / length if length > 0 else np.array([math.sqrt(0.5), math.sqrt(0.5)])
    turn = 1.0 - u @ pointing  # 0 straight on, 2 backwards
    return np.column_stack([x0, y0, x0 + w, y0 + h]), 2.0 * turn + gaps / GAPS[-1]


def _tails_and_tips(ax: Axes, quiver: Quiver) -> tuple[np.ndarray, np.ndarray]:
    """Tails and tips of the arrows in pixels."""
    tails = np.asarray(quiver.get_offsets(), dtype=float)
    deltas = np.column_stack([np.ravel(quiver.U), np.ravel(quiver.V)])
    to_pixels = ax.transData.transform
    return to_pixels(tails), to_pixels(tails + deltas)


def _shaft_width(ax: Axes, quiver: Quiver) -> float:
    """The arrows' shaft width in pixels (vectors draws them in units of the axes' width)."""
    return float(quiver.width) * ax.bbox.width


def _shown(text: Text) -> bool:
    return text.get_visible() and bool(text.get_text())


def _extent(text: Text, renderer: object) -> tuple[float, float, float, float]:
    """Where a text is drawn, its box (as the readout's) included, with a little room around it."""
    patch = text.get_bbox_patch()
    extent = text.get_window_extent(renderer)
    if patch is not None:
        extent = Bbox.union([extent, patch.get_window_extent(renderer)])
    return extent.x0 - 2, extent.y0 - 2, extent.x1 + 2, extent.y1 + 2


def _put(ax: Axes, label: Text, box: np.ndarray) -> None:
    """Anchor ``label`` at the lower left corner of ``box`` (changing nothing that is already so)."""
    x, y = ax.transData.inverted().transform((box[0], box[1]))
    if (label.get_horizontalalignment(), label.get_verticalalignment()) != ("left", "bottom"):
        label.set_horizontalalignment("left")
        label.set_verticalalignment("bottom")
    if not np.allclose(label.get_position(), (x, y), rtol=1e-12, atol=0):
        label.set_position((x, y))
