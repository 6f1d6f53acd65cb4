"""Load every file not in the new sweep; compare its derived variants with the 2026-12-04f sweep's column."""
import json, sys, time
from pathlib import Path
from kerntailor.errors import KerntailorError
from kerntailor.problem import load_problem
old = {r["file"]: r for r in json.load(open(sys.argv[1]))["rows"]}
done = set()
if len(sys.argv) > 2 and Path(sys.argv[2]).exists():
    done = {r["file"] for r in json.load(open(sys.argv[2]))["rows"]}
same = diff = 0
for f, r in sorted(old.items()):
    if f in done:
        continue
    t = time.time()
    try:
        p = load_problem(f)
        got = {v.name: v.describe() for v in p.variants if not v.is_default}
        status = "captured"
    except KerntailorError as e:
        got, status = None, "refused"
    want = r.get("variants") if r["status"] == "captured" else None
    ok = got == want or (r["status"] != "captured" and status == "refused")
    same += ok; diff += not ok
    print(json.dumps({"file": f, "same": ok, "seconds": round(time.time() - t, 2), **({} if ok else {"got": got, "want": want, "old_status": r["status"]})}), flush=True)
print("same", same, "different", diff)
