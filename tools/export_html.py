"""Export lessons to standalone HTML pages whose explorers respond without a kernel.

    .venv/bin/python tools/export_html.py [--out build/html] [--node-modules DIR] build/executed/*.ipynb

It reads the lessons as ``make`` left them in ``build/executed/``: executed top to bottom in a
fresh kernel with their widget state stored (``tools/execute_notebooks.py --out build/executed``,
the stage that ``make book`` reads too), and converts each with nbconvert's ``lab`` template (see
``tools/nbconvert_templates/attnlib_static``).

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
from execute_notebooks import check_widget_state
from nbconvert import HTMLExporter
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "nbconvert_templates"
STATIC = "static"


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
# What a page with explorers loads (make html and make book both copy these)
WIDGET_ASSETS = (
    Asset("requirejs", "require.js", "require.js"),
    Asset("@jupyter-widgets/html-manager", "dist/embed-amd.js", "html-manager/embed-amd.js"),
    # the Font Awesome files that embed-amd.js loads from its own folder
    *(
        Asset("@jupyter-widgets/html-manager", f"dist/*.{kind}", "html-manager")
        for kind in ("woff", "woff2", "ttf", "eot", "svg")
    ),
    Asset("anywidget", "dist/index.js", "anywidget/index.js"),
)
ASSETS = (*WIDGET_ASSETS, *(Asset("mathjax", part, f"mathjax/{part}") for part in MATHJAX_PARTS))
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


def npm_versions(node_modules: Path, assets: tuple[Asset, ...]) -> str:
    """``name version, …`` of the npm packages that ``assets`` come from."""
    packages = sorted({asset.package for asset in assets})
    return ", ".join(
        f"{name} {json.loads((node_modules / name / 'package.json').read_text())['version']}"
        for name in packages
    )


def read_executed(path: Path) -> nbformat.NotebookNode:
    """The executed lesson at ``path``; fails when an explorer in it has no stored state."""
    notebook = nbformat.read(path, as_version=4)
    check_widget_state(notebook, path.name)
    return notebook


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
        notebook = read_executed(path)
        target = args.out / f"{path.stem}.html"
        target.write_text(convert(notebook, path.stem), encoding="utf-8")
        entries.append((target.name, title(notebook, path.stem)))
    (args.out / "index.html").write_text(index_page(entries), encoding="utf-8")
    print(f"wrote {len(entries)} pages and index.html to {args.out}")
    print(f"static/ from npm: {npm_versions(args.node_modules, ASSETS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
