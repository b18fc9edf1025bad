"""What attention costs, counted two ways: as formulas, and measured on code that runs.

Every count comes as a formula (``operation_counts``, ``weights_bytes``, ``hbm_traffic``, ...) and,
where it can be measured, as a slow computation that counts as it goes (``counted_attention``,
``peak_bytes``, ``counted_hbm_traffic``, ...); the tests check that the two agree. One file per
topic, in the order of the lessons:

* :mod:`~attnlib.counting.attention` (lesson 08): the arithmetic operations of one attention, and
  of one matrix product;
* :mod:`~attnlib.counting.heads` (lesson 09): the operations and parameters of multi-head attention;
* :mod:`~attnlib.counting.memory` (lesson 12): the memory of the ``n × n`` weights, of tiled
  attention, and its blocks; the numbers moved between a GPU's HBM and SRAM, which FlashAttention
  saves;
* :mod:`~attnlib.counting.generation` (lesson 15): a decoder's KV cache, its parameters, and the
  multiplications of generating with and without the cache.

Every public name is here too: ``from attnlib.counting import operation_counts``.
"""

from attnlib.counting.attention import (
    OPERATIONS,
    STEPS,
    OperationCounts,
    counted_attention,
    matmul_counts,
    operation_counts,
)
from attnlib.counting.generation import (
    GENERATION_STEPS,
    DecoderShape,
    counted_generation,
    decoder_pass_multiplications,
    generation_multiplications,
    kv_cache_bytes,
    kv_cache_outgrows_weights,
    llama_parameter_counts,
)
from attnlib.counting.heads import (
    MULTI_HEAD_STEPS,
    counted_multi_head_attention,
    multi_head_operation_counts,
    multi_head_parameter_counts,
)
from attnlib.counting.memory import (
    LOOPS,
    TileCounts,
    Traffic,
    counted_hbm_traffic,
    hbm_traffic,
    peak_bytes,
    sram_blocks,
    tile_counts,
    tiled_bytes,
    weights_bytes,
)

__all__ = [
    "GENERATION_STEPS",
    "LOOPS",
    "MULTI_HEAD_STEPS",
    "OPERATIONS",
    "STEPS",
    "DecoderShape",
    "OperationCounts",
    "TileCounts",
    "Traffic",
    "counted_attention",
    "counted_generation",
    "counted_hbm_traffic",
    "counted_multi_head_attention",
    "decoder_pass_multiplications",
    "generation_multiplications",
    "hbm_traffic",
    "kv_cache_bytes",
    "kv_cache_outgrows_weights",
    "llama_parameter_counts",
    "matmul_counts",
    "multi_head_operation_counts",
    "multi_head_parameter_counts",
    "operation_counts",
    "peak_bytes",
    "sram_blocks",
    "tile_counts",
    "tiled_bytes",
    "weights_bytes",
]
