"""The conv group's LIBRARY knob (codegen/conv.py's ConvSchedule): the convolution is the library's, the group's
kernel its epilogue and tail, reading the library's output tile by tile.

    {conv0_lib} = torch.ops.aten.convolution.default(x, w, None, ...).contiguous()     # host, before the launch
    acc = conv0_lib[n, c, o..] over the tile's rows (n, o..) x columns c, in fp32         # the kernel

The call is the library group's (codegen/library.py's call_text), so any convolution the library runs takes it:
forward, transposed, grouped, depthwise, 1-d to 3-d (cuDNN, MIOpen). With channels_last its input and weight are
given channels-last (the input copied per call by a tiled kernel, the weight once per weight, as the library group's
channels_last) and its output is read as it comes, (N, *S, C): a tile row's BLOCK_N channels are then contiguous,
where NCHW's tile is contiguous along the rows. Which one cuDNN or MIOpen runs faster no model here predicts: the
search times both (generate/group_search.py's library_product_trial).

The tile is the implicit GEMM's (rows: output positions (n, o..), wrapped into range, so the loads need no mask;
columns: every output channel, no grid over the convolution's groups), so the epilogue, the row tail over the
channels and the column tail over the positions are conv.py's own (its _finish), as gemm's LIBRARY knob reads
torch.matmul's product (gemm/operands.py). Each output is stored once; the library's output is never copied.

Why (#19 item 3): measured, this is a candidate beside the generated schedules, timed as the GEMM's library product
is, where before a conv problem whose generated module lost was generated a whole second time with its convolutions
as library groups (200-260 s for level-2 files on the H200 instead of 36-120 s).

Refused (takes_library): a group with nothing after its convolution (a plain convolution: its library group is that
call without a kernel) or with only a pointwise epilogue that another group reads; channels_last for a 1-d
convolution (torch has no such memory format).
"""

from __future__ import annotations

from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GridAxis
from kerntailor.codegen.library import CHANNELS_LAST, call_text, host_helpers, output_shape
from kerntailor.codegen.sizes import product
from kerntailor.ir.nodes import Conv, Reduction


def takes_library(group, graph) -> bool:
    """Whether conv group `group` takes the LIBRARY knob: something after its convolution that the knob's kernel
    fuses at least as well as generate's second pass (the library group, then the plan of what follows it:
    generate/pipeline.py) would. That is a reducing tail (the convolution's output never written) or an epilogue
    whose result leaves the module. A pointwise epilogue that another group reads is better left to the second pass,
    which fuses it into that group as a prologue; the knob writes it once more (the H200, bf16, 2026-12-04 fourth
    session, call 3: level-2 35 1200 us with the knob against 965 by the second pass, 46 1504 against 1007, 17 1450
    against 1270). A plain convolution's library group is the same call without a copy."""
    if len(group.nodes) < 2:
        return False
    if any(isinstance(graph.node(n), Reduction) for n in group.nodes[1:]):
        return True
    leaving = {view.base for view in graph.outputs}
    return all(out in leaving for out in group.outputs)


def tile_coords(out, column: bool, S: str) -> None:
    """The program's tile from `tile` (its index among num_m x num_n): pid_m, pid_n, its rows rm and channels rn. With
    a column tail (`column`) the rows are positions of one image, `img`, S positions each (the tail's reductions run
    over one image's positions). Shared by the generated convolution (codegen/conv.py) and the library
    convolution's tail kernel (write_library)."""
    if column:
        out("img = tile // (num_m * num_n)  # the image")
        out("tile = tile % (num_m * num_n)")
    out("pid_m = tile // num_n")
    out("pid_n = tile % num_n")
    if column:
        out("rs = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # the image's positions")
        out(f"rm = img * {S} + rs")
    else:
        out("rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)")
    out("rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)")


def write_library(w, conv: Conv):
    """The kernel body up to the accumulator, on conv.py's writer `w`: the host line that runs the library's
    convolution, then `acc`, this program's tile of its output, with the coordinates, masks and tile names the
    epilogue and tails read. Returns (grid, how, (rows, columns)) for the writer's _finish."""
    group, schedule = w.group, w.schedule
    if not schedule.LIBRARY:
        raise CodegenUnsupported(f"{conv.name}: channels_last takes the library's convolution (LIBRARY=1)")
    if not takes_library(group, w.gen.graph):
        raise CodegenUnsupported(f"{group.name}: a plain convolution, or a pointwise epilogue another group reads "
                                 "(generate's second pass runs the library group and fuses it there)")
    if schedule.channels_last and len(conv.out.shape) not in CHANNELS_LAST:
        raise CodegenUnsupported(f"{conv.name}: no channels-last memory format for a {len(conv.out.shape)}-d tensor")
    space = output_shape(w.gen, conv)
    rows, positions = product([space[0], *space[2:]]), product(space[2:])
    if rows is None or positions is None:
        raise CodegenUnsupported(f"{conv.name}: output sizes are not products of sizes")
    t = w.sizes.text
    M, N, S = t(rows), t(space[1]), t(positions)
    text, call, layout = call_text(w.gen, conv, w.host_names, schedule.channels_last)
    buffer = f"{conv.name}_lib"
    keep = f".contiguous(memory_format={layout})" if layout else ".contiguous()"
    line = (f"{{{buffer}}} = {text}{keep}  # the library's convolution ({'channels-last' if layout else 'NCHW'}), "
            "its epilogue the kernel's")
    w.add_host_buffer(buffer, line, conv.out.dtype, *host_helpers([line]))

    w.out(f"pid = {'tl.program_id(0).to(tl.int64)' if w.big else 'tl.program_id(0)'}")
    w.out(f"num_m = tl.cdiv({S if w.column else M}, BLOCK_M)")
    w.out(f"num_n = tl.cdiv({N}, BLOCK_N)")
    w.out("tile = pid")
    tile_coords(w.out, w.column, S)
    # rows (n, o..) and channels wrapped into range: every load is in bounds, rows and channels past them never stored
    w.out(f"mw = rm % {M}")
    w.out(f"cw = rn % {N}")
    rest = "mw"
    for k in range(len(space) - 1, 1, -1):
        w.out(f"r{k} = {rest} % {t(space[k])}")
        w.out(f"q{k} = {rest} // {t(space[k])}")
        rest = f"q{k}"
    w.out(f"r0 = {rest}")
    if layout:   # (N, *S, C): row mw's channels contiguous
        offset = f"mw[:, None] * {N} + cw[None, :]"
    else:        # (N, C, *S): position mw - r0·S of image r0, channel planes S apart
        offset = f"(r0[:, None] * {N} + cw[None, :]) * {S} + (mw - r0 * {S})[:, None]"
    w.out(f"acc = tl.load({w.pointer(buffer)} + {offset}).to(tl.float32)  # the library's output, this tile")
    w.out(f"mmask = rs[:, None] < {S}" if w.column else f"mmask = rm[:, None] < {M}")
    w.out(f"nmask = rn[None, :] < {N}")
    for k in (0, *range(2, len(space))):
        w.out(f"i{k} = r{k}[:, None]")
    w.out("i1 = cw[None, :]  # the output channel")
    w.coords = {k: f"i{k}" for k in range(len(space))}
    w.rows = ["om", "i0", *(f"i{k}" for k in range(2, len(space)))]
    w.tile = "[BLOCK_M, BLOCK_N]"
    w.full_mask = "mmask & nmask"
    bm, bn = schedule.BLOCK_M, schedule.BLOCK_N
    grid = GridAxis(((positions, bm), (space[1], bn), (space[0], 1)) if w.column else
                    ((rows, bm), (space[1], bn)))
    how = (f"The library's convolution ({call.dotted}, {'channels-last' if layout else 'NCHW'}) before the launch, "
           "read tile by tile: one BLOCK_M (n, positions) x BLOCK_N (channels) tile per program")
    return grid, how, (rows, space[1])
