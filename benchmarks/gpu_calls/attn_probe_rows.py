"""One line per row of an attn_probe.py JSON (its schedules' times beside eager and torch.compile), for a GPU call's
summary: python3 benchmarks/gpu_calls/attn_probe_rows.py FILE.json"""
import json
import sys

for r in json.load(open(sys.argv[1]))["rows"]:
    print(r.get("problem"), r.get("schedule"), "| us", r.get("us"), "| eager", r.get("eager_us"), "| compile",
          r.get("compile_us"), "| vs eager", r.get("vs_eager"), "| GB/s", r.get("gb_s"), "| regs", r.get("regs"),
          "| spills", r.get("spills"), "| err", r.get("rel_err"), r.get("error", "")[:200])
