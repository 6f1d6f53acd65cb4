#!/usr/bin/env bash
# GPU call (issue #22 item 4): on the one-GPU H200, `bench --ray` of a small suite (relu, layernorm, conv2d: two
# generated kernels and a library path) against the local bench of the same suite; their verdicts must be equal.
#
# How Ray gets to the H200 box: it has no Ray, reaches no package index, and a call carries at most 64 MiB, while
# the ray 2.60.0 wheel is 79 MB (260 MB installed with its 13 dependencies). So it travels as a trimmed bundle:
# Ray's core (raylet, GCS, _raylet.so and the Python package) without the Java jars, the dashboard's web client and
# the libraries bench never imports (rllib, data, serve, tune, train, llm, air), with its pure-Python dependencies,
# xz-compressed: 30.2 MB at xz -6 (22.7 MB at -9; measured 2026-12-03: extracted, it ran `ray.init` and the killed-worker
# probe on the CPU machine).
# Build it ONCE on the development machine, from the folder `pip install --target` filled:
#   bash benchmarks/gpu_calls/ray_small_suite.sh bundle /work/wt/ray-site     # writes .ray-bundle/ray-core.tar.xz
# then run this script on the device with carry [".ray-bundle"] (.gitignore keeps it out of git). The wheel is
# built for one CPython (.ray-bundle/python; checked below): the H200 box runs 3.12, so for it download the cp312
# wheel (`pip download ray==2.60.0 jsonschema jsonschema-specifications referencing rpds-py --python-version 3.12
# --platform manylinux2014_x86_64 --only-binary=:all: --no-deps`), unzip each keeping its file modes, and bundle
# with BUNDLE_PACKAGES="ray jsonschema jsonschema_specifications referencing rpds" (the box has the others).
set -u
if [ "${1:-}" = bundle ]; then
  site=${2:?the folder pip install --target ray==2.60.0 filled}
  mkdir -p .ray-bundle
  (cd "$site" && tar -cf - --exclude=ray/jars --exclude=ray/rllib --exclude=ray/data --exclude=ray/serve \
     --exclude=ray/tune --exclude=ray/train --exclude=ray/llm --exclude=ray/air --exclude=ray/dashboard/client \
     --exclude=__pycache__ ${BUNDLE_PACKAGES:-ray msgpack google yaml _yaml click jsonschema jsonschema_specifications \
     referencing rpds attr attrs requests urllib3 idna certifi charset_normalizer packaging filelock typing_extensions.py} \
     ./*.dist-info) | xz -T2 -6 > .ray-bundle/ray-core.tar.xz
  grep -h "^Tag:" "$site"/ray-*.dist-info/WHEEL | head -1 | cut -d' ' -f2 | cut -d- -f1 > .ray-bundle/python   # cp312
  ls -la .ray-bundle/ray-core.tar.xz
  exit 0
fi

OUT=${OUT:-/tmp/ray_small_suite}
mkdir -p "$OUT" /tmp/ray-site
python3 -c "import sys; t = 'cp%d%d' % sys.version_info[:2]; b = open('.ray-bundle/python').read().strip(); \
assert t == b, f'the bundle is for {b}, this python3 is {t}'" || exit 1
tar -xJf .ray-bundle/ray-core.tar.xz -C /tmp/ray-site || { echo "no .ray-bundle: build it first (header)"; exit 1; }
export PYTHONPATH=src:/tmp/ray-site PYTHONUNBUFFERED=1
python3 -c 'import ray, torch; print("ray", ray.__version__, "| gpus", torch.cuda.device_count())'
ONLY=${ONLY:-"--only relu --only layernorm --only conv2d"}
ARGS=${ARGS:-"--target h200 --candidates 4 --budget 20"}
T0=$(date +%s)
# each run with a store of its own: both search (neither is served from the other's winners)
KERNTAILOR_HOME=/tmp/kt-local timeout ${RUN_LIMIT:-280} python3 -m kerntailor bench problems $ONLY $ARGS --out /tmp/b_local \
  --json > "$OUT/local.json" 2> "$OUT/local.log"
echo "local rc=$? $(( $(date +%s) - T0 )) s"
KERNTAILOR_HOME=/tmp/kt-ray timeout ${RUN_LIMIT:-280} python3 -m kerntailor bench problems $ONLY $ARGS --out /tmp/b_ray --ray \
  --json > "$OUT/ray.json" 2> "$OUT/ray.log"
echo "ray rc=$? $(( $(date +%s) - T0 )) s"
tail -3 "$OUT/ray.log"
python3 - "$OUT/local.json" "$OUT/ray.json" <<'PY'
import json, sys
local, ray = (json.load(open(p)) for p in sys.argv[1:])
print("wall s: local", local["wall_s"], "| ray", ray["wall_s"])
same = True
for a, b in zip(local["rows"], ray["rows"]):
    verdict = lambda r: (r["problem"], r["status"], r["correct"], r.get("mode"), r.get("label"))
    same &= verdict(a) == verdict(b)
    print(verdict(a), "==" if verdict(a) == verdict(b) else "!=", verdict(b)[1:],
          "| time us", a.get("time_us"), b.get("time_us"), "| worker", b.get("worker"))
print("VERDICTS EQUAL" if same and len(local["rows"]) == len(ray["rows"]) else "VERDICTS DIFFER")
PY
