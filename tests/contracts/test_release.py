"""A release names one edition everywhere: the package's version, CITATION.cff, CHANGELOG.md,
each lesson's install cell and the book's footer; the licences that the README promises exist."""

from __future__ import annotations

import re
import tomllib

import build_book
import yaml
from conftest import ROOT

import attention_lessons
import attnlib

VERSION = attnlib.__version__


def test_the_version_is_semantic_and_the_package_has_one() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION), VERSION
    assert attention_lessons.__version__ == VERSION
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "attnlib.__version__"}


def test_citation_and_changelog_name_this_version() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["version"] == VERSION
    assert citation["license"] == ["MIT", "CC-BY-4.0"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## (\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2})\)$", changelog, flags=re.MULTILINE)
    assert released and released[0] == (VERSION, str(citation["date-released"])), (
        "CHANGELOG.md's newest release is this version, released the day CITATION.cff says"
    )
    assert changelog.index("## Unreleased") < changelog.index(f"## {VERSION} ")


def test_the_licences_are_there_and_the_package_declares_them() -> None:
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    cc_by = (ROOT / "LICENSE-CC-BY-4.0.txt").read_text(encoding="utf-8")
    assert "Creative Commons Attribution 4.0 International Public License" in cc_by
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT AND CC-BY-4.0"
    assert all((ROOT / name).is_file() for name in project["license-files"])


def test_both_books_show_the_version_and_the_licences() -> None:
    for student in (False, True):
        footer = build_book.book_config(student)["html"]["extra_footer"]
        assert f"version {VERSION}</a>" in footer and "CC BY 4.0" in footer and "MIT" in footer
        assert ("student edition" in footer) == student
