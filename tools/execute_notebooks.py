"""Execute lessons top to bottom in a fresh kernel and save them with their outputs.

    .venv/bin/python tools/execute_notebooks.py notebooks/03_raw_scores.ipynb [...]
    .venv/bin/python tools/execute_notebooks.py --out build/executed notebooks/*.ipynb

Each notebook runs in a new ``python3`` kernel with ``notebooks/`` as the working directory,
exactly as nbval will re-run it; execution timings are not stored in the metadata. A notebook
whose execution fails is not saved.

Without ``--out`` each lesson is overwritten in place with no widget state (what is committed).
With ``--out DIR`` the lesson is left alone and its executed copy, with the explorers' widget
state stored, is written to ``DIR``: the stage that ``make book`` reads, so that the book's
explorers respond with no kernel. The script fails when an explorer shown in such a
copy has no stored state.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def run(path: Path, *, store_widget_state: bool) -> nbformat.NotebookNode:
    """The notebook at ``path``, run top to bottom in a fresh kernel.

    Parameters
    ----------
    path
        The lesson; its folder is the kernel's working directory.
    store_widget_state
        Keep the state of every widget in the notebook's metadata (for static pages).
    """
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:  # no timings: a re-run changes only what the code prints
        cell.metadata.pop("execution", None)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=store_widget_state,
        record_timing=False,
    )
    client.execute()
    # one output per stream: how print()'s text arrives in chunks varies from run to run
    CoalesceStreamsPreprocessor().preprocess(notebook, {})
    nbformat.validate(notebook)
    return notebook


def widget_views(notebook: nbformat.NotebookNode) -> list[str]:
    """The model ids of every widget shown in the outputs."""
    return [
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if WIDGET_VIEW in output.get("data", {})
    ]


def check_widget_state(notebook: nbformat.NotebookNode, name: str) -> None:
    """Fail unless every widget shown in ``notebook`` has a stored state (else a page shows nothing)."""
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    missing = [model_id for model_id in widget_views(notebook) if model_id not in state]
    if missing:
        raise RuntimeError(f"{name}: no stored widget state for the widgets {missing}")


def execute_in_place(path: Path) -> None:
    """Run ``path`` in a fresh kernel and overwrite it with the executed notebook, no widget state."""
    nbformat.write(run(path, store_widget_state=False), path)


def execute_to(path: Path, out: Path) -> None:
    """Write ``out / path.name``: the lesson executed with its widget state; ``path`` is not changed."""
    notebook = run(path, store_widget_state=True)
    check_widget_state(notebook, path.name)
    out.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, out / path.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument(
        "--out", type=Path, help="write executed copies with widget state here instead of in place"
    )
    args = parser.parse_args(argv)
    for path in args.notebooks:
        print(f"executing {path}", flush=True)
        if args.out is None:
            execute_in_place(path)
        else:
            execute_to(path, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
