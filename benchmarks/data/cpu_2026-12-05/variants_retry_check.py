"""Every file's derived variants now vs the 12-04f sweep's (a child per file, 120 s limit)."""
import json, sys, subprocess, time
d = json.load(open("/work/main/benchmarks/data/cpu_2026-12-04f/kernelbench_sweep_cpu_2026-12-04f.json"))
out = []
code = ("import sys,json,warnings; warnings.filterwarnings('ignore'); from kerntailor.problem import load_problem; "
        "p=load_problem(sys.argv[1]); print(json.dumps({v.name: v.describe() for v in p.variants if not v.is_default}))")
for r in d["rows"]:
    if not r.get("variants"):
        continue
    t = time.time()
    try:
        proc = subprocess.run([sys.executable, "-c", code, r["file"]], capture_output=True, text=True, timeout=120,
                              env={"PYTHONPATH": "/work/main/src", "PATH": "/usr/bin:/bin"})
        now = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {"error": proc.stderr[-300:]}
    except subprocess.TimeoutExpired:
        now = {"error": "timeout"}
    row = {"file": r["file"].split("kernelbench/")[1], "before": r["variants"], "now": now, "s": round(time.time() - t, 1)}
    out.append(row)
    if now != r["variants"]:
        print("CHANGED", row, flush=True)
json.dump(out, open("/tmp/vcompare.json", "w"), indent=1)
print("done", len(out), sum(1 for o in out if o["now"] != o["before"]))
