"""Free the explorers of a notebook cell when that cell runs again.

JupyterLab and Notebook 7 put the id of the cell being run into the metadata of their execute
request (``cellId``); ipykernel keeps that request as the parent of everything the cell does. An
explorer remembers the cell and the request that made it; when a later request of the same cell
makes an explorer, the earlier ones are closed (their comm and their front-end views go, and
ipywidgets forgets them), so that re-running a cell does not pile up explorers. Outside a kernel,
or in a front end that sends no cell id, nothing is freed automatically: call ``close()``.
"""

from __future__ import annotations

import weakref
from typing import Protocol

__all__ = ["adopt", "current_cell"]


class Closable(Protocol):
    def close(self) -> None: ...


#: For each cell id: the request that last made explorers there, and those explorers.
_EXPLORERS: dict[str, tuple[str, list[weakref.ref[Closable]]]] = {}


def current_cell() -> tuple[str, str] | None:
    """``(cell id, request id)`` of the cell running now, or None outside a notebook cell."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    parent = kernel.get_parent() or {}
    cell_id = (parent.get("metadata") or {}).get("cellId")
    request_id = (parent.get("header") or {}).get("msg_id")
    if not cell_id or not request_id:
        return None
    return str(cell_id), str(request_id)


def adopt(explorer: Closable, cell: tuple[str, str] | None = None) -> None:
    """Remember ``explorer`` as made by ``cell`` (default: the cell running now).

    If an earlier run of the same cell made explorers, close them first. Explorers made by the
    same run (several in one cell) are all kept.
    """
    cell = current_cell() if cell is None else cell
    if cell is None:
        return
    cell_id, request_id = cell
    previous_request, explorers = _EXPLORERS.get(cell_id, (request_id, []))
    if previous_request != request_id:
        for ref in explorers:
            earlier = ref()
            if earlier is not None:
                earlier.close()
        explorers = []
    explorers = [ref for ref in explorers if ref() is not None]
    explorers.append(weakref.ref(explorer))
    _EXPLORERS[cell_id] = (request_id, explorers)
