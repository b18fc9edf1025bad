"""Positions: attention sees a set until we tell it where each token is.

Two ways to tell it, both as in the papers that introduced them:

- :func:`sinusoidal`: the fixed encodings of "Attention Is All You Need" (Vaswani et al., 2017,
  section 3.5), added to the embeddings before the projections::

      PE[p, 2i]   = sin(p / base**(2i / d_model))
      PE[p, 2i+1] = cos(p / base**(2i / d_model))

- :func:`rope`: the rotary position embedding of RoFormer (Su et al., 2021, section 3.4),
  applied to the queries and the keys (not the values). Each consecutive pair
  ``(x[2i], x[2i+1])`` of the vector at position ``p`` is rotated by the angle ``p·θ_i`` with
  ``θ_i = base**(-2i / d)``. A rotation keeps lengths, and the dot product of a query rotated by
  ``m·θ`` with a key rotated by ``n·θ`` depends only on ``m − n``: the score sees how far apart
  two tokens are, not where they are.

Two more facts, as functions the lessons compute with:

- :func:`sinusoidal_shift`: moving every position ``k`` places on is one fixed linear map,
  ``PE[p + k] = PE[p] @ M_k`` for every ``p`` (a rotation of each pair by ``k / base**(2i/d)``),
  the reason Vaswani et al. give for choosing sinusoids.
- ``pairing=``: RoFormer rotates neighbouring pairs ``(x[2i], x[2i+1])`` (``"interleaved"``);
  GPT-NeoX and Llama's code rotates ``(x[i], x[i + d/2])``, the two halves (``"half"``, the
  ``rotate_half`` form). :func:`half_to_interleaved` is the permutation of the components between
  the two: the same rotations, on differently ordered components.
"""

from __future__ import annotations

import numbers
import os

import numpy as np
import numpy.typing as npt

from attnlib.validation import as_positive_int, as_real, as_real_array

__all__ = [
    "EXACT_POSITIONS",
    "PAIRINGS",
    "half_to_interleaved",
    "rope",
    "rope_frequencies",
    "rotate_pairs",
    "sinusoidal",
    "sinusoidal_shift",
]

#: How :func:`rope` pairs the components: RoFormer's neighbours, or the two halves of Llama's code.
PAIRINGS = ("interleaved", "half")


def _check_base(base: object) -> float:
    value = as_real(base, "base", example="10000.0")
    if value <= 0:
        raise ValueError(f"base must be a finite positive number, got {value}")
    return value


#: The largest position float64 holds exactly (2⁵³): past it, neighbouring positions share an angle.
EXACT_POSITIONS = 2**53


def sinusoidal(n_positions: int, d_model: int, *, base: float = 10000.0, start: int = 0) -> np.ndarray:
    """The sinusoidal position encodings of the original transformer.

    Lesson 10 · 2. Absolute positions, added to the embeddings.

    Parameters
    ----------
    n_positions : int
        Number of positions ``start … start + n_positions − 1``.
    d_model : int
        Width of each encoding; an odd ``d_model`` ends with a sine column.
    base : float
        The wavelength base (10000 in the paper).
    start : int
        The first position (0 by default): ``sinusoidal(1, d, start=p)`` is the one row of
        position ``p``, computed without the ``p`` rows before it.

    Returns
    -------
    PE : (n_positions, d_model) float64
        ``PE[r, 2i] = sin(p / base**(2i/d_model))``, ``PE[r, 2i+1] = cos(p / base**(2i/d_model))``
        with ``p = start + r``.

    Raises
    ------
    ValueError
        A count below 1, a base that is not positive, a last position past 2⁵³ (float64 no longer
        tells it from its neighbour), or more entries than this machine's memory can hold.
    """
    n = as_positive_int(n_positions, "n_positions")
    d = as_positive_int(d_model, "d_model")
    b = _check_base(base)
    first = as_positive_int(start, "start", minimum=0)
    last = first + n - 1
    if last > EXACT_POSITIONS:
        raise ValueError(
            f"the last position, start + n_positions − 1 = {_count(last)}, is past 2**53, where float64 "
            "no longer tells a position from the next one"
        )
    needed = 8 * n * (d + (d + 1) // 2)  # bytes of PE and of its angles, float64
    too_large = ValueError(
        f"sinusoidal(n_positions, d_model) needs n_positions · d_model = {_count(n * d)} float64 entries "
        f"and their angles ({_count(needed // 2**30)} GiB), more than this machine can allocate; ask for "
        "fewer positions (start= gives the rows from a later position)"
    )
    memory = _physical_memory()
    if memory is not None and needed > memory:  # an allocator may promise more, then fail when it is used
        raise too_large
    try:
        PE = np.empty((n, d), dtype=np.float64)
        p = np.arange(first, first + n, dtype=np.float64)[:, None]  # (n, 1)
        even = np.arange(0, d, 2, dtype=np.float64)  # the 2i of every pair, (ceil(d/2),)
        with np.errstate(over="ignore"):
            angles = p / b ** (even / d)  # (n, ceil(d/2))
    except (ValueError, MemoryError):  # numpy: "array is too big", "Unable to allocate"
        raise too_large from None
    _check_angles(angles, f"sinusoidal({n}, {d}, base={b:g})")
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles[:, : d // 2])
    return PE


def sinusoidal_shift(k: float, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The matrix that moves a sinusoidal encoding ``k`` positions on: ``PE[p + k] = PE[p] @ M``.

    Lesson 10 · 2. Absolute positions, added to the embeddings.

    Pair ``i`` holds ``(sin a, cos a)`` with ``a = p·ω_i``, ``ω_i = base**(-2i/d_model)``, and
    ``sin(a + b) = sin a cos b + cos a sin b``, ``cos(a + b) = cos a cos b − sin a sin b`` with
    ``b = k·ω_i``: a rotation of the pair that does not depend on ``p``. ``M`` is block-diagonal,
    one 2 × 2 rotation per pair.

    Parameters
    ----------
    k : float
        The shift, in positions (negative moves back).
    d_model : int
        The (even) width of the encodings.
    base : float

    Returns
    -------
    M : (d_model, d_model) float64
        Block ``i`` (rows and columns ``2i, 2i+1``) is ``[[cos b, −sin b], [sin b, cos b]]``,
        ``b = k·ω_i``; every other entry is 0. Row vectors: ``PE[p + k] = PE[p] @ M``.

    >>> M = sinusoidal_shift(3, 4)
    >>> bool(np.allclose(sinusoidal(10, 4)[:7] @ M, sinusoidal(10, 4)[3:]))
    True
    """
    shift = as_real(k, "k", example="1")
    d = as_positive_int(d_model, "d_model")
    if d % 2:
        raise ValueError(
            f"only an even d_model has a shift matrix (the last sine column of an odd one has no "
            f"cosine to turn with), got d_model = {d}"
        )
    with np.errstate(over="ignore"):  # an overflow is named below
        b = shift * rope_frequencies(d, base=base)  # (d/2,): the angle each pair turns
    _check_angles(b, f"sinusoidal_shift({shift:g}, {d})")
    M = np.zeros((d, d))
    M[0::2, 0::2] = np.diag(np.cos(b))
    M[1::2, 1::2] = np.diag(np.cos(b))
    M[0::2, 1::2] = np.diag(-np.sin(b))
    M[1::2, 0::2] = np.diag(np.sin(b))
    return M


def half_to_interleaved(d: int) -> np.ndarray:
    """The permutation of the components from the half-split pairing to the interleaved one.

    Lesson 10 · 5. Two ways to pair the components.

    With ``order = half_to_interleaved(d)``, ``x[..., order]`` puts component ``i`` and component
    ``i + d/2`` (a pair of ``pairing="half"``) next to each other, at ``2i`` and ``2i + 1`` (a pair
    of ``pairing="interleaved"``), so that
    ``rope(x, pairing="half")[..., order] == rope(x[..., order], pairing="interleaved")``.
    ``np.argsort(order)`` goes back.

    Parameters
    ----------
    d : int
        The (even) width of the vectors.

    Returns
    -------
    order : (d,) int
        ``[0, d/2, 1, d/2 + 1, …, d/2 − 1, d − 1]``.

    >>> half_to_interleaved(6).tolist()
    [0, 3, 1, 4, 2, 5]
    """
    width = as_positive_int(d, "d")
    if width % 2:
        raise ValueError(f"rope rotates pairs of components, so d must be even, got d = {width}")
    half = width // 2
    return np.stack([np.arange(half), np.arange(half, width)], axis=1).reshape(width)


def rope_frequencies(d: int, *, base: float = 10000.0) -> np.ndarray:
    """The angle per position of each pair in :func:`rope`: ``θ_i = base**(-2i / d)``.

    Lesson 10 · 4. RoPE in d dimensions: pair by pair, several frequencies.

    Parameters
    ----------
    d : int
        The (even) width of the vectors rotated.
    base : float

    Returns
    -------
    theta : (d // 2,) float64
        ``theta[0] = 1`` (the fastest pair turns one radian per position), then slower and slower.
    """
    width = as_positive_int(d, "d")
    if width % 2:
        raise ValueError(f"rope rotates pairs of components, so d must be even, got d = {width}")
    b = _check_base(base)
    with np.errstate(over="ignore"):
        theta = b ** (-np.arange(0, width, 2, dtype=np.float64) / width)
    if not np.isfinite(theta).all():
        raise ValueError(
            f"base = {b:g} is so small that the frequencies base**(-2i/d) overflow for d = {width}; "
            "use a larger base (10000 in the paper)"
        )
    return theta


def rope(
    x: npt.ArrayLike,
    positions: npt.ArrayLike | None = None,
    *,
    base: float = 10000.0,
    pairing: str = "interleaved",
) -> np.ndarray:
    """Rotate every pair of components of each vector by its position.

    Lesson 10 · 3. RoPE: rotate the queries and the keys.

    Parameters
    ----------
    x : (..., n, d)
        Queries or keys, ``d`` even; a single vector ``(d,)`` is taken as ``n = 1`` at position 0
        unless ``positions`` says otherwise.
    positions : (..., n) array_like of real numbers, optional
        The position of each vector; by default ``0 … n − 1`` along axis −2. Broadcasts against
        the leading dimensions of ``x``.
    base : float
        The frequency base (10000 in the paper).
    pairing : {"interleaved", "half"}
        Which components form pair ``i``: ``(x[2i], x[2i+1])``, RoFormer's (the default), or
        ``(x[i], x[i + d/2])``, the ``rotate_half`` form of GPT-NeoX and Llama's code.

    Returns
    -------
    (..., n, d)
        ``x`` with pair ``i`` of the vector at position ``p`` rotated by the angle
        ``p · base**(-2i / d)``, computed in float64 and returned in the dtype of
        ``x`` (float32 stays float32).

    Raises
    ------
    ValueError
        ``d`` odd or 0; ``pairing`` not one of :data:`PAIRINGS`; positions that are not finite or
        do not fit the shape of ``x``; a base that is not finite and positive; an angle or a
        rotated pair beyond the float range.
    TypeError
        ``x`` or ``positions`` not real numbers (text, booleans, complex), ``base`` not a number.
    """
    if not isinstance(pairing, str) or pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")
    arr = as_real_array(x, "x")
    vectors = arr[None, :] if arr.ndim == 1 else arr  # (..., n, d)
    n, d = vectors.shape[-2:]
    if d == 0 or d % 2:
        raise ValueError(
            f"rope rotates pairs of components, so x's last dimension must be even and positive, "
            f"got x of shape {arr.shape}"
        )
    theta = rope_frequencies(d, base=base)  # (d/2,)
    pos = (
        np.arange(n, dtype=np.float64)
        if positions is None
        else _positions(positions, vectors.shape[:-1], arr.shape)
    )
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below
        # (..., n, d/2): the angle p · θ_i of each pair, once per position given (the rotation
        # broadcasts it over the rest: one row of positions for every batch and head)
        angles = pos[..., None] * theta
        rotated = rotate_pairs(vectors.astype(np.float64, copy=False), angles, pairing)
    _check_angles(angles, "rope's positions times its frequencies")
    largest = float(np.finfo(arr.dtype).max)
    if not (np.isfinite(rotated).all() and np.abs(rotated).max(initial=0.0) <= largest):
        raise ValueError(
            f"x is too large to rotate in {arr.dtype}: a pair longer than {largest:.3g} has no rotated "
            "form in that type (a rotation keeps the length); scale x down"
        )
    return rotated.astype(arr.dtype, copy=False).reshape(arr.shape)


def rotate_pairs(x: np.ndarray, angles: np.ndarray, pairing: str = "interleaved") -> np.ndarray:
    """:func:`rope`'s rotation of checked arrays; it trusts its arguments.

    Lesson 10 · 3. RoPE: rotate the queries and the keys. Pair ``i`` of each vector,
    ``(a, b)``, becomes ``(a cos φ − b sin φ, a sin φ + b cos φ)`` with ``φ = angles[..., i]``.
    A loop that rotates every layer's queries and keys (:func:`attnlib.decoder.generate`) calls it
    with angles made once.

    Parameters
    ----------
    x : (..., n, d) float64
        ``d`` even.
    angles : (..., n, d/2) float64
        Finite; broadcasts against ``x``'s pairs (``(n, d/2)`` for every batch and head at once).
    pairing : {"interleaved", "half"}
        As in :func:`rope`.

    Returns
    -------
    (..., n, d) float64
    """
    d = x.shape[-1]
    if pairing == "interleaved":  # the two components of every pair
        first, second = slice(0, None, 2), slice(1, None, 2)
    else:
        first, second = slice(0, d // 2), slice(d // 2, None)
    even, odd = x[..., first], x[..., second]
    cos, sin = np.cos(angles), np.sin(angles)
    rotated = np.empty(x.shape, dtype=np.float64)
    rotated[..., first] = even * cos - odd * sin
    rotated[..., second] = even * sin + odd * cos
    return rotated


def _physical_memory() -> int | None:
    """This machine's memory in bytes, or None where the system does not say (Windows)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _count(number: int) -> str:
    """A whole number for a message: with thousands separators, or its digits when it is huge."""
    return f"{number:,}" if number < 10**20 else f"about 1e{len(str(number)) - 1}"


def _check_angles(angles: np.ndarray, what: str) -> None:
    """Raise ValueError if an angle overflowed to infinity (a huge position or a tiny base)."""
    if not np.isfinite(angles).all():
        raise ValueError(
            f"{what} overflow: an angle is infinite (a position too large, or a base too small); "
            "use positions and a base whose angles position / base**(2i/d) fit in float64"
        )


def _positions(positions: npt.ArrayLike, leading: tuple[int, ...], x_shape: tuple[int, ...]) -> np.ndarray:
    """``positions`` as float64 of their own shape, checked to broadcast to ``leading`` (x's shape
    without its last axis), or a clear error."""
    if isinstance(positions, numbers.Real) or (isinstance(positions, np.ndarray) and positions.ndim == 0):
        positions = [positions]  # one position for every vector
    pos = as_real_array(positions, "positions").astype(np.float64)
    try:
        np.broadcast_to(pos, leading)  # a view, to check the shape: the angles are made from pos itself
    except ValueError as exc:
        raise ValueError(
            f"positions must give one position per vector of x: x has shape {x_shape}, so positions "
            f"must broadcast to {leading}, got shape {pos.shape}"
        ) from exc
    return pos
