"""The host function kernel.py defines for a transposed convolution (codegen/conv.py, conv_phases.py), copied into
it as it is: the weight in the order the kernel reads it, copied once per weight."""


def _convt_weight(w, groups, axes, taps, align, taps_first=False):
    """Transposed convolution weight `w` (Cin, Cout_g, k_1..k_d) as (phases, groups, Cout_g, row): for each phase (the
    product over the axes of `axes[d]`, each phase along axis d a (first tap, tap step, taps) triple), group and
    output channel, a row of Cin_g x taps[0] x .. x taps[d-1] (ci, j_1..j_d) row-major, tap j the kernel's
    c + j·step; taps a phase lacks are zeros, and the row is padded with zeros to a multiple of `align` elements
    (16-byte aligned rows). `taps_first`: the row is (j_1..j_d, ci) instead, each tap's Cin_g channels padded to a
    multiple of `align` (the gather form's taps-outer loop, codegen/conv.py). The kernel's BLOCK_K x BLOCK_N weight
    tile is then contiguous along K (vector loads; `w` itself is contiguous along no axis of the tile). Kept on the
    tensor until it changes (its address, version, shape or strides), as _channels_last_weight keeps its copy; a
    weight computed in forward is copied per call."""
    key = (w.data_ptr(), w._version, tuple(w.shape), tuple(w.stride()), w.dtype, groups, axes, taps, align,
           taps_first)
    cached = getattr(w, "_kerntailor_convt", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    n_groups, n_align, sizes = int(groups), int(align), [int(t) for t in taps]   # ints: host arithmetic only
    cin_g, cout_g = w.shape[0] // n_groups, w.shape[1]
    count, phases = cin_g, 1
    for t, axis in zip(sizes, axes):
        count, phases = count * t, phases * len(axis)
    source = w.detach().unflatten(0, (n_groups, cin_g)).transpose(1, 2)   # (groups, Cout_g, Cin_g, k_1..k_d)
    if taps_first:
        cin_p = (cin_g + n_align - 1) // n_align * n_align
        out = w.new_zeros((phases, n_groups, cout_g, count // cin_g * cin_p))
        target = out.unflatten(3, (*sizes, cin_p)).narrow(3 + len(sizes), 0, cin_g)   # (.., Cout_g, T.., Cin_g)
        source, tail = source.movedim(2, -1), (slice(None),)                          # (groups, Cout_g, k.., Cin_g)
    else:
        out = w.new_zeros((phases, n_groups, cout_g, (count + n_align - 1) // n_align * n_align))
        target = out.narrow(3, 0, count).unflatten(3, (cin_g, *sizes))   # (phases, groups, Cout_g, Cin_g, T..)
        tail = ()
    for p in range(phases):
        rest, picked, placed = p, [], []
        for axis in reversed(axes):   # phase p's index along each axis, the last fastest
            c, step, n = axis[rest % len(axis)]
            rest //= len(axis)
            picked.insert(0, slice(c, c + (n - 1) * step + 1, step) if n else slice(0, 0))
            placed.insert(0, slice(0, n))
        if all(s.stop > s.start for s in placed):
            target[p][(Ellipsis, *placed, *tail)].copy_(source[(Ellipsis, *picked, *tail)])
    w._kerntailor_convt = (key, out)
    return out
