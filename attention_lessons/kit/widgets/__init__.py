"""The explorers' base: move an embedding, d_k, a score or a temperature and watch attention respond.

Each lesson's explorer lives in its lesson's folder, as ``widgets.py`` beside its one ES module::

    from attention_lessons.l07_whole_picture import widgets
    widgets.playground()            # lesson 07: the whole picture, a slider for every number

and likewise in every lesson that has an explorer: its manifest (``lesson.toml``, ``explorers``) names
the functions of its ``widgets.py`` that make one. This package holds what they share:
:class:`Explorer` (:mod:`.base`), the checked inputs (:mod:`.inputs`, :mod:`.sliders`), the ES-module
loader (:mod:`.modules`), the re-run cleanup (:mod:`.cells`) and the shared ES modules in ``js/``.

Each explorer is an `anywidget <https://anywidget.dev>`_ (an ipywidgets ``DOMWidget``): displaying
it shows native sliders (keyboard-operable) and an SVG picture, the same panels, titles, labels
and annotated cells as the lesson's static figure, drawn with :mod:`attention_lessons.kit.plots`.

How they work
-------------
- **Python holds the state** as traitlets: the inputs (embeddings, d_k, scores, masks, …), synced
  with the browser, and what only Python can compute: random draws (the scaling explorer), a
  training replay, a real model's heads, the states of the online softmax. What the browser's
  mirror computes and draws is not computed twice: each explorer offers it as an on-demand
  property, computed with attnlib when read (``Playground.steps``, ``SoftmaxExplorer.weights``,
  ``SimilarityExplorer.measures``, ``MultiHeadExplorer.heads``, ``RopeExplorer.rotated``). Each
  explorer's class docstring lists its traits.
- **The browser draws.** Each explorer's front end is one plain ES module in its lesson's folder
  (no bundler, no build step), importing the shared ones of ``js/``: ``mirror.js`` repeats the
  little arithmetic of attention (dot products, Q Kᵀ, softmax with the max trick, masks, the
  weighted sum, entropy, cosine), so a slider move is redrawn inside its input event, before
  anything reaches the kernel, and also in a static page with no kernel at all. ``svg.js`` draws
  heatmaps, arrows, bars and axes; ``colors.js`` looks colours up in matplotlib's colour maps
  (sent from Python as lookup tables) and picks, for every number on a cell, black or white text,
  whichever contrasts more (at least 4.5:1). ``tests/kit/js`` checks the mirror against attnlib with
  Node's test runner, and each lesson's ``tests/lessons/lNN_slug/*.test.mjs`` its explorers.
- **Precomputed where the input is random.** The scaling explorer's d_k slider selects among
  results that Python computed with attnlib for every d_k of
  :data:`attention_lessons.l04_scaling.scaling.D_K_VALUES` (histogram counts, one query's weights, the
  statistics); a new draw recomputes them.
- **Loading without a bundler.** anywidget imports an explorer's ``_esm`` text as a single module
  (from a ``blob:`` URL), where ``import … from "../kit/widgets/js/mirror.js"`` cannot resolve.
  When Python reads an explorer's module it replaces each such relative path by a ``data:`` URL
  holding the imported module, prepared the same way
  (:func:`attention_lessons.kit.widgets.modules.module_text`). The files stay ordinary ES modules that Node
  imports as they are, and a module shared by two others becomes the same URL, evaluated once.
- **Traits** (each class docstring has the details). Inputs, synced and set by the front end:
  ``Playground.embeddings`` (n × [x, y]), ``.d_k``, ``.causal``; ``SoftmaxExplorer.scores``,
  ``.masks``, ``.temperature``; ``SimilarityExplorer.vectors`` ([[x, y], [x, y]]);
  ``ScalingExplorer.d_k``, ``.seed``; every explorer's ``style_name`` ("light"/"dark"; not
  ``style``, which ipywidgets reserves). Computed by Python and synced: ``ScalingExplorer.table``
  (every d_k of a draw), ``TrainingReplay.table``, ``HeadExplorer.sentences``,
  ``OnlineSoftmaxExplorer.tables``, ``GenerationExplorer.runs``. The playground and the two-head
  explorer share their embedding traits (:class:`attention_lessons.kit.widgets.sliders.EmbeddingExplorer`).
- **In the page** every control is a native ``<input type="range">`` (or checkbox, select,
  button) marked ``data-control``, and every number drawn is an SVG ``<text>`` whose
  ``data-quantity``, ``data-row``, ``data-col`` and ``data-value`` (the full value) say what it
  is, for screen readers and tests.
- **Freed on re-run.** In JupyterLab and Notebook 7 an explorer remembers the cell that made it;
  running that cell again closes the explorers of its previous run
  (:mod:`attention_lessons.kit.widgets.cells`).
  ``close()`` frees one by hand.
"""

from __future__ import annotations

from attention_lessons.kit.widgets.base import Explorer
from attention_lessons.kit.widgets.modules import module_text

__all__ = ["Explorer", "module_text"]
