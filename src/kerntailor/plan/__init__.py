"""Stage 3: plan. Partition the IR graph into fusion groups, one kernel each."""

from kerntailor.plan.fusion import FusionGroup, Plan, plan_fusion

__all__ = ["FusionGroup", "Plan", "plan_fusion"]
