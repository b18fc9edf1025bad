"""The committed reference for lesson 13 (transformers' BertModel on the lesson's sentence): its
hash matches the one recorded by tools/bert_reference.py and in the lesson, and, where torch and
transformers are installed, a fresh run of the script gives the same arrays."""

from __future__ import annotations

import hashlib

import bert_reference
import nbformat
import numpy as np
import pytest
from conftest import ROOT, gamma, unit_roundoff

pytestmark = pytest.mark.reference  # make second-path runs it again on other kernels

LESSON = ROOT / "notebooks" / "13_real_model.ipynb"


def test_the_committed_reference_has_the_recorded_sha256():
    data = bert_reference.REFERENCE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == bert_reference.REFERENCE_SHA256


def test_the_lesson_checks_the_same_sha256_and_reads_the_same_file():
    source = "\n".join(cell.source for cell in nbformat.read(LESSON, as_version=4).cells)
    assert f'REFERENCE_SHA256 = "{bert_reference.REFERENCE_SHA256}"' in source
    assert '"attention_lessons.l13_real_model", "bert_reference.npz"' in source, "read from the package"
    assert bert_reference.REFERENCE.parent.name == "l13_real_model"
    assert f'"{bert_reference.SENTENCE}"' in source  # the lesson's sentence is the reference's


def test_the_reference_file_is_written_byte_for_byte_the_same():
    with np.load(bert_reference.REFERENCE) as stored:
        arrays = {name: stored[name] for name in stored.files}
    assert bert_reference.npz_bytes(arrays) == bert_reference.REFERENCE.read_bytes()


def test_a_fresh_run_of_transformers_gives_the_committed_arrays():
    pytest.importorskip("torch", reason="pip install -r requirements-torch.txt")
    pytest.importorskip("transformers", reason="pip install -r requirements-torch.txt")
    fresh = bert_reference.reference_outputs()
    with np.load(bert_reference.REFERENCE) as stored:
        assert sorted(stored.files) == sorted(fresh)
        np.testing.assert_array_equal(stored["input_ids"], fresh["input_ids"])
        for name, tolerance in bert_reference.tolerances(fresh).items():  # another CPU's float32 kernels
            np.testing.assert_allclose(stored[name], fresh[name], rtol=0, atol=tolerance, err_msg=name)


def test_the_sentence_vector_is_the_mean_of_the_last_layer_not_cls():
    with np.load(bert_reference.REFERENCE) as stored:
        last, vector = stored["last_hidden_state"], stored["sentence_vector"]
    mean = last.mean(axis=0, dtype=np.float64)  # as the script computes it, then rounds it to float32
    rounding = gamma(len(last) + 1, np.float64) * np.abs(last).max()  # a sum of n terms, a division
    np.testing.assert_allclose(vector, mean, rtol=unit_roundoff(np.float32), atol=rounding)
    assert not np.allclose(vector, last[0], atol=1e-2)
