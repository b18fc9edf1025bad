"""Execute lessons top to bottom in a fresh kernel and save them with their outputs.

    .venv/bin/python tools/execute_notebooks.py notebooks/03_raw_scores.ipynb [...]

Each notebook runs in a new ``python3`` kernel with ``notebooks/`` as the working directory,
exactly as nbval will re-run it; neither widget state nor execution timings are stored in
the metadata. A notebook whose
execution fails is not saved.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path: Path) -> None:
    """Run ``path`` in a fresh kernel and overwrite it with the executed notebook."""
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
        store_widget_state=False,
        record_timing=False,
    )
    client.execute()
    nbformat.validate(notebook)
    nbformat.write(notebook, path)


def main(paths: list[str]) -> int:
    for name in paths:
        print(f"executing {name}", flush=True)
        execute(Path(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
