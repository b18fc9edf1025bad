"""The contract every lesson's explorer keeps: an anywidget with its summary, its colours, a module
anywidget loads, a style that refuses a wrong name and a close that frees it.

The explorers come from the lessons: each lesson's manifest names its explorers, and its tests
declare a small example of each class (``EXPLORERS`` in ``tests/lessons/lNN_slug/declared.py``).
Each explorer's own behaviour is tested in its lesson's folder; the front end's arithmetic by
Node (``*.test.mjs``, run by tests/kit/js/test_node.py).
"""

from __future__ import annotations

import base64
import importlib
import re

import anywidget
import pytest
from conftest import declared

from attention_lessons.kit import widgets
from attention_lessons.kit.plots import STYLES
from attention_lessons.kit.widgets.base import colormap_table, theme
from attention_lessons.manifest import lessons

pytestmark = pytest.mark.filterwarnings("error")


# --- what every explorer promises -----------------------------------------------------------------

#: How to make each explorer of every lesson, small, in ``style``, as the lessons' tests declare it;
#: the head explorer needs the real model (the ``model`` fixture: it skips where its files are missing).
EXPLORERS = {kind: make for examples in declared("EXPLORERS").values() for kind, make in examples.items()}


def live_widgets() -> set[str]:
    """The model ids of every widget ipywidgets keeps alive (8.1's registry, ``widget._instances``)."""
    from ipywidgets.widgets import widget

    return set(widget._instances)


def imports(esm: str) -> list[str]:
    """Where ``esm`` and every module it carries as a ``data:`` URL import from, at any depth."""
    found = re.findall(r'from\s*"([^"]*)"', esm)
    carried = [url.removeprefix("data:text/javascript;base64,") for url in found if url.startswith("data:")]
    return found + [path for url in carried for path in imports(base64.b64decode(url).decode("utf-8"))]


def test_every_lessons_explorer_is_held_to_the_contract() -> None:
    """Every explorer a lesson's manifest names is made by a class of the lesson's widgets.py, and
    the lesson's tests declare an example of each such class (``EXPLORERS`` in its declared.py)."""
    kinds = set()
    for lesson in lessons():
        if lesson.explorers:
            module = importlib.import_module(f"attention_lessons.{lesson.folder.name}.widgets")
            made = {name: getattr(module, name) for name in lesson.explorers}
            assert all(callable(make) for make in made.values()), f"lesson {lesson.id}: {made}"
            kinds |= {
                kind
                for kind in vars(module).values()
                if isinstance(kind, type)
                and issubclass(kind, widgets.Explorer)
                and kind.__module__ == module.__name__
            }
    undeclared = sorted(kind.__qualname__ for kind in kinds - set(EXPLORERS))
    assert not undeclared, (
        f"explorers without an example: {undeclared}: add it to EXPLORERS in their lesson's "
        "tests/lessons/lNN_slug/declared.py"
    )
    assert set(EXPLORERS) == kinds, "examples of explorers that no lesson names"


@pytest.mark.parametrize("kind", EXPLORERS, ids=lambda kind: kind.__name__)
def test_the_explorer_contract(kind: type[widgets.Explorer], request: pytest.FixtureRequest) -> None:
    """An anywidget with its own summary, both styles' colours and its colour maps, an ES module
    loadable without a bundler, a style that refuses a wrong name, and a close that frees it."""
    before = live_widgets()
    explorer = EXPLORERS[kind]("dark", request)
    assert isinstance(explorer, kind) and isinstance(explorer, anywidget.AnyWidget)
    assert explorer.style_name == "dark"
    # ipywidgets' front end reads a synced "style" or "layout" as a reference to a model
    assert explorer.keys.count("style") == 0 and explorer.get_state()["layout"].startswith("IPY_MODEL_")
    data, _metadata = explorer._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.model_id
    assert kind.summary != widgets.Explorer.summary and data["text/plain"].startswith(kind.summary)
    assert "interactive" in data["text/plain"] and "0x" not in data["text/plain"]
    assert explorer.themes == {style: theme(style) for style in STYLES}
    assert set(explorer.colormaps) == set(kind.colormap_names)
    assert all(table == list(colormap_table(name)) for name, table in explorer.colormaps.items())
    assert "import" in explorer._esm and not [path for path in imports(explorer._esm) if "./" in path]
    with pytest.raises(ValueError, match="style must be one of"):
        explorer.style_name = "sepia"
    assert explorer.style_name == "dark"
    assert live_widgets() - before == {explorer.model_id, explorer.layout.model_id}  # and its Layout
    explorer.close()
    assert live_widgets() == before
    explorer.close()  # a second close is harmless
