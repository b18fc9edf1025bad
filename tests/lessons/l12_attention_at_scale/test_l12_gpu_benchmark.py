"""benchmarks/gpu_attention.py: it stops plainly without a GPU, and its tables obey its own formula."""

import importlib.util
import json

import pytest
from conftest import ROOT

TABLES = [  # the one lesson 12 shows, and its rerun
    ROOT / "attention_lessons" / "l12_attention_at_scale" / "gpu-sdpa-h100.json",
    ROOT / "benchmarks" / "results" / "gpu-sdpa-h100-rerun.json",
]


def load_benchmark():
    spec = importlib.util.spec_from_file_location("gpu_attention", ROOT / "benchmarks" / "gpu_attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_cuda_it_says_so_and_runs_nothing(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is here")
    assert load_benchmark().main([]) == 0
    assert "Nothing run." in capsys.readouterr().out


@pytest.mark.parametrize("table", TABLES, ids=lambda path: path.name)
def test_throughput_is_the_flop_count_over_the_time(table):
    benchmark = load_benchmark()
    rows = json.loads(table.read_text())["rows"]
    timed = [row for row in rows if "error" not in row]
    assert len(timed) > 200
    for row in timed:
        flops = benchmark.attention_flops(
            row["n"], row["d"], causal=row["causal"], backward=row["mode"] == "fwd+bwd"
        )
        exact = flops / (row["ms"] * 1e-3) / 1e12
        # ms is kept to 4 decimals, tflops to 1: allow for both roundings, nothing more.
        assert row["tflops"] == pytest.approx(exact, abs=0.05 + exact * 0.5e-4 / row["ms"]), row


def test_the_rerun_covers_the_same_cases_and_fails_where_the_original_did():
    first, second = (json.loads(table.read_text())["rows"] for table in TABLES)

    def cases(rows):
        return {(r["d"], r["causal"], r["n"], r["backend"], r["mode"]): "error" in r for r in rows}

    assert cases(first) == cases(second)
    failed = {case for case, error in cases(first).items() if error}
    assert failed and all(case[3] == "math" and case[2] >= 32_768 for case in failed)
