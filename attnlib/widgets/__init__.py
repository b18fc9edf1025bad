"""Interactive explorers: move an embedding, d_k, a score or a temperature and watch attention respond.

    from attnlib import widgets
    widgets.playground()            # lesson 07: the whole picture, a slider for every number
    widgets.scaling_explorer()      # lesson 04: why divide by √d_k
    widgets.softmax_explorer()      # lesson 05: scores, temperature and masks → weights
    widgets.similarity_explorer()   # lessons 01 and 03: dot product, cosine and angle
    widgets.multi_head_explorer(...)  # lesson 09: two heads, their concatenation and W_o
    widgets.rope_explorer()         # lesson 10: RoPE turns a query and a key by their positions
    widgets.training_replay(run)    # lesson 11: a saved training run, step by step
    widgets.online_softmax_explorer()  # lesson 12: one query row read block by block
    widgets.head_explorer()         # lesson 13: every head of a real model (all-MiniLM-L6-v2)
    widgets.induction_replay(...)   # lesson 14: a two-layer decoder's heads while it trains
    widgets.generation_explorer()     # lesson 15: generation, the KV cache, windows, sinks

Each explorer is an `anywidget <https://anywidget.dev>`_ (an ipywidgets ``DOMWidget``): displaying
it shows native sliders (keyboard-operable) and an SVG picture, the same panels, titles, labels
and annotated cells as the lesson's static figure from :mod:`attnlib.plots`.

How they work
-------------
- **Python holds the state** as traitlets: the inputs (embeddings, d_k, scores, masks, …), synced
  with the browser, and what only Python can compute: random draws (the scaling explorer), a
  training replay, a real model's heads, the states of the online softmax. What the browser's
  mirror computes and draws is not computed twice: each explorer offers it as an on-demand
  property, computed with attnlib when read (``Playground.steps``, ``SoftmaxExplorer.weights``,
  ``SimilarityExplorer.measures``, ``MultiHeadExplorer.heads``, ``RopeExplorer.rotated``). Each
  explorer's class docstring lists its traits.
- **The browser draws.** Each explorer's front end is one plain ES module in ``js/`` (no bundler,
  no build step): ``mirror.js`` repeats the little arithmetic of attention (dot products, Q Kᵀ,
  softmax with the max trick, masks, the weighted sum, entropy, cosine), so a slider move is
  redrawn inside its input event, before anything reaches the kernel, and also in a static page
  with no kernel at all. ``svg.js`` draws heatmaps, arrows, bars and axes; ``colors.js`` looks
  colours up in matplotlib's colour maps (sent from Python as lookup tables) and picks, for every
  number on a cell, black or white text, whichever contrasts more (at least 4.5:1).
  ``tests/js`` checks the mirror against attnlib with Node's test runner.
- **Precomputed where the input is random.** The scaling explorer's d_k slider selects among
  results that Python computed with attnlib for every d_k of :data:`attnlib.scaling.D_K_VALUES`
  (histogram counts, one query's weights, the statistics); a new draw recomputes them.
- **Loading without a bundler.** anywidget imports an explorer's ``_esm`` text as a single module
  (from a ``blob:`` URL), where ``import … from "./mirror.js"`` cannot resolve. When Python reads
  an explorer's module it replaces each such relative path by a ``data:`` URL holding the imported
  module, prepared the same way (:func:`attnlib.widgets.modules.module_text`). The files stay
  ordinary ES modules that Node imports as they are, and a module shared by two others becomes
  the same URL, evaluated once.
- **Traits** (each class docstring has the details). Inputs, synced and set by the front end:
  ``Playground.embeddings`` (n × [x, y]), ``.d_k``, ``.causal``; ``SoftmaxExplorer.scores``,
  ``.masks``, ``.temperature``; ``SimilarityExplorer.vectors`` ([[x, y], [x, y]]);
  ``ScalingExplorer.d_k``, ``.seed``; every explorer's ``style_name`` ("light"/"dark"; not
  ``style``, which ipywidgets reserves). Computed by Python and synced: ``ScalingExplorer.table``
  (every d_k of a draw), ``TrainingReplay.table``, ``HeadExplorer.sentences``,
  ``OnlineSoftmaxExplorer.tables``, ``GenerationExplorer.runs``. The playground and the two-head
  explorer share their embedding traits (:class:`attnlib.widgets.sliders.EmbeddingExplorer`).
- **In the page** every control is a native ``<input type="range">`` (or checkbox, select,
  button) marked ``data-control``, and every number drawn is an SVG ``<text>`` whose
  ``data-quantity``, ``data-row``, ``data-col`` and ``data-value`` (the full value) say what it
  is, for screen readers and tests.
- **Freed on re-run.** In JupyterLab and Notebook 7 an explorer remembers the cell that made it;
  running that cell again closes the explorers of its previous run (:mod:`attnlib.widgets.cells`).
  ``close()`` frees one by hand.
"""

from __future__ import annotations

from attnlib.plots import score_limits, similarity_limits
from attnlib.widgets.base import Explorer
from attnlib.widgets.generation import GenerationExplorer, generation_explorer
from attnlib.widgets.heads import HeadExplorer, head_explorer
from attnlib.widgets.induction_replay import InductionReplay, induction_replay
from attnlib.widgets.multihead import MultiHeadExplorer, multi_head_explorer
from attnlib.widgets.online_softmax import OnlineSoftmaxExplorer, online_softmax_explorer
from attnlib.widgets.playground import Playground, playground
from attnlib.widgets.rope import RopeExplorer, rope_explorer
from attnlib.widgets.scaling import ScalingExplorer, scaling_explorer
from attnlib.widgets.similarity import SimilarityExplorer, similarity_explorer
from attnlib.widgets.softmax import SoftmaxExplorer, softmax_explorer
from attnlib.widgets.training import TrainingReplay, training_replay

__all__ = [
    "Explorer",
    "GenerationExplorer",
    "HeadExplorer",
    "InductionReplay",
    "MultiHeadExplorer",
    "OnlineSoftmaxExplorer",
    "Playground",
    "RopeExplorer",
    "ScalingExplorer",
    "SimilarityExplorer",
    "SoftmaxExplorer",
    "TrainingReplay",
    "generation_explorer",
    "head_explorer",
    "induction_replay",
    "multi_head_explorer",
    "online_softmax_explorer",
    "playground",
    "rope_explorer",
    "scaling_explorer",
    "score_limits",
    "similarity_explorer",
    "similarity_limits",
    "softmax_explorer",
    "training_replay",
]
