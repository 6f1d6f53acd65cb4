"""decode_attention's scores and softmax fp32 with the schedule that failed the referee on the H200 on 2026-12-01
(its softmax looped, RBLOCK 512), judged twice: as emitted now (that kernel compiled with enable_fp_fusion=False)
and with FMA contraction allowed again (the control, which should fail the outlier draw). decode_attention itself is one
attention kernel since capture/rewrite_attention.py, so the problem judged is tests/data/codegen_fused/
decode_scores.py: the same batched GEMV and softmax (k0, k1), its scores returned. On a GPU machine, from the
repository root:

    PYTHONPATH=src python3 benchmarks/fma_contraction_check.py OUT.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import schedules_of  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCHEDULE = {  # the ieee pass's winners at d398287 (report.json of decode_attention)
    "k0": {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4, "num_warps": 16, "num_stages": 4,
           "split_k": 1, "precision": "ieee"},
    "k1": {"XBLOCK": 1, "RBLOCK": 512, "num_warps": 16, "num_stages": 2, "persistent": False},
}


def main() -> None:
    import torch
    import triton

    from kerntailor.capture.capture import capture_generalized
    from kerntailor.codegen import FAMILIES, generate_module
    from kerntailor.plan import plan_fusion
    from kerntailor.plan.fusion import Plan
    from kerntailor.problem import load_problem
    from kerntailor.verify import VerifySettings, verify_candidate

    spec = load_problem(ROOT / "tests" / "data" / "codegen_fused" / "decode_scores.py")
    _, gen = capture_generalized(spec)
    plan = Plan(plan_fusion(gen.graph, FAMILIES).launch_order())
    module = generate_module(spec, gen, plan, schedules_of(plan, SCHEDULE), "check", "sm_90")
    out: dict = {}
    for name, text in (("no_contraction", module.source),
                       ("contraction_allowed", module.source.replace(", enable_fp_fusion=False", ""))):
        path = Path(tempfile.mkdtemp()) / "kernel.py"
        path.write_text(text)
        verdict = verify_candidate(spec, path, VerifySettings(draws=3))
        out[name] = {"passed": verdict.passed, "check": verdict.check, "reason": verdict.reason, "mode": verdict.mode}
        print(name, verdict.passed, verdict.reason, flush=True)
    out["machine"] = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu (interpreter)"
    out["toolchain"] = f"torch {torch.__version__}, triton {triton.__version__}"
    out["command"] = "PYTHONPATH=src python3 benchmarks/fma_contraction_check.py " + sys.argv[1]
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
