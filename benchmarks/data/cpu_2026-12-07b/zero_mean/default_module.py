"""The module the default schedules give for a problem (codegen defaults, mi300x/gfx942), written to a file.
Usage: PYTHONPATH=src python default_module.py PROBLEM.py OUT.py (repository root: tests/ on the path)."""
import sys
sys.path.insert(0, "tests")
from pathlib import Path
from helpers import prepared
from kerntailor.codegen import default_schedule, generate_module
def main():
    spec, _, gen, plan = prepared(Path(sys.argv[1]))
    base = {g.name: default_schedule(gen, g) for g in plan.groups}
    for g in plan.groups: print(g.name, g.family, base[g.name].knobs())
    m = generate_module(spec, gen, plan, base, "mi300x", "gfx942")
    Path(sys.argv[2]).write_text(m.source)
if __name__ == "__main__":
    main()
