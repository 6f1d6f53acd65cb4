"""GPU targets: the facts table, lookup and detection, occupancy and the roofline floor.

    from kerntailor.targets import get_target, occupancy, roofline_floor
    t = get_target("mi300x")
    occupancy(t, registers_per_thread=128, lds_bytes_per_block=16384, threads_per_block=256)
    roofline_floor(t, flops=2 * 8192**3, min_bytes=3 * 8192**2 * 2, dtype="fp16", matrix=True)
"""

from kerntailor.targets.lookup import (
    all_targets,
    describe_local_gpu,
    detect_local_target,
    get_target,
    match_device,
    resolve_target,
)
from kerntailor.targets.occupancy import Occupancy, occupancy
from kerntailor.targets.roofline import Ceilings, Floor, dtype_key, roofline_floor
from kerntailor.targets.spec import MatrixInstr, Target
from kerntailor.targets.table import TARGETS

__all__ = [
    "TARGETS",
    "Ceilings",
    "Floor",
    "MatrixInstr",
    "Occupancy",
    "Target",
    "all_targets",
    "describe_local_gpu",
    "detect_local_target",
    "dtype_key",
    "get_target",
    "match_device",
    "occupancy",
    "resolve_target",
    "roofline_floor",
]
