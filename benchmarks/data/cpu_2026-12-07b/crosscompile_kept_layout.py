"""Level-2 77 (or another file) with its library convolution kept channels-last, every group at its default under
that layout, each kernel cross-compiled for sm_90 (h200) with the specialization kernel_source gives: registers,
spills, global load widths; each TTGIR goes to /tmp. Usage (repository root, CPU):
    PYTHONPATH=src python benchmarks/data/cpu_2026-12-07b/crosscompile_kept_layout.py \
        ../shared/kernelbench/level2/77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool.py"""
import sys, re
sys.path.insert(0, "tests")
from pathlib import Path
from dataclasses import replace
from collections import Counter
from helpers import prepared
from kerntailor.codegen import default_schedule, generate_module, layout_defaults, FAMILIES
from kerntailor.search.families import SPACE_FAMILIES
from kerntailor.generate.kernels import kernel_source, build_text
from kerntailor.builder.compile import compile_here
from kerntailor.targets import get_target
def main():
    del FAMILIES["conv"]; del SPACE_FAMILIES["conv"]
    path = Path(sys.argv[1])
    spec, _, gen, plan = prepared(path)
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    lib = next(g for g in plan.groups if g.family == "library")
    base[lib.name] = replace(base[lib.name], channels_last=True)
    base.update(layout_defaults(gen, plan, base, [g.name for g in plan.groups]))
    m = generate_module(spec, gen, plan, base, "h200", "sm_90")
    for k in m.kernels:
        print(k.group, base[k.group].knobs())
        for kk in k.launches:
            if not kk.source: continue
            res, _ = compile_here(kernel_source(build_text(m, kk), kk, gen), get_target("h200"), keep_asm=True)
            f = res.facts
            print("  ", kk.kernel_name, res.ok, "regs", f.registers, "spills", f.spills, "loads", f.global_load_widths)
            import kerntailor.builder.compile as bc, triton
            orig = triton.compile
            def grab(*a, **kw):
                c = orig(*a, **kw)
                Path(f"/tmp/{kk.kernel_name}.ttgir").write_text(c.asm["ttgir"])
                return c
            triton.compile = grab
            compile_here(kernel_source(build_text(m, kk), kk, gen), get_target("h200"))
            triton.compile = orig
if __name__ == "__main__":
    main()
