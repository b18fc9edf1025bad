"""Write transformers' BertModel outputs for lesson 13's sentence: the reference the lesson compares with.

    .venv/bin/python tools/bert_reference.py            # writes
                                                        # attention_lessons/l13_real_model/bert_reference.npz
    .venv/bin/python tools/bert_reference.py --check    # recomputes and compares, writes nothing

Needs torch and transformers (requirements-torch.txt); the lesson itself does not. Loads
all-MiniLM-L6-v2 from the files attnlib verifies (``attnlib.model.find_model_dir``), tokenises the
sentence with transformers' own tokenizer, runs ``BertModel`` (eager attention, float32, one
thread) and saves, as float32:

- ``input_ids`` (n,): the tokens, which the lesson checks against its own tokenizer's;
- ``attentions`` (layers, heads, n, n): every head's weights;
- ``last_hidden_state`` (n, d_model): the last layer's output;
- ``sentence_vector`` (d_model,): the mean of the last layer's token vectors, the model's
  sentence embedding (sentence-transformers' pooling for all-MiniLM-L6-v2 is the mean; [CLS] is
  not used).

The file's SHA-256 is :data:`REFERENCE_SHA256`; the lesson and
``tests/lessons/l13_real_model/test_l13_bert_reference.py`` check it, so a changed file is noticed.
``--check`` recomputes the outputs and compares them with the file, each float array to
:func:`tolerances`: float32 computed by another CPU's kernels differs by a few ulps.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "attention_lessons" / "l13_real_model" / "bert_reference.npz"
SENTENCE = "The cat sat on the mat because it was tired"
#: SHA-256 of the file this script writes (with torch 2.13.0 and transformers 5.23.0).
REFERENCE_SHA256 = "f62b1c91835007b31a355c50a155f492659052158090ae7d1b76ebe08ab7a382"


def reference_outputs(sentence: str = SENTENCE) -> dict[str, np.ndarray]:
    """transformers' BertModel on ``sentence``: the arrays the file holds."""
    import torch
    import transformers

    from attnlib.model import find_model_dir, verify_files

    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    folder = str(verify_files(find_model_dir(download=False)))
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    bert = transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    inputs = tokenizer(sentence, return_tensors="pt")
    with torch.no_grad():
        out = bert(**inputs, output_attentions=True)
    last = out.last_hidden_state[0].numpy().astype(np.float32)
    return {
        "input_ids": inputs["input_ids"][0].numpy().astype(np.int64),
        "attentions": np.stack([a[0].numpy() for a in out.attentions]).astype(np.float32),
        "last_hidden_state": last,
        "sentence_vector": last.mean(axis=0, dtype=np.float64).astype(np.float32),
    }


def tolerances(arrays: dict[str, np.ndarray]) -> dict[str, float]:
    """:func:`attnlib.model.float32_tolerance` for each float array of the reference (the model's sizes).

    The attention weights are compared relative to 1, which no weight exceeds; the last layer and
    its mean relative to the last layer's largest entry.
    """
    from attnlib.model import BertConfig, find_model_dir, float32_tolerance, verify_files

    config = BertConfig.from_json(verify_files(find_model_dir(download=False)) / "config.json")
    n_tokens = len(arrays["input_ids"])
    last = float(np.abs(arrays["last_hidden_state"]).max())
    sizes = {"attentions": 1.0, "last_hidden_state": last, "sentence_vector": last}
    return {name: float32_tolerance(config, n_tokens, largest) for name, largest in sizes.items()}


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The arrays as an uncompressed ``.npz`` with fixed timestamps: the same arrays give the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in arrays.items():
            with archive.open(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    return buffer.getvalue()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="recompute and compare with the file")
    args = parser.parse_args(argv)
    arrays = reference_outputs()
    if args.check:
        with np.load(REFERENCE) as stored:
            same_ids = np.array_equal(stored["input_ids"], arrays["input_ids"])
            share = {
                name: float(np.abs(stored[name] - arrays[name]).max()) / tolerance
                for name, tolerance in tolerances(arrays).items()
            }
        worst = ", ".join(f"{name} {value:.2g}" for name, value in share.items())
        print(f"{REFERENCE.relative_to(ROOT)}: same input_ids {same_ids}; largest difference/bound {worst}")
        return 0 if same_ids and max(share.values()) <= 1 else 1
    data = npz_bytes(arrays)
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_bytes(data)
    print(f"wrote {REFERENCE.relative_to(ROOT)} ({len(data):,} bytes), SHA-256 {sha256_hex(data)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
