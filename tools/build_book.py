"""Build the lessons' book with jupyter-book 1, offline, into a static site.

    .venv/bin/python tools/build_book.py [--out build/book] [--src build/book-src] \\
        [--guide docs/instructor_guide.md] [--node-modules node_modules] build/executed/*.ipynb

The lessons come as ``make`` left them in ``build/executed/``: executed, with the explorers'
widget state stored (``tools/execute_notebooks.py --out build/executed``, the stage that
``make html`` reads too); the book does not execute anything. The script

1. assembles the book's sources in ``--src`` with the repository's layout: ``_config.yml``,
   ``_toc.yml`` and ``favicon.svg`` from ``book/`` at its root, ``book/intro.md``, the book's
   styles ``book/book.css`` in ``_static/`` (no script there: jupyter-book loads every .js and
   .css of that folder on every page), the executed lessons in ``notebooks/``, the instructor's
   guide in ``docs/``, and in ``_extra/_static/vendor/`` (Sphinx's ``html_extra_path``) what the
   pages load, copied from npm at the versions of package-lock.json: MathJax 3, require.js, the
   Jupyter widgets HTML manager and anywidget's front end, with ``book/require-paths.js``, which
   points require.js at them;
2. writes ``conf.py`` with ``jupyter-book config sphinx`` and builds the HTML with Sphinx, every
   warning an error, with HTTP(S) requests from Python sent to a closed port, so that nothing
   is fetched at build time;
3. fails when a page would load anything from another host.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import nbformat
from execute_notebooks import check_widget_state
from export_html import WIDGET_ASSETS, Asset, external_urls, npm_versions

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
VENDOR = Path("_extra", "_static", "vendor")  # in the sources; _static/vendor/ in the site
MATHJAX_PARTS = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2")
ASSETS = (*WIDGET_ASSETS, *(Asset("mathjax3", f"es5/{part}", f"mathjax/{part}") for part in MATHJAX_PARTS))
CLOSED_PORT_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, a request fails at once


def copy_lessons(executed: list[Path], notebooks: Path) -> None:
    """Copy the executed lessons to ``notebooks``; fail when an explorer in one has no state."""
    notebooks.mkdir(parents=True)
    for path in executed:
        check_widget_state(nbformat.read(path, as_version=4), path.name)
        shutil.copy2(path, notebooks / path.name)


def copy_guide(guide: Path, docs: Path) -> None:
    """Copy the instructor's guide to ``docs``; fail with the way to get it when it is missing."""
    if not guide.is_file():
        raise SystemExit(f"{guide} is missing: the book's page docs/instructor_guide is made from it")
    docs.mkdir(parents=True)
    shutil.copy2(guide, docs / "instructor_guide.md")


def vendor(node_modules: Path, target: Path) -> None:
    """Copy the scripts the pages load, from npm packages and ``book/``, into ``target``."""
    for asset in ASSETS:
        asset.copy(node_modules, target)
    shutil.copy2(BOOK / "require-paths.js", target / "require-paths.js")


def assemble(src: Path, executed: list[Path], guide: Path, node_modules: Path) -> None:
    """Write the book's sources into a fresh ``src``, laid out as in the repository."""
    shutil.rmtree(src, ignore_errors=True)
    (src / "book").mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml", "favicon.svg"):
        shutil.copy2(BOOK / name, src / name)
    shutil.copy2(BOOK / "intro.md", src / "book" / "intro.md")
    (src / "_static").mkdir()
    shutil.copy2(BOOK / "book.css", src / "_static" / "book.css")
    copy_lessons(executed, src / "notebooks")
    copy_guide(guide, src / "docs")
    vendor(node_modules, src / VENDOR)


def sphinx_build(src: Path, out: Path) -> None:
    """Write ``src/conf.py`` with jupyter-book and build ``src`` into a fresh ``out``."""
    from jupyter_book.cli.main import main as jupyter_book
    from sphinx.cmd.build import build_main

    jupyter_book.main(["config", "sphinx", str(src)], standalone_mode=False)
    shutil.rmtree(out, ignore_errors=True)
    status = build_main(
        ["-b", "html", "-W", "--keep-going", "-q", "-d", str(src / ".doctrees"), str(src), str(out)]
    )
    if status:
        raise SystemExit(f"Sphinx failed (status {status}): see the messages above")


def pages(out: Path) -> list[Path]:
    """The site's HTML pages, without the vendored files."""
    return sorted(path for path in out.rglob("*.html") if "_static" not in path.relative_to(out).parts)


def check_local(out: Path) -> None:
    """Fail when a page of the site would load anything from another host."""
    outside = {
        str(page.relative_to(out)): sorted(set(urls))
        for page in pages(out)
        if (urls := external_urls(page.read_text(encoding="utf-8")))
    }
    if outside:
        raise SystemExit(f"pages that would load from other hosts: {outside}")


def offline() -> None:
    """Send every HTTP(S) request that Python makes during the build to a closed port."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        os.environ[name] = CLOSED_PORT_PROXY
    for name in ("no_proxy", "NO_PROXY"):
        os.environ.pop(name, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("executed", nargs="+", type=Path, help="the executed lessons")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    parser.add_argument("--src", type=Path, default=ROOT / "build" / "book-src")
    parser.add_argument("--guide", type=Path, default=ROOT / "docs" / "instructor_guide.md")
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    args = parser.parse_args(argv)

    offline()
    assemble(args.src, args.executed, args.guide, args.node_modules)
    sphinx_build(args.src, args.out)
    check_local(args.out)
    print(f"wrote {len(pages(args.out))} pages to {args.out}")
    print(f"_static/vendor/ from npm: {npm_versions(args.node_modules, ASSETS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
