import sys, signal, traceback
sys.path.insert(0, "/work/main/tests")
from pathlib import Path
from helpers import make_module
from test_derived_size_order import read_before_assigned
class Slow(Exception): pass
def _raise(*a): raise Slow("120 s")
signal.signal(signal.SIGALRM, _raise)
def main():
    files = sorted(Path("/work/shared/kernelbench").glob("level*/*.py"))
    for f in files:
        signal.alarm(120)
        try:
            src = make_module(f).source
            bad = read_before_assigned(src, "_launch_kernels")
            print(f"{f.parent.name}/{f.name}", "BAD" if bad else "ok", sorted(set(bad))[:5], flush=True)
        except BaseException as e:
            print(f"{f.parent.name}/{f.name}", "ERR", type(e).__name__, str(e)[:120].replace("\n"," "), flush=True)
        finally:
            signal.alarm(0)
if __name__ == "__main__":
    main()
