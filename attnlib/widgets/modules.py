"""The explorers' ES modules, made loadable by anywidget without a bundler.

anywidget imports an explorer's ``_esm`` text as one module from a ``blob:`` URL, where a relative
import such as ``import { dot } from "./mirror.js"`` cannot resolve. :func:`module_text` reads a
module from ``js/`` and replaces each relative import's path by a ``data:`` URL that holds the
imported module, itself prepared the same way. The files under ``js/`` stay plain ES modules that
Node imports as they are (``node --test tests/js``); a module imported by two others becomes the
same ``data:`` URL in both, so the browser evaluates it once.
"""

from __future__ import annotations

import base64
import re
from functools import cache
from importlib import resources

__all__ = ["module_text"]

#: ``... from "./name.js"`` (static imports and re-exports of a sibling module).
_RELATIVE_IMPORT = re.compile(r'(\bfrom\s*)"\./([A-Za-z0-9_-]+\.js)"')


@cache
def module_text(name: str) -> str:
    """The text of ``js/<name>`` with every relative import turned into a ``data:`` URL import.

    Parameters
    ----------
    name : str
        A file name in ``attnlib/widgets/js``, such as ``"playground.js"``.

    Returns
    -------
    str
        An ES module with no relative imports, ready for anywidget's ``_esm``.
    """
    source = resources.files("attnlib.widgets").joinpath("js", name)
    if not source.is_file():
        raise FileNotFoundError(f"attnlib.widgets has no ES module js/{name}")
    text = source.read_text(encoding="utf-8")
    return _RELATIVE_IMPORT.sub(lambda match: f'{match.group(1)}"{_data_url(match.group(2))}"', text)


def _data_url(name: str) -> str:
    encoded = base64.b64encode(module_text(name).encode("utf-8")).decode("ascii")
    return f"data:text/javascript;base64,{encoded}"
