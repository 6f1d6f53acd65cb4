"""Stage: generate. The main job end to end: problem + target → verified kernel.py + report."""

from kerntailor.generate.pipeline import GenerateResult, GenerateSettings, GroupResult, generate

__all__ = ["GenerateResult", "GenerateSettings", "GroupResult", "generate"]
