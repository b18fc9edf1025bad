"""Export lessons to standalone HTML pages whose explorers respond without a kernel.

    .venv/bin/python tools/export_html.py [--out build/html] [--node-modules node_modules] notebooks/*.ipynb

Each notebook is executed top to bottom in a fresh ``python3`` kernel (working directory: the
notebook's folder) with the widget state stored, then converted with nbconvert's ``lab`` template
(see ``tools/nbconvert_templates/attnlib_static``). The committed notebook is not changed.

Every script a page loads comes from the ``static/`` folder next to it, copied from
``node_modules/`` (``npm ci`` installs the exact versions of package-lock.json): require.js,
MathJax 2, the Jupyter widgets HTML manager (``embed-amd.js``) and anywidget's front end (an AMD
module that require.js loads under the name ``anywidget``). The explorers' own ES modules travel
in the widget state. Links between lessons (``NN_name.ipynb``) point to the exported pages. The
script fails when a page would load anything from another host, or when an explorer in a page
has no stored state.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "nbconvert_templates"
STATIC = "static"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@dataclass(frozen=True)
class Asset:
    """Files of one npm package copied into ``static/``: ``source`` inside the package's folder."""

    package: str
    source: str
    target: str

    def copy(self, node_modules: Path, static: Path) -> None:
        """Copy the file or folder ``source`` to ``target``; a ``*`` pattern copies into ``target``."""
        package = node_modules / self.package
        if not package.is_dir():
            raise FileNotFoundError(f"{package} is missing: run `npm ci` in {ROOT} first")
        target = static / self.target
        target.parent.mkdir(parents=True, exist_ok=True)
        if "*" in self.source:
            target.mkdir(exist_ok=True)
            for path in sorted(package.glob(self.source)):
                shutil.copy2(path, target / path.name)
        elif (package / self.source).is_dir():
            shutil.copytree(package / self.source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(package / self.source, target)


MATHJAX_PARTS = (
    "MathJax.js",
    "config/TeX-AMS_CHTML-full.js",
    "config/Safe.js",
    "extensions",
    "jax/input/TeX",
    "jax/element",
    "jax/output/CommonHTML",
    "fonts/HTML-CSS/TeX/woff",
    "localization/en",
)
ASSETS = (
    Asset("requirejs", "require.js", "require.js"),
    Asset("@jupyter-widgets/html-manager", "dist/embed-amd.js", "html-manager/embed-amd.js"),
    # the Font Awesome files that embed-amd.js loads from its own folder
    *(
        Asset("@jupyter-widgets/html-manager", f"dist/*.{kind}", "html-manager")
        for kind in ("woff", "woff2", "ttf", "eot", "svg")
    ),
    Asset("anywidget", "dist/index.js", "anywidget/index.js"),
    *(Asset("mathjax", part, f"mathjax/{part}") for part in MATHJAX_PARTS),
)
# AMD modules a widget state may name, as require.js paths relative to a page (no ".js")
LOCAL_AMD_MODULES = {"anywidget": f"{STATIC}/anywidget/index"}
EXPORTER_CONFIG = {
    "require_js_url": f"{STATIC}/require.js",
    "mathjax_url": f"{STATIC}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "widget_renderer_url": f"{STATIC}/html-manager/embed-amd.js",
    "extra_template_basedirs": [str(TEMPLATES)],
    "template_name": "attnlib_static",
}
# src="…" / href="…" of elements that make the browser fetch something, and CSS url(…)
FETCHED_URL = re.compile(
    r"<(?:script|link|img|iframe|source)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']"
    r"|url\(\s*[\"']?([^\"')]+)",
    re.IGNORECASE,
)
LESSON_LINK = re.compile(r"""href=(["'])(?![a-z][a-z0-9+.-]*:)([^"'#/]+)\.ipynb(#[^"']*)?\1""")


def copy_assets(node_modules: Path, static: Path) -> None:
    """Copy what the pages load from npm packages into ``static``."""
    for asset in ASSETS:
        asset.copy(node_modules, static)


def execute(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path``, run in a fresh kernel, with its widget state in the metadata."""
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.pop("widgets", None)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
    )
    client.execute()
    check_widget_state(notebook, path.name)
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
    """Every widget shown in ``notebook`` has a stored state (else its page shows nothing)."""
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    missing = [model_id for model_id in widget_views(notebook) if model_id not in state]
    if missing:
        raise RuntimeError(f"{name}: no stored widget state for the widgets {missing}")


def external_urls(page: str) -> list[str]:
    """URLs that ``page`` would fetch from anywhere but its own folder."""
    urls = [src or css for src, css in FETCHED_URL.findall(page)]
    return [url for url in urls if re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", url, re.IGNORECASE)]


def link_lessons(page: str) -> str:
    """Point links to other lessons (``01_embeddings.ipynb#…``) at their exported pages."""
    return LESSON_LINK.sub(lambda m: f"href={m[1]}{m[2]}.html{m[3] or ''}{m[1]}", page)


def convert(notebook: nbformat.NotebookNode, name: str) -> str:
    """The standalone HTML page of an executed notebook."""
    exporter = HTMLExporter(config=Config({"HTMLExporter": EXPORTER_CONFIG}))
    resources = {"local_amd_modules": LOCAL_AMD_MODULES, "metadata": {"name": name}}
    page, _resources = exporter.from_notebook_node(notebook, resources=resources)
    page = link_lessons(page)
    outside = external_urls(page)
    if outside:
        raise RuntimeError(f"{name}: the page would load from other hosts: {sorted(set(outside))}")
    return page


def title(notebook: nbformat.NotebookNode, fallback: str) -> str:
    """The first Markdown heading of the notebook."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#+\s+(.+)$", cell.source, re.MULTILINE)
            if match:
                return match[1].strip()
    return fallback


def index_page(entries: list[tuple[str, str]]) -> str:
    """A plain page that links every exported lesson."""
    items = "\n".join(
        f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for href, text in entries
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>attention-lessons</title>\n</head>\n<body>\n<h1>attention-lessons</h1>\n"
        f"<ol>\n{items}\n</ol>\n</body>\n</html>\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html")
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    copy_assets(args.node_modules, args.out / STATIC)
    entries = []
    for path in args.notebooks:
        print(f"exporting {path}", flush=True)
        notebook = execute(path)
        target = args.out / f"{path.stem}.html"
        target.write_text(convert(notebook, path.stem), encoding="utf-8")
        entries.append((target.name, title(notebook, path.stem)))
    (args.out / "index.html").write_text(index_page(entries), encoding="utf-8")
    print(f"wrote {len(entries)} pages and index.html to {args.out}")
    versions = {
        name: json.loads((args.node_modules / name / "package.json").read_text())["version"]
        for name in sorted({asset.package for asset in ASSETS})
    }
    print("static/ from npm: " + ", ".join(f"{name} {version}" for name, version in versions.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
