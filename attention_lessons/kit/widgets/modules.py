"""The explorers' ES modules, made loadable by anywidget without a bundler.

anywidget imports an explorer's ``_esm`` text as one module from a ``blob:`` URL, where a relative
import such as ``import { dot } from "../kit/widgets/js/mirror.js"`` cannot resolve.
:func:`module_text` reads a lesson's module (``attention_lessons/l05_softmax/softmax.js``) and replaces each
relative import's path by a ``data:`` URL that holds the imported module (a lesson's own or one of
the kit's in ``attention_lessons/kit/widgets/js/``), itself prepared the same way. The files stay plain ES
modules that Node imports as they are (``tests/kit/js/test_node.py`` runs ``node --test`` on the
kit's and the lessons' ``*.test.mjs``); a module imported by two others
becomes the same ``data:`` URL in both, so the browser evaluates it once.
"""

from __future__ import annotations

import base64
import os
import re
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["module_text"]

#: ``... from "./name.js"`` or ``"../kit/widgets/js/name.js"`` (static imports and re-exports of a
#: module given by its path relative to the importing one).
_RELATIVE_IMPORT = re.compile(r'(\bfrom\s*)"(\.\.?/[A-Za-z0-9_./-]+\.js)"')


def module_text(package: str, name: str) -> str:
    """The text of the ES module ``name`` of ``package`` with every relative import turned into a
    ``data:`` URL import.

    Parameters
    ----------
    package : str
        The package that holds the module, such as ``"attention_lessons.l07_whole_picture"``.
    name : str
        The module's file name in that package's folder, such as ``"playground.js"``.

    Returns
    -------
    str
        An ES module with no relative imports, ready for anywidget's ``_esm``.
    """
    source = Path(str(resources.files(package)), name)
    if not source.is_file():
        raise FileNotFoundError(f"{package} has no ES module {name}")
    return _prepared(source.resolve())


@cache
def _prepared(source: Path) -> str:
    text = source.read_text(encoding="utf-8")

    def data_url(match: re.Match[str]) -> str:
        imported = Path(os.path.normpath(source.parent / match.group(2)))
        encoded = base64.b64encode(_prepared(imported).encode("utf-8")).decode("ascii")
        return f'{match.group(1)}"data:text/javascript;base64,{encoded}"'

    return _RELATIVE_IMPORT.sub(data_url, text)
