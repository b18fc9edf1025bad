"""Build the lessons' book with jupyter-book 1, offline, into two static sites: two editions.

    .venv/bin/python tools/build_book.py [--out build/book] [--student-out build/book-student] \\
        [--src build/book-src] [--guide docs/instructor_guide.md] [--node-modules node_modules] \\
        build/executed/*.ipynb

The teacher's edition (``--out``) holds every lesson as it is and the instructor's guide; the
student edition (``--student-out``) holds the lessons without the cells tagged ``solution`` (as
``tools/build_student.py`` writes the student copies) and no guide. The lessons come as ``make``
left them in ``build/executed/``: executed, with the explorers' widget state stored
(``tools/execute_notebooks.py --out build/executed``); the book does not execute anything. For
each edition the script

1. assembles the book's sources in ``--src/<edition>`` with the repository's layout:
   ``_config.yml`` (with the address of ``repository.toml`` and the edition's branch: the
   student edition's launch buttons open the student copies, on the student branch that
   ``make student-branch`` makes, and it has no GitHub button, which would open the teacher's),
   ``_toc.yml`` (the student edition's without the guide),
   ``favicon.svg`` and ``_templates/`` (the theme's components that the book replaces) from
   ``book/`` at its root, ``book/intro.md`` (with the same address and branch), the book's
   styles ``book/book.css`` in ``_static/`` (no script there:
   jupyter-book loads every .js and .css of that folder on every page), the lessons in
   ``notebooks/`` with their explorer cells tagged ``full-width``, the guide in ``docs/``, and in
   ``_extra/_static/vendor/`` (Sphinx's ``html_extra_path``) what the pages load: MathJax 3,
   copied from npm at the version of package-lock.json, ``book/explorers.js``, which draws the
   explorers from the widget state a page holds, ``book/scrollers.js``, which gives a wide
   formula or table that scrolls sideways a Tab stop, and ``book/contents.js``, which makes the
   article header's "Contents" button open the page's contents;
2. writes ``conf.py`` with ``jupyter-book config sphinx`` and builds the HTML with Sphinx (with the
   tag ``student`` for the student edition, which ``{only}`` blocks read), every warning an error,
   with HTTP(S) requests from Python sent to a closed port, so that nothing is fetched at build
   time;
3. removes what no page loads: source maps, the theme's translations and page templates, and its
   Font Awesome script (its style sheet already draws the same icons from the webfonts);
4. fails when a page would load anything from another host.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml
from build_student import student_copy
from execute_notebooks import check_widget_state
from repository import read as read_repository

import attnlib

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
VENDOR = Path("_extra", "_static", "vendor")  # in the sources; _static/vendor/ in the site
GUIDE_FOLDER = "docs"
COLAB = "https://colab.research.google.com"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FULL_WIDTH = "full-width"  # the cell tag that jupyter-book widens to the page's full content width
CLOSED_PORT_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, a request fails at once
# What Sphinx and the theme write that no page loads (relative to the site)
UNUSED = (
    "_static/locales",
    "_static/webpack-macros.html",
    "_static/sbt-webpack-macros.html",
    "_static/scripts/fontawesome.js",
    "_static/scripts/fontawesome.js.LICENSE.txt",
)
FONTAWESOME_SCRIPT = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')


@dataclass(frozen=True)
class Asset:
    """Files of one npm package copied into a folder: ``source`` inside the package's folder."""

    package: str
    source: str
    target: str

    def copy(self, node_modules: Path, static: Path) -> None:
        """Copy the file or folder ``source`` to ``target``."""
        package = node_modules / self.package
        if not package.is_dir():
            raise FileNotFoundError(f"{package} is missing: run `npm ci` in {ROOT} first")
        target = static / self.target
        target.parent.mkdir(parents=True, exist_ok=True)
        if (package / self.source).is_dir():
            shutil.copytree(package / self.source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(package / self.source, target)


MATHJAX_PARTS = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2")
MATHJAX = tuple(Asset("mathjax3", f"es5/{part}", f"mathjax/{part}") for part in MATHJAX_PARTS)
# src="…" / href="…" of elements that make the browser fetch something, and CSS url(…)
FETCHED_URL = re.compile(
    r"<(?:script|link|img|iframe|source)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']"
    r"|url\(\s*[\"']?([^\"')]+)",
    re.IGNORECASE,
)


def npm_versions(node_modules: Path, assets: tuple[Asset, ...]) -> str:
    """``name version, …`` of the npm packages that ``assets`` come from."""
    packages = sorted({asset.package for asset in assets})
    return ", ".join(
        f"{name} {json.loads((node_modules / name / 'package.json').read_text())['version']}"
        for name in packages
    )


def external_urls(page: str) -> list[str]:
    """URLs that ``page`` would fetch from anywhere but its own site."""
    urls = [src or css for src, css in FETCHED_URL.findall(page)]
    return [url for url in urls if re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", url, re.IGNORECASE)]


def shows_an_explorer(cell: nbformat.NotebookNode) -> bool:
    """Whether a code cell's outputs show a widget (an explorer)."""
    return any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))


def book_lesson(path: Path, student: bool) -> nbformat.NotebookNode:
    """The executed lesson at ``path`` as the book shows it: explorer cells at full width, and for
    the student edition without its solutions; fails when an explorer in it has no state."""
    lesson = nbformat.read(path, as_version=4)
    check_widget_state(lesson, path.name)
    if student:
        lesson = student_copy(lesson)
    for cell in lesson.cells:
        tags = cell.metadata.get("tags", [])
        if shows_an_explorer(cell) and FULL_WIDTH not in tags:
            cell.metadata["tags"] = [*tags, FULL_WIDTH]
    return lesson


def toc(student: bool) -> dict:
    """book/_toc.yml; for the student edition without the chapters in the guide's folder."""
    contents = yaml.safe_load((BOOK / "_toc.yml").read_text(encoding="utf-8"))
    if student:
        for part in contents["parts"]:
            part["chapters"] = [c for c in part["chapters"] if not c["file"].startswith(f"{GUIDE_FOLDER}/")]
        contents["parts"] = [part for part in contents["parts"] if part["chapters"]]
    return contents


def edition_branch(student: bool) -> str:
    """The branch an edition's buttons open: the student copies' for the student edition."""
    repository = read_repository()
    return repository.student_branch if student else repository.branch


def book_config(student: bool) -> dict:
    """book/_config.yml with the repository of ``repository.toml``: its address, and the branch the
    edition's launch (Binder) buttons open, the student copies' for the student edition.
    Both branches hold the lessons at ``notebooks/NN_name.ipynb``."""
    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    repository = read_repository()
    config["repository"] = {"url": repository.url, "branch": edition_branch(student), "path_to_book": ""}
    config["launch_buttons"]["binderhub_url"] = repository.binderhub
    config["launch_buttons"]["colab_url"] = COLAB  # each lesson's first cell installs what it needs
    config["html"]["extra_footer"] = footer(student)
    # The theme's repository button links the repository's front page, whose default branch is the
    # teacher's: the student edition has none (its intro names the student branch to clone).
    config["html"]["use_repository_button"] = not student
    return config


def footer(student: bool) -> str:
    """The book's footer: its edition and version (``attnlib.__version__``) and the licences."""
    edition = "student" if student else "teacher's"
    changes = f"{read_repository().url}/blob/{edition_branch(student)}/CHANGELOG.md"
    return (
        f'<p>Attention, step by step, <a href="{changes}">version {attnlib.__version__}</a>, '
        f"the {edition} edition. The lessons' text and figures: "
        '<a href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>; the code: MIT.</p>'
    )


def intro(student: bool) -> str:
    """book/intro.md with the repository's address and the edition's branch (``@url@``, ``@branch@``)."""
    text = (BOOK / "intro.md").read_text(encoding="utf-8")
    return text.replace("@url@", read_repository().url).replace("@branch@", edition_branch(student))


def copy_guide(guide: Path, docs: Path) -> None:
    """Copy the instructor's guide to ``docs``; fail with the way to get it when it is missing."""
    if not guide.is_file():
        raise SystemExit(f"{guide} is missing: the book's page docs/instructor_guide is made from it")
    docs.mkdir(parents=True)
    shutil.copy2(guide, docs / "instructor_guide.md")


def vendor(node_modules: Path, target: Path) -> None:
    """Copy the scripts the pages load, from npm packages and ``book/``, into ``target``."""
    for asset in MATHJAX:
        asset.copy(node_modules, target)
    for script in ("explorers.js", "scrollers.js", "contents.js"):
        shutil.copy2(BOOK / script, target / script)


def assemble(src: Path, executed: list[Path], guide: Path, node_modules: Path, student: bool) -> None:
    """Write one edition's sources into a fresh ``src``, laid out as in the repository."""
    shutil.rmtree(src, ignore_errors=True)
    (src / "book").mkdir(parents=True)
    shutil.copy2(BOOK / "favicon.svg", src / "favicon.svg")
    config = yaml.safe_dump(book_config(student), sort_keys=False, allow_unicode=True)
    (src / "_config.yml").write_text(config, encoding="utf-8")
    (src / "_toc.yml").write_text(yaml.safe_dump(toc(student), sort_keys=False), encoding="utf-8")
    (src / "book" / "intro.md").write_text(intro(student), encoding="utf-8")
    (src / "_static").mkdir()
    shutil.copy2(BOOK / "book.css", src / "_static" / "book.css")
    shutil.copytree(BOOK / "_templates", src / "_templates")
    (src / "notebooks").mkdir()
    for path in executed:
        nbformat.write(book_lesson(path, student), src / "notebooks" / path.name)
    if not student:
        copy_guide(guide, src / GUIDE_FOLDER)
    vendor(node_modules, src / VENDOR)


def sphinx_build(src: Path, out: Path, student: bool) -> None:
    """Write ``src/conf.py`` with jupyter-book and build ``src`` into a fresh ``out``."""
    from jupyter_book.cli.main import main as jupyter_book
    from sphinx.cmd.build import build_main

    jupyter_book.main(["config", "sphinx", str(src)], standalone_mode=False)
    shutil.rmtree(out, ignore_errors=True)
    tags = ["-t", "student"] if student else []
    status = build_main(
        ["-b", "html", "-W", "--keep-going", "-q", *tags, "-d", str(src / ".doctrees"), str(src), str(out)]
    )
    if status:
        raise SystemExit(f"Sphinx failed (status {status}): see the messages above")


def pages(out: Path) -> list[Path]:
    """The site's HTML pages, without the vendored files."""
    return sorted(path for path in out.rglob("*.html") if "_static" not in path.relative_to(out).parts)


def prune(out: Path) -> None:
    """Remove from the site what no page loads, and the pages' script tag for Font Awesome's script."""
    for path in out.rglob("*.map"):
        path.unlink()
    for name in UNUSED:
        path = out / name
        if not path.exists():
            raise SystemExit(f"{path} is missing: has the theme changed? (tools/build_book.py, UNUSED)")
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    for page in pages(out):
        text = FONTAWESOME_SCRIPT.sub("", page.read_text(encoding="utf-8"))
        if "scripts/fontawesome.js" in text:
            raise SystemExit(f"{page} names Font Awesome's script where tools/build_book.py cannot remove it")
        page.write_text(text, encoding="utf-8")


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
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book", help="the teacher's edition")
    parser.add_argument("--student-out", type=Path, default=ROOT / "build" / "book-student")
    parser.add_argument("--src", type=Path, default=ROOT / "build" / "book-src")
    parser.add_argument("--guide", type=Path, default=ROOT / "docs" / "instructor_guide.md")
    parser.add_argument("--node-modules", type=Path, default=ROOT / "node_modules")
    args = parser.parse_args(argv)

    offline()
    for edition, out, student in (("teacher", args.out, False), ("student", args.student_out, True)):
        assemble(args.src / edition, args.executed, args.guide, args.node_modules, student)
        sphinx_build(args.src / edition, out, student)
        prune(out)
        check_local(out)
        print(f"{edition} edition: wrote {len(pages(out))} pages to {out}")
    print(f"_static/vendor/ from npm: {npm_versions(args.node_modules, MATHJAX)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
