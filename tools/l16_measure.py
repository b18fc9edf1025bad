"""Lesson 16's two measurements on SmolLM2-135M that the lesson reads rather than runs: what rounding
the weights costs, and the 200-token greedy story.

    .venv/bin/python tools/l16_measure.py                  # both files: 1.5 to 3 minutes on 2 cores
    .venv/bin/python tools/l16_measure.py --only greedy    # greedy_200.json alone
    .venv/bin/python tools/l16_measure.py --out-dir /tmp   # elsewhere, to compare

Writes, in ``attention_lessons/l16_real_language_model/`` (the lesson's data, read with
``attention_lessons.kit.committed.read_json``), each with the machine it ran on and the date
(``tools/machine.py``):

- ``quantization.json``: **what one more rounding of this size costs, a proxy for what the first
  cost** (:mod:`attention_lessons.l16_real_language_model.quantization`). The file's weights were
  rounded once, from bf16 (not available) to Q4_1 and Q8_0; the script rounds the dequantized
  float32 weights a second time, on blocks shifted by half a block, and measures the perplexity
  of section 5's text (lessons_text.txt after its first line, 512 tokens, past position 64) with
  the weights as shipped and after each added rounding: 8 bits (Q8_0's recipe), 4 bits (Q4_1's),
  3 and 2 bits (Q4_1's recipe with 8 and 4 levels), on the 210 Q4_1 matrices; the norms stay
  float32 and the embedding as shipped (Q8_0); one more variant re-rounds the embedding alone at
  8 bits (what its own rounding costs). Each variant records how far the weights moved (relative
  RMS, and ``d/√12`` expected from its scales). Checks first that re-rounding on the file's own
  blocks changes no weight, and that the file's stored scales and minima are what the recipe
  finds again, so that the shift is what makes the second rounding add an error.
- ``greedy_200.json``: ``llama.generate(model, story, 200)``, greedy, on section 4's prompt
  ("Tell me a short story about a robot."): the token ids, the text, each step's lead of the
  chosen token over the runner-up, the float32 bound (``llama.float32_tolerance``, as section 3
  computes it), the smallest lead and its step, and the first step whose lead is under the bound:
  another CPU's rounding could choose otherwise there, so the text is this machine's; for each such
  step, the chosen token and the runner-up.

Both are computed in float32, as the lesson runs the model; re-running on the same machine gives
the same numbers, another CPU the same tokens up to that step and perplexities within the float32
bound (``tests/lessons/l16_real_language_model/test_l16_quantization.py`` recomputes both). Memory:
the model (540 MB) and, for one variant at a time, a copy of the weights it rounds again (425 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGUFReader  # requirements-model.txt
from machine import machine_description  # tools/machine.py

from attention_lessons.kit import committed
from attention_lessons.l16_real_language_model import analysis, quantization
from attnlib.model import llama
from attnlib.model.llama_file import unpermute

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "attention_lessons" / "l16_real_language_model"
#: The prompt of lesson 16 · 4, and the tokens the lesson invites the learner to generate.
STORY = "Tell me a short story about a robot."
N_NEW = 200
#: Tokens of section 5's text, and the predictions the perplexity skips (as the lesson).
N_TEXT, PAST = 512, 64
#: The added roundings: name → (bits, Q8_0's symmetric recipe, the part rounded again, the shift).
#: Blocks shifted by half a block, 16 numbers; the 4-bit rounding also on two other grids, shifted
#: by 8 and by 24: how much the proxy depends on which grid the second rounding falls on.
VARIANTS = {
    "8-bit (Q8_0)": (8, True, "matrices", 16),
    "4-bit (Q4_1)": (4, False, "matrices", 16),
    "3-bit (Q4_1's recipe, 8 levels)": (3, False, "matrices", 16),
    "2-bit (Q4_1's recipe, 4 levels)": (2, False, "matrices", 16),
    "embedding, 8-bit (Q8_0)": (8, True, "embedding", 16),
    "4-bit (Q4_1), blocks shifted by 8": (4, False, "matrices", 8),
    "4-bit (Q4_1), blocks shifted by 24": (4, False, "matrices", 24),
}
LABEL = "what one more rounding of this size costs, a proxy for what the first cost"


def text_ids(model: llama.LlamaModel) -> np.ndarray:
    """Section 5's text as the lesson encodes it: lessons_text.txt after its first line, 512 tokens."""
    text = committed.read_text("attention_lessons.l15_generating_text", "lessons_text.txt")
    return model.encode(text.split("\n", 1)[1])[:N_TEXT]


def stored_blocks_recovered(model: llama.LlamaModel) -> bool:
    """Whether every Q4_1 tensor's stored scales and minima (float16) are those the recipe finds
    in its float32 weights on the file's own blocks (the query and key rows un-permuted)."""
    c = model.config
    tensors = {tensor.name: tensor for tensor in GGUFReader(model.path).tensors}  # a memory map
    file_names = {"W_q": "attn_q", "W_k": "attn_k", "W_v": "attn_v", "W_o": "attn_output"}
    file_names |= {"W_gate": "ffn_gate", "W_up": "ffn_up", "W_down": "ffn_down"}
    heads = {"W_q": c.n_heads, "W_k": c.n_kv_heads}
    for name in quantization.matrix_names(c):
        layer, kind = name.removeprefix("layer").split(".")
        tensor = tensors[f"blk.{layer}.{file_names[kind]}.weight"]
        assert tensor.tensor_type.name == "Q4_1", tensor.name
        blocks = np.asarray(tensor.data).view(np.uint8).reshape(tensor.data.shape[0], -1, 20)
        d, m = (blocks[..., i : i + 2].copy().view(np.float16)[..., 0].astype(np.float32) for i in (0, 2))
        if kind in heads:
            d, m = unpermute(d, heads[kind]), unpermute(m, heads[kind])
        rows = model.params[name].T  # the file's layout, rows un-permuted as the model holds them
        low = rows.reshape(len(rows), -1, quantization.BLOCK).min(axis=-1)
        if not (
            np.array_equal(quantization.block_scales(rows, 4), d)
            and np.array_equal(low.astype(np.float16).astype(np.float32), m)
        ):
            return False
    return True


def bound_on_log_perplexity(model: llama.LlamaModel, ids: np.ndarray, logits: np.ndarray) -> float:
    """How far float32's rounding may move the log of the perplexity: each loss is a log-sum-exp of
    the logits minus one of them, so it moves by at most twice the bound on a logit, and so does
    their mean."""
    return 2 * llama.float32_tolerance(model.config, len(ids), largest=float(np.abs(logits).max()))


def quantization_results(model: llama.LlamaModel) -> dict[str, Any]:
    ids = text_ids(model)
    logits = llama.forward(model, ids)
    shipped = float(np.exp(analysis.next_token_losses(logits, ids)[PAST:].mean()))
    log_bound = bound_on_log_perplexity(model, ids, logits)
    del logits
    _, same = quantization.rerounded_model(model, 4, shift=0)  # the file's own blocks: nothing moves
    assert same["changed"] == 0, same
    print(f"as shipped: perplexity {shipped:.2f}; the same blocks rounded again: {same['changed']} changed")
    recovered = stored_blocks_recovered(model)
    assert recovered, "the recipe does not find the file's stored scales and minima"
    variants = []
    for name, (bits, symmetric, part, shift) in VARIANTS.items():
        rounded, change = quantization.rerounded_model(
            model, bits, symmetric=symmetric, shift=shift, part=part
        )
        perplexity = quantization.text_perplexity(rounded, ids, past=PAST)
        del rounded  # one copy of the weights at a time
        variants.append(
            {
                "name": name,
                "part": part,
                "recipe": "Q8_0" if symmetric else "Q4_1",
                "bits": bits,
                "bits_per_weight": quantization.bits_per_weight(bits, symmetric=symmetric),
                "shift": shift,
                **change,
                "perplexity": perplexity,
            }
        )
        print(f"{name:<36} weights moved {change['relative_rms']:.2%} RMS   perplexity {perplexity:8.2f}")
    return {
        "label": LABEL,
        "text": {
            "file": "attention_lessons/l15_generating_text/lessons_text.txt",
            "first_line_dropped": True,
            "tokens": len(ids),
            "past_position": PAST,
            "predictions": len(ids) - 1 - PAST,
        },
        "shipped": {
            "perplexity": shipped,
            "matrices": "Q4_1, 5 bits per weight (4-bit codes, a float16 scale and minimum per 32)",
            "embedding": "Q8_0, 8.5 bits per weight (8-bit codes, a float16 scale per 32)",
            "norms": "float32",
            "first_rounding_expected_relative_rms": same["expected_relative_rms"],
        },
        "same_blocks": {
            "what": "the 210 Q4_1 matrices rounded again, 4 bits, on the file's own blocks (shift 0)",
            "weights": same["weights"],
            "changed": same["changed"],
            "stored_scales_and_minima_recovered": recovered,
        },
        "log_perplexity_float32_bound": log_bound,
        "variants": variants,
    }


def greedy_results(model: llama.LlamaModel) -> dict[str, Any]:
    story = model.chat([{"role": "user", "content": STORY}])
    tokens, logits = llama.generate_with_logits(model, story, N_NEW)  # greedy, as llama.generate
    leads = analysis.greedy_leads(logits)
    largest = float(np.abs(logits).max())
    bound = llama.float32_tolerance(model.config, len(story) + N_NEW, largest=largest)
    close = np.flatnonzero(leads <= bound)
    smallest = int(np.argmin(leads))
    runners_up = np.argsort(-logits, axis=1, kind="stable")[:, 1]
    print(f"{len(tokens)} tokens; smallest lead {leads[smallest]:.4g} at step {smallest}; bound {bound:.4g}")
    return {
        "prompt": STORY,
        "prompt_tokens": len(story),
        "n_new": N_NEW,
        "call": f"llama.generate(model, story, {N_NEW})",
        "tokens": tokens.tolist(),
        "text": model.decode(tokens, skip_special=True),
        "stopped_at_eos": bool(len(tokens) and tokens[-1] == model.eos_id),
        "leads": leads.tolist(),
        "largest_logit": largest,
        "float32_bound": bound,
        "smallest_lead": float(leads[smallest]),
        "smallest_lead_step": smallest,
        "first_step_under_bound": int(close[0]) if len(close) else None,
        "steps_under_bound": close.tolist(),
        "close_calls": [
            {
                "step": int(k),
                "lead": float(leads[k]),
                "chosen": model.decode([int(tokens[k])]),
                "runner_up": model.decode([int(runners_up[k])]),
                "text_before": model.decode(tokens[:k], skip_special=True),
            }
            for k in close
        ],
    }


def write(path: Path, results: dict[str, Any], seconds: float, command: str) -> None:
    load = [round(x, 2) for x in os.getloadavg()]  # a busy machine: the seconds are longer, not the numbers
    record = {
        "machine": machine_description(load_average=load),
        "command": command,
        "seconds": round(seconds, 1),
        **results,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path} ({seconds:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("quantization", "greedy"), help="write one of the two files")
    parser.add_argument("--out-dir", type=Path, default=DATA)
    args = parser.parse_args()
    command = "python tools/l16_measure.py" + (f" --only {args.only}" if args.only else "")
    model = llama.load_smollm2()
    if args.only in (None, "greedy"):
        start = time.perf_counter()
        results = greedy_results(model)
        write(args.out_dir / "greedy_200.json", results, time.perf_counter() - start, command)
    if args.only in (None, "quantization"):
        start = time.perf_counter()
        results = quantization_results(model)
        write(args.out_dir / "quantization.json", results, time.perf_counter() - start, command)


if __name__ == "__main__":
    main()
