"""Values between the grader and a sandboxed submission: numbers, text and containers of them, as JSON.

What a student's function returns crosses from the sandbox to the grader as JSON text, never as a
pickle or a Python object, so nothing the student wrote runs in the grader: an ``ndarray`` subclass
whose ``==`` always says yes, or a number that patches numpy, arrives as plain numbers. Python's
``json`` writes a float with ``repr``, which reads back to the same bits, NaN and infinities included.

>>> import numpy as np
>>> value = (np.array([[0.1, np.inf]]), {"n": 3}, "up", np.float32(0.5), [True, None])
>>> back = decode(encode(value))
>>> back[0].dtype, back[0].tolist(), back[1], back[2], back[3].dtype.name, back[4]
(dtype('float64'), [[0.1, inf]], {'n': 3}, 'up', 'float32', [True, None])
>>> encode(object())
Traceback (most recent call last):
...
codec.CodecError: an object, which is not numbers, text or a tuple, list or dict of them
"""

from __future__ import annotations

import json

import numpy as np

#: numpy kinds that cross: booleans, integers, unsigned integers, floats.
KINDS = "biuf"
#: The deepest nesting, the most numbers of one array, items of one container and characters of one
#: text a message may carry (the assignments' answers are a few numbers; a reply beyond these is
#: refused, not held by the grader).
MAX_DEPTH = 32
MAX_NUMBERS = 1_000_000
MAX_ITEMS = 10_000
MAX_TEXT = 10_000


class CodecError(ValueError):
    """A value that is not numbers, text or containers of them, or a message that is not one."""


def _describe(value: object) -> str:
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _to_json(value: object, depth: int) -> object:
    if depth > MAX_DEPTH:
        raise CodecError(f"containers nested more than {MAX_DEPTH} deep")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return {"float": float(value)}
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in KINDS:
            raise CodecError(f"an array of {array.dtype}, which is not numbers")
        if array.size > MAX_NUMBERS:
            raise CodecError(f"more than {MAX_NUMBERS:,} numbers")
        kind = "scalar" if isinstance(value, np.generic) else "array"
        return {kind: {"dtype": array.dtype.name, "shape": list(array.shape), "data": array.ravel().tolist()}}
    if isinstance(value, (tuple, list)):
        items = [_to_json(item, depth + 1) for item in value]
        return {"tuple": items} if isinstance(value, tuple) else items
    if isinstance(value, dict):
        pairs = [[_to_json(key, depth + 1), _to_json(item, depth + 1)] for key, item in value.items()]
        return {"dict": pairs}
    raise CodecError(f"{_describe(value)}, which is not numbers, text or a tuple, list or dict of them")


def encode(value: object) -> str:
    """``value`` as one line of JSON (:class:`CodecError` where it is not numbers, text or
    containers of them)."""
    return json.dumps(_to_json(value, 0))


def _array(fields: object, scalar: bool) -> np.ndarray | np.generic:
    if not isinstance(fields, dict) or set(fields) != {"dtype", "shape", "data"}:
        raise CodecError("an array without its dtype, shape and data")
    dtype = np.dtype(str(fields["dtype"]))
    shape = fields["shape"]
    sizes = isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)
    if dtype.kind not in KINDS or not sizes:
        raise CodecError(f"an array of dtype {dtype} and shape {shape!r}")
    data = fields["data"]
    if not isinstance(data, list) or len(data) != int(np.prod(shape)) or len(data) > MAX_NUMBERS:
        raise CodecError(f"an array whose data does not fill its shape {shape}")
    if not all(type(item) in (bool, int, float) for item in data):
        raise CodecError("an array holding something that is not a number")
    array = np.array(data, dtype=dtype).reshape(shape)
    return array[()] if scalar else array


def _from_json(value: object, depth: int) -> object:
    if depth > MAX_DEPTH:
        raise CodecError(f"containers nested more than {MAX_DEPTH} deep")
    if type(value) is str and len(value) > MAX_TEXT:
        raise CodecError(f"a text of more than {MAX_TEXT:,} characters")
    items = value.get("tuple", value.get("dict")) if isinstance(value, dict) else value
    if isinstance(items, list) and len(items) > MAX_ITEMS:
        raise CodecError(f"a container of more than {MAX_ITEMS:,} items")
    if value is None or type(value) in (bool, int, str):
        return value
    if isinstance(value, list):
        return [_from_json(item, depth + 1) for item in value]
    if isinstance(value, dict) and len(value) == 1:
        ((kind, fields),) = value.items()
        if kind == "float" and type(fields) in (int, float):
            return float(fields)
        if kind in ("array", "scalar"):
            return _array(fields, kind == "scalar")
        if kind == "tuple" and isinstance(fields, list):
            return tuple(_from_json(item, depth + 1) for item in fields)
        pairs = isinstance(fields, list) and all(isinstance(p, list) and len(p) == 2 for p in fields)
        if kind == "dict" and pairs:
            return {_from_json(key, depth + 1): _from_json(item, depth + 1) for key, item in fields}
    raise CodecError(f"an unreadable value {str(value)[:80]!r}")


def decode(text: str) -> object:
    """The value one line of :func:`encode` carries (:class:`CodecError` where it carries none)."""
    try:
        return _from_json(json.loads(text), 0)
    except (ValueError, TypeError, RecursionError) as error:
        if isinstance(error, CodecError):
            raise
        raise CodecError(f"an unreadable value ({error})") from None
