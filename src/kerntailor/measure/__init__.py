"""Stage: measure. Time kernels honestly on the GPU (stopwatch), against eager and torch.compile
(baselines), and place them under the roofline floor built from the machine's measured ceilings."""

from kerntailor.measure.baselines import TimingReport, time_candidate
from kerntailor.measure.ceilings import Ceilings, load_ceilings, measure_ceilings
from kerntailor.measure.cost import ProblemCost, problem_cost
from kerntailor.measure.floor import floor_of, physics_floor_s, roofline_floor_s
from kerntailor.measure.stopwatch import Timing, measure

__all__ = ["Ceilings", "ProblemCost", "Timing", "TimingReport", "floor_of", "load_ceilings", "measure",
           "measure_ceilings", "physics_floor_s", "problem_cost", "roofline_floor_s", "time_candidate"]
