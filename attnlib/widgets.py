"""Interactive explorers: move an embedding, d_k, a score or a temperature and watch attention respond.

    from attnlib import widgets
    widgets.playground()            # lesson 07: the whole picture, a slider for every number
    widgets.scaling_explorer()      # lesson 04: why divide by √d_k
    widgets.softmax_explorer()      # lesson 05: scores, temperature and masks → weights
    widgets.similarity_explorer()   # lessons 01 and 03: dot product, cosine and angle

Each explorer is an object that displays as an ipywidgets box (sliders, a readout with the
numbers, and the picture as an :class:`ipywidgets.Image`). Its picture is the figure of
:mod:`attnlib.plots` that the lesson draws statically, drawn once and then changed in place.

How they stay fast and correct:

- Pictures are :class:`matplotlib.figure.Figure` objects rendered to PNG bytes by
  :class:`attnlib.plots.FigureRenderer`, which redraws only the artists that change. pyplot is
  never used: widget messages may be handled on another thread (a kernel "subshell"), where
  pyplot's global state races with the inline backend.
- Numbers are formatted explicitly (``np.set_printoptions`` from a cell does not apply inside
  callbacks that run on another thread).
- Slider moves never queue up. A move records that the controls changed and, if no render is
  running, starts one on a background thread; a render always reads the *newest* control values,
  and when it ends it renders again only if something changed meanwhile. However fast a slider
  is dragged, at most one render runs and at most one more is pending.

For tests and scripts, ``asynchronous=False`` renders synchronously inside every change, and
:meth:`Explorer.update` renders the current values at once; :meth:`Explorer.wait` blocks until
background renders have caught up.
"""

from __future__ import annotations

import html
import math
import threading
from collections.abc import Sequence

import ipywidgets as w
import numpy as np
import numpy.typing as npt

from attnlib import examples, plots
from attnlib._validate import as_real_array
from attnlib.core import AttentionSteps, attention_steps, default_scale, raw_scores, softmax
from attnlib.plots import score_limits, similarity_limits
from attnlib.projection import qkv
from attnlib.scaling import D_K_VALUES, ScalingStatistics, scaling_statistics
from attnlib.similarity import similarity

__all__ = [
    "SCALING_D_K",
    "Explorer",
    "Playground",
    "ScalingExplorer",
    "SimilarityExplorer",
    "SoftmaxExplorer",
    "playground",
    "scaling_explorer",
    "score_limits",
    "similarity_explorer",
    "similarity_limits",
    "softmax_explorer",
]

#: The d_k values of the scaling explorer's slider: every power of two from 1 to 1024 and the
#: values halfway between them (on a log scale, rounded).
SCALING_D_K = D_K_VALUES

_WIDE = {"description_width": "initial"}
_NARROW = {"description_width": "12px"}
#: Readouts: monospace, and tighter lines than a widget's default 28 px.
_READOUT_STYLE = "font-family:monospace; line-height:1.35; margin:4px 0"


class Explorer:
    """What every explorer shares: controls, a readout, the picture, and coalesced rendering.

    Attributes
    ----------
    widget : ipywidgets.Box
        The whole explorer, to display (displaying the explorer itself shows it too).
    sliders : dict of str to ipywidgets widget
        Every slider, by name.
    image : ipywidgets.Image
        The picture, PNG bytes in ``image.value``.
    readout : ipywidgets.HTML
        The numbers, formatted.
    message : ipywidgets.HTML
        Empty, or what went wrong in the last background render.
    renderer : attnlib.plots.FigureRenderer
        Turns the figure into PNG bytes, redrawing only what changes.
    renders : int
        How many pictures were rendered.
    last_error : Exception or None
        The error of the last background render that failed.
    """

    #: One line shown where widgets cannot be (a notebook viewer without a kernel).
    summary = "An attnlib explorer"

    def __init__(self, *, asynchronous: bool = True, dpi: float = 100) -> None:
        self.asynchronous = bool(asynchronous)
        self.dpi = float(dpi)
        self.sliders: dict[str, w.ValueWidget] = {}
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%", height="auto"))
        self.image.add_class("attnlib-image")
        self.readout = w.HTML()
        self.readout.add_class("attnlib-readout")
        self.message = w.HTML()
        self.message.add_class("attnlib-message")
        self.renderer: plots.FigureRenderer | None = None
        self.renders = 0
        self.last_error: Exception | None = None
        self.widget: w.Box = w.VBox()
        self._render_lock = threading.RLock()
        self._state = threading.Condition()
        self._version = 0  # bumped by every change of a control
        self._rendered = 0  # the version the last finished background render started from
        self._worker: threading.Thread | None = None
        self._holding = False

    # --- display ----------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, object] | None:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/plain"] = f"{self.summary} (interactive: run the notebook in Jupyter to use it)"
        return bundle

    # --- rendering --------------------------------------------------------------------------

    def update(self) -> bytes:
        """Render the current control values now, in this thread; return the PNG bytes."""
        with self._render_lock:
            png = self._render()
            self.image.value = png
            self.renders += 1
            if self.message.value:
                self.message.value = ""
            return png

    def wait(self, timeout: float = 30.0) -> None:
        """Block until the background renders have caught up; raise the error of a failed one."""
        with self._state:
            if not self._state.wait_for(lambda: self._worker is None, timeout):
                raise TimeoutError(f"the explorer was still rendering after {timeout} s")
        if self.last_error is not None:
            error, self.last_error = self.last_error, None
            raise error

    def _changed(self, _change: object = None) -> None:
        """A control changed: render now (synchronous) or make sure a background render follows."""
        if self._holding:
            return
        if not self.asynchronous:
            self.update()
            return
        with self._state:
            self._version += 1
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name=f"attnlib-{type(self).__name__}", daemon=True
                )
                self._worker.start()

    def _work(self) -> None:
        """Render until the picture shows the newest control values, then stop."""
        while True:
            with self._state:
                version = self._version
                if version == self._rendered:
                    self._worker = None
                    self._state.notify_all()
                    return
            try:
                self.update()
            except Exception as error:  # shown in the widget; a background thread cannot raise
                self.last_error = error
                self.message.value = (
                    '<span style="color:#D55E00">Could not draw this: '
                    f"{html.escape(type(error).__name__)}: {html.escape(str(error))}</span>"
                )
            with self._state:
                self._rendered = version

    def _observe(self, *controls: w.Widget) -> None:
        for control in controls:
            control.observe(self._changed, names="value")

    def _set_quietly(self, values: dict[w.ValueWidget, object]) -> None:
        """Set several controls, then render once."""
        self._holding = True
        try:
            for control, value in values.items():
                control.value = value
        finally:
            self._holding = False
        self._changed()

    def _render(self) -> bytes:
        raise NotImplementedError


# --- the playground (lesson 07) ---------------------------------------------------------------


class Playground(Explorer):
    """The whole picture of lesson 07 with a slider for every embedding and for d_k.

    Use :func:`playground` to make one.

    Attributes
    ----------
    tokens : tuple of str
    W_q, W_k, W_v : numpy.ndarray
        The projections (identity by default).
    sliders : dict
        ``"<token> x"`` and ``"<token> y"`` for every token, and ``"d_k"``.
    causal : ipywidgets.Checkbox
    style : ipywidgets.ToggleButtons
        ``"light"`` or ``"dark"``.
    reset_button : ipywidgets.Button
    note : ipywidgets.HTML
        What the d_k slider does here (a temperature: the vectors stay 2D).
    view : attnlib.plots.AttentionFigure
        The figure as drawn now.
    steps : attnlib.AttentionSteps
        What the figure shows: attention of the current embeddings.
    embeddings : numpy.ndarray, shape (n, 2)
        The current embeddings (the sliders' values).
    """

    summary = "Attention playground: sliders for every embedding and for d_k"

    def __init__(
        self,
        tokens: Sequence[str],
        embeddings: npt.ArrayLike,
        W_q: npt.ArrayLike,
        W_k: npt.ArrayLike,
        W_v: npt.ArrayLike,
        *,
        d_k: int | None,
        causal: bool,
        style: str,
        value_range: tuple[float, float],
        step: float,
        max_d_k: int,
        asynchronous: bool,
        dpi: float,
    ) -> None:
        super().__init__(asynchronous=asynchronous, dpi=dpi)
        X = as_real_array(embeddings, "embeddings").astype(np.float64)
        self.tokens = tuple(str(t) for t in tokens)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError(f"embeddings must have shape (n, 2): one 2D vector per token, got {X.shape}")
        if len(self.tokens) != X.shape[0] or not 1 <= X.shape[0] <= 8:
            raise ValueError(
                f"give 1 to 8 tokens, one per embedding: {len(self.tokens)} tokens, {X.shape[0]} embeddings"
            )
        Q, _, V = qkv(X, W_q, W_k, W_v)
        if V.shape[1] != 2:
            raise ValueError(
                f"W_v must project to 2D values (shape (2, 2)) to draw them, got {np.shape(W_v)}"
            )
        self.W_q, self.W_k, self.W_v = (np.asarray(m, dtype=np.float64) for m in (W_q, W_k, W_v))
        plots.check_style(style)
        d_k_default = Q.shape[1] if d_k is None else int(d_k)
        if not 1 <= d_k_default <= max_d_k:
            raise ValueError(f"d_k must be between 1 and max_d_k={max_d_k}, got {d_k_default}")
        low = min(value_range[0], math.floor(float(X.min())))
        high = max(value_range[1], math.ceil(float(X.max())))

        self.sliders = {}
        rows = []
        for i, token in enumerate(self.tokens):
            pair = []
            for j, axis in enumerate("xy"):
                slider = w.FloatSlider(
                    value=float(X[i, j]), min=low, max=high, step=step, description=axis, style=_NARROW,
                    readout_format=".2f", continuous_update=True, layout=w.Layout(width="300px"),
                )  # fmt: skip
                slider.add_class(f"attnlib-{axis}-{i}")
                self.sliders[f"{token} {axis}"] = slider
                pair.append(slider)
            name = w.HTML(f"<b>{html.escape(token)}</b>", layout=w.Layout(width="90px"))
            rows.append(w.HBox([name, *pair]))
        d_k_slider = w.IntSlider(
            value=d_k_default, min=1, max=max_d_k, step=1, description="d_k in the scale 1/√d_k",
            style=_WIDE, continuous_update=True, layout=w.Layout(width="380px"),
        )  # fmt: skip
        d_k_slider.add_class("attnlib-dk")
        self.sliders["d_k"] = d_k_slider
        self.note = note = w.HTML(
            '<small style="line-height:1.3">The vectors stay 2D: the d_k slider only changes the '
            "scale 1/√d_k applied to their scores, like a temperature. Lesson 04's explorer varies "
            "the real dimension.</small>"
        )
        self.causal = w.Checkbox(
            value=bool(causal), description="causal mask", indent=False, layout=w.Layout(width="120px")
        )
        self.style = w.ToggleButtons(
            options=["light", "dark"], value=style, tooltips=["light style", "dark style"]
        )
        self.style.style.button_width = "60px"
        self.reset_button = w.Button(description="reset", icon="undo", tooltip="back to the start values")
        self.reset_button.on_click(lambda _button: self.reset())
        self._defaults = {slider: slider.value for slider in self.sliders.values()}
        self._defaults[self.causal] = self.causal.value
        self._defaults[self.style] = self.style.value

        self.view: plots.AttentionFigure | None = None
        self.steps: AttentionSteps | None = None
        self.embeddings = X
        self._view_key: tuple[str, bool] | None = None
        self._fresh = True  # build the figure anew at the next render (the first one, after reset)
        self._limits: tuple[float, float] = (0.0, 1.0)
        self._score_limits: tuple[float, float] = (0.0, 1.0)
        self.update()
        self._observe(*self.sliders.values(), self.causal, self.style)
        self.widget = w.VBox(
            [
                *rows,
                w.HBox([d_k_slider, self.causal, self.style, self.reset_button]),
                note,
                self.readout,
                self.message,
                self.image,
            ]
        )
        self.widget.add_class("attnlib-playground")

    def reset(self) -> None:
        """Put every control back to its start value and draw the first picture again, exactly."""
        self._fresh = True
        self._set_quietly(self._defaults)

    def compute(self) -> tuple[np.ndarray, AttentionSteps]:
        """The embeddings in the sliders and their attention, as the figure will show them."""
        X = np.array(
            [[self.sliders[f"{token} {axis}"].value for axis in "xy"] for token in self.tokens],
            dtype=np.float64,
        )
        Q, K, V = qkv(X, self.W_q, self.W_k, self.W_v)
        d_k = int(self.sliders["d_k"].value)
        return X, attention_steps(Q, K, V, scale=default_scale(d_k), causal=bool(self.causal.value))

    def _render(self) -> bytes:
        X, steps = self.compute()
        key = (str(self.style.value), bool(self.causal.value))
        fresh = self._fresh or self.view is None or self.renderer is None or self._view_key is None
        if fresh or key[0] != self._view_key[0]:
            self._fresh = False
            self.view = plots.attention_figure(steps, self.tokens, X, style=key[0], spread_labels=True)
            self._set_weights_title(key[1])
            self.renderer = plots.FigureRenderer(self.view.figure, self.view.dynamic_artists(), dpi=self.dpi)
            self._limits = self.view.embeddings.get_xlim()
            self._score_limits = self.view.scores.collections[0].get_clim()
        else:
            if key[1] != self._view_key[1]:
                self._set_weights_title(key[1])
                self.renderer.invalidate()
            self._limits = _steady(self._limits, plots._limits_2d(X, steps.output))
            self._score_limits = _steady(
                self._score_limits, plots._limits(steps.raw_scores, None, None), pad=0.15, minimum_span=0.5
            )
            plots.update_attention_figure(
                self.view, steps, X, limits=self._limits, score_limits=self._score_limits, spread_labels=True
            )
        self._view_key = key
        self.embeddings, self.steps = X, steps
        self.readout.value = self._readout(X, steps)
        return self.renderer.png()

    def _set_weights_title(self, causal: bool) -> None:
        assert self.view is not None
        mask = " + mask" if causal else ""
        self.view.weights.title.set_text(f"3. Weights softmax(Q Kᵀ/√d_k{mask})")

    def _readout(self, X: np.ndarray, steps: AttentionSteps) -> str:
        d_k = int(self.sliders["d_k"].value)
        head = (
            f"scale 1/√d_k = 1/√{d_k} = {steps.scale:.4f} &nbsp;·&nbsp; causal mask "
            f"{'on' if self.causal.value else 'off'}"
        )
        rows = []
        for i, token in enumerate(self.tokens):
            j = int(np.argmax(steps.weights[i]))
            rows.append(
                f"<tr><td>{html.escape(token)}</td><td>({X[i, 0]:+.2f}, {X[i, 1]:+.2f})</td>"
                f"<td>({steps.output[i, 0]:+.2f}, {steps.output[i, 1]:+.2f})</td>"
                f"<td>{html.escape(self.tokens[j])} {steps.weights[i, j]:.3f}</td></tr>"
            )
        return (
            f'<div style="{_READOUT_STYLE}">{head}<table>'
            "<tr><th>token</th><th>embedding</th><th>output</th><th>largest weight</th></tr>"
            f"{''.join(rows)}</table></div>"
        )


def playground(
    tokens: Sequence[str] | None = None,
    embeddings: npt.ArrayLike | None = None,
    *,
    W_q: npt.ArrayLike | None = None,
    W_k: npt.ArrayLike | None = None,
    W_v: npt.ArrayLike | None = None,
    d_k: int | None = None,
    causal: bool = False,
    style: str = "light",
    value_range: tuple[float, float] = (-2.0, 2.0),
    step: float = 0.05,
    max_d_k: int = 64,
    asynchronous: bool = True,
    dpi: float = 100,
) -> Playground:
    """The whole picture of lesson 07, with a slider for every number.

    Four panels (:func:`attnlib.plots.attention_figure` with ``spread_labels=True``, so that
    labels of arrows that end close together do not overlap): the embeddings, the raw scores
    ``Q Kᵀ``, the weights and the contextualized vectors. An x and a y slider for every token's
    embedding, a d_k slider, a causal-mask toggle, a light/dark toggle and a reset button.

    The d_k slider only sets the scale ``1/√d_k`` of the scores: the vectors stay 2D, so it shows
    what the scale of another d_k would do to these scores (a temperature). The real dimension
    is varied by :func:`scaling_explorer`.

    Parameters
    ----------
    tokens : sequence of str, optional
        Token names; with ``embeddings``, 1 to 8 of them. Default: the four tokens of
        :func:`attnlib.examples.four_tokens_2d`, whose first picture is exactly lesson 07's.
    embeddings : array_like, shape (n, 2), optional
    W_q, W_k : array_like, shape (2, d), optional
        Query and key projections (identity by default).
    W_v : array_like, shape (2, 2), optional
        Value projection (identity by default); the values must be 2D to be drawn.
    d_k : int, optional
        Start value of the d_k slider; by default the queries' dimension (2).
    causal : bool
        Start with the causal mask on.
    style : {"light", "dark"}
    value_range : (float, float)
        Range of the embedding sliders (widened to hold the embeddings given).
    step : float
        Step of the embedding sliders (and of one arrow-key press).
    max_d_k : int
        Largest value of the d_k slider.
    asynchronous : bool
        Render on a background thread, coalescing fast moves (the default, for notebooks); False
        renders inside every change (for tests).
    dpi : float
        Pixels per inch of the picture.

    Returns
    -------
    Playground
    """
    example = examples.four_tokens_2d()
    if (tokens is None) != (embeddings is None):
        raise ValueError("give both tokens and embeddings, or neither (for lesson 07's four tokens)")
    if tokens is None:
        tokens, embeddings = example.tokens, example.X
    identity = np.eye(2)
    return Playground(
        tokens,
        embeddings,
        identity if W_q is None else W_q,
        identity if W_k is None else W_k,
        identity if W_v is None else W_v,
        d_k=d_k,
        causal=causal,
        style=style,
        value_range=value_range,
        step=step,
        max_d_k=max_d_k,
        asynchronous=asynchronous,
        dpi=dpi,
    )


def _steady(
    current: tuple[float, float], needed: tuple[float, float], *, pad: float = 0.2, minimum_span: float = 0.0
) -> tuple[float, float]:
    """Limits that stay put while the content fits: a dragged arrow or a recoloured cell then
    changes alone, not the whole panel. New limits only when the content leaves the current ones
    or fills less than 40 % of them; then with ``pad`` (a share of the span) on each side."""
    low, high = current
    need_low, need_high = needed
    span = high - low
    if low <= need_low and need_high <= high and (need_high - need_low) >= 0.4 * span:
        return current
    need_span = max(need_high - need_low, minimum_span)
    return (need_low - pad * need_span, need_high + pad * need_span)


# --- why √d_k (lesson 04) ---------------------------------------------------------------------


class ScalingExplorer(Explorer):
    """Random queries and keys of dimension d_k: raw vs scaled scores and weights.

    Use :func:`scaling_explorer` to make one.

    Attributes
    ----------
    sliders : dict
        ``"d_k"``: a selection slider over :data:`SCALING_D_K`.
    new_draw : ipywidgets.Button
        Draws other random vectors (the next seed).
    seed : int
        The seed of the vectors drawn now.
    view : attnlib.plots.ScalingFigure
    stats : attnlib.scaling.ScalingStatistics
        What the figure shows.
    """

    summary = "Why √d_k: a d_k slider over random queries and keys"

    def __init__(
        self, *, d_k: int, n_queries: int, n_keys: int, seed: int, style: str, asynchronous: bool, dpi: float
    ) -> None:
        super().__init__(asynchronous=asynchronous, dpi=dpi)
        if d_k not in SCALING_D_K:
            raise ValueError(f"d_k must be one of {SCALING_D_K}, got {d_k!r}")
        plots.check_style(style)
        self.n_queries, self.n_keys, self.seed, self.style = n_queries, n_keys, int(seed), style
        slider = w.SelectionSlider(
            options=list(SCALING_D_K), value=d_k, description="d_k (dimension of q and k)",
            style=_WIDE, continuous_update=True, layout=w.Layout(width="480px"),
        )  # fmt: skip
        slider.add_class("attnlib-dk")
        self.sliders = {"d_k": slider}
        self.new_draw = w.Button(description="new random vectors", icon="refresh")
        self.new_draw.on_click(lambda _button: self._next_seed())
        self.view: plots.ScalingFigure | None = None
        self.stats: ScalingStatistics | None = None
        self._view_seed: int | None = None
        self.update()
        self._observe(slider)
        self.widget = w.VBox([w.HBox([slider, self.new_draw]), self.readout, self.message, self.image])
        self.widget.add_class("attnlib-scaling")

    def _next_seed(self) -> None:
        with self._render_lock:
            self.seed += 1
        self._changed()

    def _render(self) -> bytes:
        d_k = int(self.sliders["d_k"].value)
        if self.view is None or self.renderer is None or self._view_seed != self.seed:
            self.view = plots.scaling_figure(
                d_k, n_queries=self.n_queries, n_keys=self.n_keys, seed=self.seed, style=self.style
            )
            self.renderer = plots.FigureRenderer(self.view.figure, self.view.dynamic_artists(), dpi=self.dpi)
            self._view_seed = self.seed
            stats = scaling_statistics(d_k, n_queries=self.n_queries, n_keys=self.n_keys, seed=self.seed)
        else:
            stats = plots.update_scaling_figure(self.view, d_k)
        self.stats = stats
        self.readout.value = _scaling_readout(stats, self.seed)
        return self.renderer.png()


def _scaling_readout(stats: ScalingStatistics, seed: int) -> str:
    n_q, n_k = stats.raw.shape
    rows = [
        ("variance of the scores", stats.raw_variance, stats.scaled_variance, ".2f"),
        ("largest weight (mean over queries)", stats.raw_max_weight, stats.scaled_max_weight, ".3f"),
        (f"entropy, nats (uniform: {math.log(n_k):.3f})", stats.raw_entropy, stats.scaled_entropy, ".3f"),
        ("gradient size |∂softmax/∂s|", stats.raw_jacobian_norm, stats.scaled_jacobian_norm, ".3f"),
    ]
    body = "".join(
        f"<tr><td>{name}</td><td>{raw:{fmt}}</td><td>{scaled:{fmt}}</td></tr>"
        for name, raw, scaled, fmt in rows
    )
    return (
        f'<div style="{_READOUT_STYLE}">d_k = {stats.d_k}: {n_q} random queries · {n_k} random keys '
        f"(seed {seed}), scale 1/√d_k = {1 / math.sqrt(stats.d_k):.4f}<table>"
        f"<tr><th></th><th>raw q·k</th><th>scaled q·k/√d_k</th></tr>{body}</table></div>"
    )


def scaling_explorer(
    d_k: int = 64,
    *,
    n_queries: int = 256,
    n_keys: int = 8,
    seed: int = 0,
    style: str = "light",
    asynchronous: bool = True,
    dpi: float = 100,
) -> ScalingExplorer:
    """Why divide by √d_k: a d_k slider (1 … 1024) over seeded random queries and keys.

    The picture is :func:`attnlib.plots.scaling_figure`: the spread of the raw and the scaled
    scores, one query's weights over the keys with and without scaling, and the variance against
    d_k. The readout gives the numbers: variance, largest weight, entropy and the size of the
    softmax's gradient, raw and scaled.

    Parameters
    ----------
    d_k : int
        Start value, one of :data:`SCALING_D_K`.
    n_queries, n_keys : int
    seed : int
        Seed of the random vectors (the button draws the next one).
    style : {"light", "dark"}
    asynchronous : bool
        See :func:`playground`.
    dpi : float

    Returns
    -------
    ScalingExplorer
    """
    return ScalingExplorer(
        d_k=d_k,
        n_queries=n_queries,
        n_keys=n_keys,
        seed=seed,
        style=style,
        asynchronous=asynchronous,
        dpi=dpi,
    )


# --- softmax with a temperature (lesson 05) ---------------------------------------------------


class SoftmaxExplorer(Explorer):
    """Scores and a temperature in, softmax weights out, drawn as bars.

    Use :func:`softmax_explorer` to make one.

    Attributes
    ----------
    labels : tuple of str
    sliders : dict
        ``"score <label>"`` for every key and ``"temperature"`` (a log slider, 0.1 … 10).
    masks : dict of str to ipywidgets.Checkbox
        ``"mask <label>"``: hide that key (its score becomes −∞, its weight 0).
    limits : (float, float)
        The y limits of the scores panel (fixed, to hold every slider value).
    view : attnlib.plots.SoftmaxFigure
    scores : numpy.ndarray
        The scores drawn (``-inf`` where masked).
    weights : numpy.ndarray
        ``softmax(scores / temperature)``, as drawn.
    """

    summary = "Softmax explorer: scores and a temperature"

    def __init__(
        self,
        scores: npt.ArrayLike,
        labels: Sequence[str],
        *,
        temperature: float,
        value_range: tuple[float, float],
        style: str,
        asynchronous: bool,
        dpi: float,
    ) -> None:
        super().__init__(asynchronous=asynchronous, dpi=dpi)
        values = as_real_array(scores, "scores").astype(np.float64)
        self.labels = tuple(str(label) for label in labels)
        if values.ndim != 1 or not 1 <= values.size <= 10 or values.size != len(self.labels):
            raise ValueError(
                f"give 1 to 10 scores, one per label: scores {values.shape}, {len(self.labels)} labels"
            )
        if not 0.1 <= temperature <= 10:
            raise ValueError(f"temperature must be between 0.1 and 10, got {temperature}")
        plots.check_style(style)
        self.style = style
        low = min(value_range[0], math.floor(float(values.min())))
        high = max(value_range[1], math.ceil(float(values.max())))
        self.limits = plots.score_limits((low, high))
        self.sliders = {}
        self.masks: dict[str, w.Checkbox] = {}
        rows = []
        for i, (label, value) in enumerate(zip(self.labels, values, strict=True)):
            slider = w.FloatSlider(
                value=float(value), min=low, max=high, step=0.1, description=f"score {label}",
                readout_format=".1f", style=_WIDE, continuous_update=True, layout=w.Layout(width="340px"),
            )  # fmt: skip
            slider.add_class(f"attnlib-score-{i}")
            mask = w.Checkbox(
                value=False, description=f"mask {label}", indent=False, layout=w.Layout(width="120px")
            )
            self.sliders[f"score {label}"] = slider
            self.masks[f"mask {label}"] = mask
            rows.append(w.HBox([slider, mask]))
        temperature_slider = w.FloatLogSlider(
            value=float(temperature), base=10, min=-1, max=1, step=0.02, description="temperature T",
            readout_format=".2f", style=_WIDE, continuous_update=True, layout=w.Layout(width="460px"),
        )  # fmt: skip
        temperature_slider.add_class("attnlib-temperature")
        self.sliders["temperature"] = temperature_slider
        self.view: plots.SoftmaxFigure | None = None
        self.scores = values
        self.weights = softmax(values)
        self.update()
        self._observe(*self.sliders.values(), *self.masks.values())
        self.widget = w.VBox([*rows, temperature_slider, self.readout, self.message, self.image])
        self.widget.add_class("attnlib-softmax")

    def compute(self) -> tuple[np.ndarray, float]:
        """The scores (``-inf`` where masked) and the temperature, as the sliders set them."""
        scores = np.array(
            [
                -np.inf if self.masks[f"mask {label}"].value else float(self.sliders[f"score {label}"].value)
                for label in self.labels
            ]
        )
        return scores, float(self.sliders["temperature"].value)

    def _render(self) -> bytes:
        scores, temperature = self.compute()
        if self.view is None or self.renderer is None:
            self.view = plots.softmax_figure(
                scores, self.labels, temperature=temperature, style=self.style, limits=self.limits
            )
            self.renderer = plots.FigureRenderer(self.view.figure, self.view.dynamic_artists(), dpi=self.dpi)
            weights = softmax(scores / temperature)
        else:
            weights = plots.update_softmax_figure(
                self.view, scores, temperature=temperature, limits=self.limits
            )
        self.scores, self.weights = scores, weights
        self.readout.value = _softmax_readout(self.labels, scores, temperature, weights)
        return self.renderer.png()


def _softmax_readout(
    labels: Sequence[str], scores: np.ndarray, temperature: float, weights: np.ndarray
) -> str:
    cells = "".join(
        f"<tr><td>{html.escape(label)}</td><td>{plots.format_cell(s)}</td>"
        f"<td>{plots.format_cell(s / temperature)}</td><td>{p:.4f}</td></tr>"
        for label, s, p in zip(labels, scores, weights, strict=True)
    )
    nonzero = weights[weights > 0]
    entropy = float(-(nonzero * np.log(nonzero)).sum())
    return (
        f'<div style="{_READOUT_STYLE}">T = {temperature:.2f} &nbsp;·&nbsp; sum of weights '
        f"{weights.sum():.4f} &nbsp;·&nbsp; entropy {entropy:.3f} nats<table>"
        f"<tr><th>key</th><th>score s</th><th>s / T</th><th>weight</th></tr>{cells}</table></div>"
    )


def softmax_explorer(
    scores: npt.ArrayLike | None = None,
    labels: Sequence[str] | None = None,
    *,
    temperature: float = 1.0,
    value_range: tuple[float, float] = (-10.0, 10.0),
    style: str = "light",
    asynchronous: bool = True,
    dpi: float = 100,
) -> SoftmaxExplorer:
    """Move scores and a temperature T and watch ``softmax(s / T)``; mask a key to hide it.

    The picture is :func:`attnlib.plots.softmax_figure`: the scores and the weights as bars.

    Parameters
    ----------
    scores : array_like, shape (n,), optional
        Start scores, 1 to 10 of them. Default: the raw scores ``s·h`` of
        :func:`attnlib.examples.one_query_three_vectors` (lesson 03), labelled ``h1 h2 h3``.
    labels : sequence of str, optional
        One per score (default ``k1``, ``k2``, … or ``h1 h2 h3`` for the default scores).
    temperature : float
        Start temperature, 0.1 to 10.
    value_range : (float, float)
        Range of the score sliders (widened to hold the scores given).
    style : {"light", "dark"}
    asynchronous : bool
        See :func:`playground`.
    dpi : float

    Returns
    -------
    SoftmaxExplorer
    """
    if scores is None:
        example = examples.one_query_three_vectors()
        scores = raw_scores(example.Q, example.K)
        labels = labels or ("h1", "h2", "h3")
    values = np.asarray(scores)
    if labels is None:
        labels = [f"k{i + 1}" for i in range(values.size)]
    return SoftmaxExplorer(
        values,
        labels,
        temperature=temperature,
        value_range=value_range,
        style=style,
        asynchronous=asynchronous,
        dpi=dpi,
    )


# --- two vectors (lessons 01 and 03) ----------------------------------------------------------


class SimilarityExplorer(Explorer):
    """Two 2D vectors from sliders: their dot product, cosine and angle, drawn.

    Use :func:`similarity_explorer` to make one.

    Attributes
    ----------
    labels : (str, str)
    sliders : dict
        ``"<label> x"`` and ``"<label> y"`` for both vectors.
    limits : (float, float)
        The axis limits of the picture (fixed, to hold every slider value).
    view : attnlib.plots.SimilarityFigure
    vectors : numpy.ndarray, shape (2, 2)
        The two vectors drawn, one per row.
    """

    summary = "Similarity explorer: two vectors, their dot product, cosine and angle"

    def __init__(
        self,
        a: npt.ArrayLike,
        b: npt.ArrayLike,
        *,
        labels: Sequence[str],
        value_range: tuple[float, float],
        step: float,
        style: str,
        asynchronous: bool,
        dpi: float,
    ) -> None:
        super().__init__(asynchronous=asynchronous, dpi=dpi)
        u, v = plots._two_vectors(a, b)
        if len(labels) != 2:
            raise ValueError(f"labels must name the two vectors, got {len(labels)} labels")
        plots.check_style(style)
        self.labels = (str(labels[0]), str(labels[1]))
        self.style = style
        low = min(value_range[0], math.floor(min(u.min(), v.min())))
        high = max(value_range[1], math.ceil(max(u.max(), v.max())))
        self.limits = plots.similarity_limits((low, high))
        self.sliders = {}
        rows = []
        for i, (label, vector) in enumerate(zip(self.labels, (u, v), strict=True)):
            pair = []
            for j, axis in enumerate("xy"):
                slider = w.FloatSlider(
                    value=float(vector[j]), min=low, max=high, step=step, description=axis, style=_NARROW,
                    readout_format=".2f", continuous_update=True, layout=w.Layout(width="300px"),
                )  # fmt: skip
                slider.add_class(f"attnlib-{axis}-{i}")
                self.sliders[f"{label} {axis}"] = slider
                pair.append(slider)
            name = w.HTML(f"<b>{html.escape(label)}</b>", layout=w.Layout(width="60px"))
            rows.append(w.HBox([name, *pair]))
        self.view: plots.SimilarityFigure | None = None
        self.vectors = np.stack([u, v])
        self.update()
        self._observe(*self.sliders.values())
        self.widget = w.VBox([*rows, self.readout, self.message, self.image])
        self.widget.add_class("attnlib-similarity")

    def compute(self) -> np.ndarray:
        """The two vectors in the sliders, one per row."""
        return np.array(
            [[self.sliders[f"{label} {axis}"].value for axis in "xy"] for label in self.labels],
            dtype=np.float64,
        )

    def _render(self) -> bytes:
        pair = self.compute()
        if self.view is None or self.renderer is None:
            self.view = plots.similarity_figure(
                pair[0], pair[1], labels=self.labels, style=self.style, limits=self.limits
            )
            self.renderer = plots.FigureRenderer(self.view.figure, self.view.dynamic_artists(), dpi=self.dpi)
        else:
            plots.update_similarity_figure(self.view, pair[0], pair[1], limits=self.limits)
        self.vectors = pair
        self.readout.value = _similarity_readout(self.labels, pair)
        return self.renderer.png()


def _similarity_readout(labels: Sequence[str], pair: np.ndarray) -> str:
    sim = similarity(pair[0], pair[1])
    a, b = (html.escape(label) for label in labels)
    parts = [
        f"{a} = ({pair[0, 0]:+.2f}, {pair[0, 1]:+.2f})",
        f"{b} = ({pair[1, 0]:+.2f}, {pair[1, 1]:+.2f})",
        f"{a}·{b} = {pair[0, 0]:.2f}×{pair[1, 0]:.2f} + {pair[0, 1]:.2f}×{pair[1, 1]:.2f} = {sim.dot:.4f}",
        f"|{a}| = {sim.norm_a:.4f}, |{b}| = {sim.norm_b:.4f}",
    ]
    if sim.cosine is None or sim.angle_degrees is None:
        parts.append("cos θ and θ are undefined: a zero vector has no direction")
    else:
        parts.append(f"cos θ = {sim.cosine:.4f}, θ = {sim.angle_degrees:.2f}°")
    return f'<div style="{_READOUT_STYLE}">' + "<br>".join(parts) + "</div>"


def similarity_explorer(
    a: npt.ArrayLike | None = None,
    b: npt.ArrayLike | None = None,
    *,
    labels: Sequence[str] = ("a", "b"),
    value_range: tuple[float, float] = (-1.5, 1.5),
    step: float = 0.05,
    style: str = "light",
    asynchronous: bool = True,
    dpi: float = 100,
) -> SimilarityExplorer:
    """Two 2D vectors from sliders: their dot product, cosine similarity and angle, drawn.

    The picture is :func:`attnlib.plots.similarity_figure` with the axis limits of
    :func:`similarity_limits`, fixed so that the axes do not move while a vector does.

    Parameters
    ----------
    a, b : array_like, shape (2,), optional
        Start vectors. Default: ``Token-1`` and ``Token-2`` of
        :func:`attnlib.examples.four_tokens_2d`.
    labels : (str, str)
    value_range : (float, float)
        Range of the sliders (widened to hold the vectors given).
    step : float
    style : {"light", "dark"}
    asynchronous : bool
        See :func:`playground`.
    dpi : float

    Returns
    -------
    SimilarityExplorer
    """
    example = examples.four_tokens_2d()
    if (a is None) != (b is None):
        raise ValueError("give both vectors a and b, or neither")
    if a is None or b is None:
        a, b = example.X[0], example.X[1]
    return SimilarityExplorer(
        a,
        b,
        labels=labels,
        value_range=value_range,
        step=step,
        style=style,
        asynchronous=asynchronous,
        dpi=dpi,
    )
