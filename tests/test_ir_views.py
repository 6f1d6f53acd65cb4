"""View algebra against torch.

Every View op must describe exactly the elements torch's view op selects. A View is built over a buffer
holding arange(n) (its value at an address *is* the address), torch applies the same op to that buffer
viewed through `as_strided` with the View's (shape, strides, offset), and the two index maps are compared
element by element: View address map == torch result values. Reshape must return None exactly when
torch's `.view()` refuses (a copy would be needed).
"""

from __future__ import annotations

import itertools
import random
from math import prod

import numpy as np
import pytest
import torch

from kerntailor.ir.types import View, contiguous_strides

# --- helpers -------------------------------------------------------------------------------------------

def addresses(view: View) -> np.ndarray:
    """The View's index map: address of every element, as an array of the View's shape."""
    out = np.full(view.shape, view.offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(view.shape, view.strides)):
        shape = [1] * len(view.shape)
        shape[axis] = size
        out = out + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return out


def storage_size(view: View) -> int:
    """Elements the buffer must hold for `view` (non-negative strides)."""
    if view.numel == 0:
        return view.offset + 1
    return view.offset + sum((s - 1) * st for s, st in zip(view.shape, view.strides)) + 1


def as_torch(view: View) -> torch.Tensor:
    """torch's as_strided view of an arange buffer with exactly the View's shape, strides and offset."""
    assert all(st >= 0 for st in view.strides), "as_strided takes no negative strides"
    buf = torch.arange(storage_size(view), dtype=torch.int64)
    return buf.as_strided(view.shape, view.strides, view.offset)


def assert_same(view: View, t: torch.Tensor, what: str) -> None:
    assert tuple(view.shape) == tuple(t.shape), f"{what}: shape {view.shape} != torch {tuple(t.shape)}"
    assert len(view.strides) == len(view.shape), f"{what}: {len(view.strides)} strides for {view.shape}"
    got = addresses(view)
    want = t.numpy() if t.numel() else np.zeros(t.shape, dtype=np.int64)
    if t.numel():
        assert np.array_equal(got, want), f"{what}: View {view} addresses\n{got}\n!= torch\n{want}"


def random_base(rng: random.Random) -> View:
    """A View of a buffer: random shape, permuted strides, maybe an offset, a gap or a broadcast axis."""
    ndim = rng.randint(0, 4)
    shape = tuple(rng.choice([1, 2, 3, 4, 5]) for _ in range(ndim))
    # lay the dims out in memory in a random order (a permuted, possibly padded, contiguous tensor)
    order = list(range(ndim))
    rng.shuffle(order)
    strides = [0] * ndim
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= shape[d] + (1 if rng.random() < 0.2 else 0)  # sometimes a gap: not contiguous
    if ndim and rng.random() < 0.15:
        d = rng.randrange(ndim)
        strides[d] = 0  # a broadcast (expanded) axis
    offset = rng.choice([0, 0, 3, 7])
    return View("x", shape, tuple(strides), offset)


# --- one op at a time, many shapes ------------------------------------------------------------------------

SHAPES = [(), (1,), (5,), (2, 3), (3, 1, 4), (2, 3, 4), (1, 1, 3), (4, 1, 1, 2), (2, 3, 2, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_of_is_contiguous(shape):
    v = View.of("x", shape)
    assert v.strides == contiguous_strides(shape) == torch.empty(shape).stride()
    assert v.is_contiguous and not v.is_broadcast
    assert_same(v, torch.arange(prod(shape)).reshape(shape), "of")


@pytest.mark.parametrize("shape", [s for s in SHAPES if len(s) >= 2], ids=str)
def test_every_permutation(shape):
    base = View.of("x", shape)
    t = as_torch(base)
    for perm in itertools.permutations(range(len(shape))):
        assert_same(base.permute(perm), t.permute(perm), f"permute{perm}")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unsqueeze_every_position(shape):
    base = View.of("x", shape)
    t = as_torch(base)
    for dim in range(-len(shape) - 1, len(shape) + 1):
        v = base.unsqueeze(dim)
        assert_same(v, t.unsqueeze(dim), f"unsqueeze({dim})")
        assert v.squeeze((dim,)).shape == base.shape


@pytest.mark.parametrize("shape", [(1,), (3, 1, 4), (1, 1, 3), (4, 1, 1, 2), (1, 2, 1)], ids=str)
def test_squeeze_dim_subsets(shape):
    base = View.of("x", shape).permute(tuple(reversed(range(len(shape)))))
    t = as_torch(base)
    n = len(base.shape)
    for r in range(n + 1):
        for dims in itertools.combinations(range(-n, n), r):
            if len({d % n for d in dims}) != len(dims):
                continue
            assert_same(base.squeeze(dims), t.squeeze(dims), f"squeeze{dims}")


@pytest.mark.parametrize("shape", [(5,), (2, 3), (3, 1, 4), (2, 3, 4)], ids=str)
def test_slices(shape):
    base = View.of("x", shape).permute(tuple(reversed(range(len(shape)))))
    t = as_torch(base)
    for dim, size in enumerate(base.shape):
        for start in range(-size - 1, size + 2):
            for end in range(-size - 1, size + 2):
                for step in (1, 2, 3):
                    index = [slice(None)] * len(base.shape)
                    index[dim] = slice(start, end, step)
                    v = base.slice(dim, start, end, step)
                    assert_same(v, t[tuple(index)], f"slice(dim={dim}, {start}:{end}:{step})")


@pytest.mark.parametrize("shape", [(5,), (2, 3), (3, 1, 4), (2, 3, 4)], ids=str)
def test_select_every_index(shape):
    base = View.of("x", shape).slice(0, 0, shape[0], 1).permute(tuple(reversed(range(len(shape)))))
    base = View(base.base, base.shape, base.strides, 5)  # with an offset
    t = as_torch(base)
    for dim, size in enumerate(base.shape):
        for index in range(-size, size):
            assert_same(base.select(dim, index), t.select(dim, index), f"select({dim}, {index})")


@pytest.mark.parametrize("shape", [(5,), (2, 3), (3, 1, 4), (2, 3, 4)], ids=str)
def test_flip_dim_subsets(shape):
    base = View.of("x", shape)
    t = as_torch(base)
    n = len(shape)
    for r in range(1, n + 1):
        for dims in itertools.combinations(range(n), r):
            v = base.flip(dims)
            assert_same(v, torch.flip(t, dims), f"flip{dims}")
            assert v.flip(dims) == base, "flipping twice is the identity"


@pytest.mark.parametrize("shape,target", [
    ((1,), (4,)), ((3, 1), (3, 5)), ((1, 4), (2, 3, 4)), ((2, 1, 3), (4, 2, 5, 3)), ((), (2, 2)),
    ((3,), (2, 3)), ((1, 1), (1, 1)),
], ids=str)
def test_expand(shape, target):
    base = View("x", shape, contiguous_strides(shape), 2)
    t = as_torch(base)
    v = base.expand(target)
    assert_same(v, t.expand(target), f"expand{target}")
    assert v.is_broadcast == (prod(target) > prod(shape))


def test_expand_rejects_what_torch_rejects():
    base = View.of("x", (2, 3))
    for target in [(3, 3), (2, 4), (3,)]:
        with pytest.raises(RuntimeError):
            as_torch(base).expand(target)
        with pytest.raises(ValueError):
            base.expand(target)


# --- reshape: strides express it exactly when torch's view() does ----------------------------------------

def _shapes_of(numel: int, max_ndim: int = 4) -> list[tuple[int, ...]]:
    """Every shape with this many elements, up to max_ndim dims (sizes > 1), plus a few with 1s."""
    out: list[tuple[int, ...]] = [()] if numel == 1 else []

    def rec(rest: int, prefix: tuple[int, ...]) -> None:
        if rest == 1 and prefix:
            out.append(prefix)
            return
        if len(prefix) == max_ndim:
            return
        for f in range(2, rest + 1):
            if rest % f == 0:
                rec(rest // f, prefix + (f,))

    rec(numel, ())
    with_ones = [s[:1] + (1,) + s[1:] for s in out if s] + [(1,) + s for s in out] + [s + (1,) for s in out]
    return out + with_ones


def check_reshape(base: View, target: tuple[int, ...]) -> bool:
    """Compares View.reshape with torch's view(); True if the view exists."""
    t = as_torch(base)
    got = base.reshape(target)
    try:
        want = t.view(target)
    except RuntimeError:
        assert got is None, f"{base}.reshape({target}) gave {got}, but torch's view() needs a copy"
        assert t.reshape(target).shape == target  # (a copy is possible, just not a view)
        return False
    assert got is not None, f"{base}.reshape({target}) is None, but torch views it with strides {want.stride()}"
    assert got.base == base.base and got.offset == base.offset
    assert_same(got, want, f"reshape{target}")
    return True


@pytest.mark.parametrize("shape", [(2, 3, 4), (4, 6), (2, 1, 6), (12,), (3, 4, 1)], ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "permuted", "sliced", "broadcast"])
def test_reshape_matches_torch_view(shape, layout):
    base = View("x", shape, contiguous_strides(shape), 3)
    n = len(shape)
    if layout == "transposed" and n >= 2:
        base = base.permute(tuple(range(n - 2)) + (n - 1, n - 2))
    elif layout == "permuted":
        base = base.permute(tuple(reversed(range(n))))
    elif layout == "sliced":  # a row-sliced (padded) layout: rows are contiguous, the whole is not
        wide = shape[:-1] + (shape[-1] + 2,)
        base = View("x", wide, contiguous_strides(wide), 1).slice(n - 1, 1, shape[-1] + 1, 1)
    elif layout == "broadcast":
        base = View("x", shape, tuple(0 if i == 0 else st for i, st in enumerate(contiguous_strides(shape))), 0)
    viewed = [check_reshape(base, target) for target in _shapes_of(base.numel)]
    if layout == "contiguous":
        assert all(viewed), "every reshape of a contiguous view is a view"
    dense = all(st == c for sz, st, c in zip(base.shape, base.strides, contiguous_strides(base.shape)) if sz != 1)
    if layout in ("transposed", "permuted") and not dense:
        assert not all(viewed), "some reshape of a permuted view needs a copy"


def test_reshape_wrong_numel_raises():
    with pytest.raises(ValueError):
        View.of("x", (2, 3)).reshape((7,))


# --- random chains of ops ---------------------------------------------------------------------------------

def _random_step(rng: random.Random, v: View, t: torch.Tensor):
    """One random op applied to both; returns (name, view, tensor) or None when the op does not apply."""
    n = len(v.shape)
    kind = rng.choice(["permute", "unsqueeze", "squeeze", "slice", "select", "flip", "expand", "reshape"])
    if kind == "permute":
        perm = list(range(n))
        rng.shuffle(perm)
        return f"permute{perm}", v.permute(tuple(perm)), t.permute(perm)
    if kind == "unsqueeze":
        dim = rng.randint(-n - 1, n)
        return f"unsqueeze({dim})", v.unsqueeze(dim), t.unsqueeze(dim)
    if kind == "squeeze" and n:
        dims = tuple(d for d in range(n) if rng.random() < 0.5)
        return f"squeeze{dims}", v.squeeze(dims), t.squeeze(dims)
    if kind == "slice" and n:
        dim = rng.randrange(n)
        size = v.shape[dim]
        start, end, step = rng.randint(-size, size), rng.randint(-size, size + 1), rng.randint(1, 3)
        index = [slice(None)] * n
        index[dim] = slice(start, end, step)
        return f"slice({dim}, {start}:{end}:{step})", v.slice(dim, start, end, step), t[tuple(index)]
    if kind == "select" and n:
        dim = rng.randrange(n)
        if v.shape[dim] == 0:
            return None
        index = rng.randint(-v.shape[dim], v.shape[dim] - 1)
        return f"select({dim}, {index})", v.select(dim, index), t.select(dim, index)
    if kind == "flip" and n:
        dims = tuple(d for d in range(n) if rng.random() < 0.5) or (0,)
        return f"flip{dims}", v.flip(dims), torch.flip(t, dims)
    if kind == "expand":
        lead = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 1)))
        target = lead + tuple(rng.randint(2, 3) if s == 1 else s for s in v.shape)
        return f"expand{target}", v.expand(target), t.expand(target)
    if kind == "reshape" and all(st >= 0 for st in v.strides):
        target = rng.choice(_shapes_of(v.numel, 3)) if v.numel else None
        if target is None:
            return None
        got = v.reshape(target)
        tt = as_torch(v)
        try:
            viewed = tt.view(target)
        except RuntimeError:
            assert got is None, f"{v}.reshape({target}) = {got}; torch needs a copy"
            return None
        assert got is not None, f"{v}.reshape({target}) is None; torch views it"
        return f"reshape{target}", got, viewed
    return None


@pytest.mark.parametrize("seed", range(8))
def test_random_chains_match_torch(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(150):
        v = random_base(rng)
        t = as_torch(v)
        assert_same(v, t, "base")
        trail = [str(v)]
        for _ in range(rng.randint(1, 5)):
            step = _random_step(rng, v, t)
            if step is None:
                continue
            name, v, t = step
            trail.append(name)
            assert_same(v, t, " -> ".join(trail))
            checked += 1
            if v.numel == 0 or v.numel > 4096:
                break
    assert checked > 300
