"""A reduction's layout rules (codegen/fused: _trailing, _rows_contiguous) skip axes of one element. InstanceNorm2d
over x.unsqueeze(1).unsqueeze(1) (KernelBench level-2 28) reduces (1, B, 1, F) over axes 0, 2, 3: rows of F
contiguous elements. Counting axis 0 took them for a strided reduction, and the default schedule (a search of one
candidate ships it) tiled 64 rows x 64 elements in a loop: 16 programs for 1024 rows of 8192 on mi300x, predicted
1448 us where one persistent row a program moves the bytes in ~20. Unit tier: the rows are contiguous and the
default schedule holds a row in registers; interpreter tier: that schedule passes the referee."""

from __future__ import annotations

import pytest

from helpers import DATA, make_module, prepared, verify
from kerntailor.codegen import default_schedule
from kerntailor.codegen.fused import reduction_work_sizes

PATH = DATA / "codegen_fused" / "tiny_instancenorm_unsqueezed.py"


def _group():
    _, _, gen, plan = prepared(PATH)
    (group,) = [g for g in plan.groups if g.family == "reduction"]
    return gen, group


def test_axes_of_one_element_do_not_make_contiguous_rows_strided():
    gen, group = _group()
    assert [group.space[k] for k in group.reduce_axes] == [1, 1, 200]   # (1, 12, 1, 200) over axes 0, 2, 3
    assert "strided" not in reduction_work_sizes(gen, group)
    schedule = default_schedule(gen, group)
    assert schedule.persistent and schedule.RBLOCK == 256 and schedule.XBLOCK <= 4


@pytest.mark.interpreter
def test_the_default_schedule_of_unsqueezed_rows_passes_the_referee(tmp_path):
    verify(PATH, make_module(PATH), tmp_path)
