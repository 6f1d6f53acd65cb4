"""What several test modules share: problem paths, captured problems (each captured once per session),
generated modules, the referee, and the fake LLM server. Test modules import from here, never from each other.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import re
import threading
import time
import tokenize
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from kerntailor.capture.capture import capture_generalized, capture_problem
from kerntailor.codegen import FAMILIES, default_schedule, generate_module, refused_anchors
from kerntailor.ir.expr import Load, Op
from kerntailor.ir.nodes import Graph, GraphInput, Pointwise
from kerntailor.ir.types import TensorType, View
from kerntailor.plan import plan_fusion
from kerntailor.problem import load_problem

ROOT = Path(__file__).resolve().parent.parent
L1, L2, L3 = (ROOT / "problems" / f"level{i}" for i in (1, 2, 3))
DATA = Path(__file__).parent / "data"
CANDIDATES = Path(__file__).parent / "candidates"

# a target name per arch, for the kernel.py header (nothing else in the module depends on it)
TARGET_OF_ARCH = {"gfx942": "mi300x", "gfx950": "mi355x", "gfx90a": "mi250x", "sm_90": "h200", "sm_80": "a100"}


# --- captured problems and generated modules -------------------------------------------------------------

# Captures (torch.export of every variant: about a second per problem, the unit tier's main cost; and the default
# variant's alone, for test_plan.py's plans of every problem) are kept on disk between runs, keyed by the problem
# file's text, the dtype, torch's version and the source of every module a capture runs (capture/, ir/, problem/
# and the leaf modules): an edit there, or in the problem, captures afresh.
# test_capture.py and test_generalize.py test capture itself and never read this cache.
# KERNTAILOR_TEST_CAPTURE_CACHE=0 turns it off.
CAPTURE_CACHE = ROOT / ".pytest_cache" / "kerntailor-captures"
_CAPTURE_SOURCES = ("capture", "ir", "problem", "errors.py", "precision.py", "units.py")


@functools.cache
def _capture_code_digest() -> str:
    import torch

    h = hashlib.sha256(torch.__version__.encode())
    for name in _CAPTURE_SOURCES:
        root = ROOT / "src" / "kerntailor" / name
        for f in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            h.update(str(f.relative_to(ROOT)).encode() + f.read_bytes())
    return h.hexdigest()


def _cache_file(key: str) -> Path:
    return CAPTURE_CACHE / f"{hashlib.sha256(f'{_capture_code_digest()} {key}'.encode()).hexdigest()[:32]}.pickle"


def _cache_read(key: str):
    """What the disk cache holds under `key` (with the capture code's digest), or None."""
    if os.environ.get("KERNTAILOR_TEST_CAPTURE_CACHE") == "0":
        return None
    try:
        return pickle.loads(_cache_file(key).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def _disk_cached(key: str, compute, spec):
    """compute(spec), from the disk cache where it holds the result under `key`."""
    held = _cache_read(key)
    if held is not None:
        return held
    result = compute(spec)
    if os.environ.get("KERNTAILOR_TEST_CAPTURE_CACHE") == "0":
        return result
    try:
        data = pickle.dumps(result)
    except RecursionError:   # a capture too deep to pickle (level-3 34_VanillaRNNHidden's 256 steps): not cached
        return result
    file = _cache_file(key)
    CAPTURE_CACHE.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(file)   # atomic: a reader never sees half a file
    return result


def _generalized_key(spec) -> str:
    return f"{spec.content_hash} {spec.name} {spec.dtype}"


def captured(spec):
    """(Capture, Generalized) of a loaded problem: capture_generalized, from the disk cache where it holds one."""
    return _disk_cached(_generalized_key(spec), capture_generalized, spec)


def captured_variant(spec, variant: str = "default"):
    """capture_problem(spec, variant): one variant's Capture of a loaded problem (no other variant traced, no sizes
    fitted, so also for a problem whose sizes cannot be generalized), from the disk cache where it holds one; the
    default variant's also from a cached capture_generalized, whose first capture it is. A capture that raises is
    not cached."""
    if variant == "default" and (held := _cache_read(_generalized_key(spec))) is not None:
        return held[0]
    return _disk_cached(f"variant {variant} {spec.content_hash} {spec.name} {spec.dtype}",
                        lambda s: capture_problem(s, variant), spec)


@functools.cache
def loaded(path: Path, dtype: str | None = None):
    """load_problem(path, dtype), once per session (a ProblemSpec is frozen): the test modules that load every
    problem file share these loads (about 0.1 s each)."""
    return load_problem(path, dtype=dtype)


def prepared(path: Path, dtype: str | None = None):
    """(ProblemSpec, Capture, Generalized, Plan) of a problem file, the plan as the planner makes it (kernel.py's
    header lists its groups in this order). Captured once per session (and cached on disk between sessions); the
    plan once per set of codegen's families (a test may take one away: conftest's `library_conv`)."""
    return _prepared(path, dtype, tuple(FAMILIES))


@functools.cache
def _prepared(path: Path, dtype: str | None, families: tuple[str, ...]):
    spec = loaded(path, dtype)
    cap, gen = captured(spec)
    return spec, cap, gen, plan_fusion(gen.graph, families, library=refused_anchors(gen.graph))


def make_module(path: Path, knobs: dict[str, dict] | None = None, dtype: str | None = None, arch: str = "gfx942"):
    """The generated module of a problem: every group under its default schedule, with `knobs[family]` (a
    family's knob overrides) in place of those knobs of each group of that family."""
    spec, _, gen, plan = prepared(path, dtype)
    schedules = {g.name: default_schedule(gen, g).retune((knobs or {}).get(g.family, {})) for g in plan.groups}
    return generate_module(spec, gen, plan, schedules, TARGET_OF_ARCH.get(arch, arch), arch)


def gemm_module(path: Path, knobs: dict | None = None, dtype: str | None = None, arch: str = "gfx942"):
    """make_module with knob overrides for the matmul groups only."""
    return make_module(path, {"matmul": knobs or {}}, dtype, arch)


def matmul_kernels(path: Path, module, dtype: str | None = None):
    """The kernels of a module's matmul groups (module.kernels are in launch order)."""
    plan = prepared(path, dtype)[3]
    return [k for g, k in zip(plan.launch_order(), module.kernels) if g.family == "matmul"]


def judge(path: Path, module, tmp_path: Path, dtype: str | None = None, settings=None, edges: bool | None = None):
    """The referee's verdict on a generated module (written to tmp_path/kernel.py).

    Without `settings`: the referee's defaults, but the edges stage (verify/edges.py) only on a GPU unless `edges`
    says otherwise. Under the interpreter that stage is slow (CPU, 2026-12-02, load ~6: a generated GEMM +
    logsumexp judged in 33 s without it and 51 s with it, mostly waiting out ROWS_INTERPRETER_S on a rows case
    that does not answer there), the codegen test files make dozens of verdicts, and CI has 90 minutes. The
    stage keeps its own interpreter tests (test_verify_edges.py, test_verify_cheaters.py), runs in every
    `generate` test (the pipeline's own referee settings) and in the GPU tier here."""
    from kerntailor.verify import VerifySettings, verify_candidate

    if settings is None:
        settings = VerifySettings(edges=_gpu() if edges is None else edges)
    out = tmp_path / "kernel.py"
    out.write_text(module.source)
    return verify_candidate(prepared(path, dtype)[0], out, settings)


def _gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def verify(path: Path, module, tmp_path: Path, dtype: str | None = None, edges: bool | None = None):
    """judge(), asserting a pass (the module's source in the message when it fails)."""
    verdict = judge(path, module, tmp_path, dtype, edges=edges)
    assert verdict.passed, f"{path.stem}: {verdict.check}: {verdict.reason}\n{module.source}"
    return verdict


def numbers_in_code(source: str) -> set[int]:
    """Integer literals in code (not in comments or strings)."""
    out = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NUMBER:
            try:
                out.add(int(tok.string))
            except ValueError:
                pass
    return out


def normalize(source: str) -> str:
    """Drop what changes from run to run or with unrelated edits: date, version, problem-file hash."""
    source = re.sub(r"generated by kerntailor \S+ on \d{4}-\d{2}-\d{2}\.", "generated by kerntailor VERSION on DATE.",
                    source)
    return re.sub(r"Problem hash [0-9a-f]+", "Problem hash HASH", source)


# --- the LLM proposer's counterpart: a scripted OpenAI-compatible server ----------------------------------

RELU = CANDIDATES / "problems" / "relu_small.py"
OK = (CANDIDATES / "ok_relu.py").read_text()
# builds, but computes leaky ReLU: the referee's accuracy check fails, with numbers
WRONG = OK.replace("tl.where(x < 0, tl.zeros_like(x), x)", "tl.where(x < 0, 0.25 * x, x)")
assert WRONG != OK


def fenced(code: str, words: str = "Here is the kernel.") -> str:
    return f"{words}\n\n```python\n{code}```\n\nIt launches one program per block."


class FakeLLM:
    """POST /v1/chat/completions on 127.0.0.1, answering from a script; records every request it gets.

    A script entry is the reply text, or a dict: text, prompt_tokens, completion_tokens, delay_s, status, raw (a
    body sent as it is with status 200, e.g. JSON cut off in transit). Each request is recorded with the
    monotonic time it arrived ("at").
    """

    def __init__(self, script: list, model: str = "scripted-coder"):
        self.script = list(script)
        self.model = model
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append({"path": self.path, "at": time.monotonic(), **body})
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                entry = fake.script.pop(0) if fake.script else "I have nothing more to say."
                entry = {"text": entry} if isinstance(entry, str) else entry
                time.sleep(entry.get("delay_s", 0))
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if "raw" in entry:
                    return self._send(200, None, raw=entry["raw"].encode())
                if entry.get("status", 200) != 200:
                    return self._send(entry["status"], {"error": {"message": entry["text"] or "scripted failure"}})
                prompt = sum(len(m["content"]) for m in body["messages"]) // 4
                usage = {"prompt_tokens": entry.get("prompt_tokens", prompt),
                         "completion_tokens": entry.get("completion_tokens", len(entry["text"]) // 4)}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                self._send(200, {"id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion",
                                 "created": 0, "model": body.get("model"), "usage": usage,
                                 "choices": [{"index": 0, "finish_reason": entry.get("finish_reason", "stop"),
                                              "message": {"role": "assistant", "content": entry["text"]}}]})

            def _send(self, status: int, payload: dict | None, raw: bytes | None = None):
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, at every test's teardown
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def prompt(self, i: int) -> str:
        """The user message of the i-th request."""
        return next(m["content"] for m in self.requests[i]["messages"] if m["role"] == "user")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- hand-built graphs -----------------------------------------------------------------------------------

def strided_graph(b: int, kv: int, n: int, batch_stride: int) -> Graph:
    """k (b, kv, n) read through a view whose batch stride is given (the key operand of a GQA attention)."""
    k = GraphInput("k", TensorType((b, kv, n), "fp32"), "input", "0")
    pw = Pointwise("pw0", (View("k", (b, kv, n), (batch_stride, n, 1), 0),), TensorType((b, kv, n), "fp32"), "exp",
                   expr=Op("exp", (Load(0, "fp32"),), "fp32"))
    return Graph((k,), (pw,), (View.of("pw0", (b, kv, n)),), (TensorType((b, kv, n), "fp32"),))


# (b, kv, n): default, small, odd, probe; the batch is 1 where kv_heads changes (sdpa_gqa.py's variants, 2026-12-02)
GQA_SIZES = [(2, 2, 40), (1, 2, 16), (1, 1, 21), (2, 2, 25)]


# ---- report.html / bench.html (kerntailor.generate.html) ----

class Numbers(HTMLParser):
    """(data-key, data-value, the text shown) of every element carrying a data-key in a report.html,
    bench.html or profile.html page (kerntailor.htmlpage.num)."""

    def __init__(self):
        super().__init__()
        self.found: list[list] = []
        self._open = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a:
            self._open = [a["data-key"], json.loads(a["data-value"]), ""]
            self.found.append(self._open)

    def handle_data(self, data):
        if self._open is not None:
            self._open[2] += data

    def handle_endtag(self, tag):
        self._open = None


def lookup(document, key: str):
    for part in key.split("/"):
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def shown_value(text: str) -> tuple[float, float]:
    """The number a cell shows ('3564.1 us', '3.04x', '8.556e+09', '17', '16.8%': 0.168) and half a unit of its
    last digit."""
    token = text.split()[0].removesuffix("x")
    scale = 0.01 if token.endswith("%") else 1.0
    token = token.removesuffix("%")
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return float(token) * scale, 0.5 * 10.0 ** (int(exponent or 0) - decimals) * scale


def check_page_numbers(page: str, document: dict, must: set[str]) -> None:
    """Every number `page` tags equals the one at its key in `document` (report.json, bench.json or profile.json),
    and is shown as that number (to the digits shown); the keys in `must` are among them."""
    import pytest

    parser = Numbers()
    parser.feed(page)
    keys = {k for k, _, _ in parser.found}
    assert must <= keys, f"not shown: {sorted(must - keys)}"
    for key, value, text in parser.found:
        assert lookup(document, key) == value, key
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        shown, half_unit = shown_value(text)
        if text.endswith(" us") and (key.endswith("_s") or key.endswith("/seconds")):   # seconds shown in us
            value = value * 1e6
        assert shown == pytest.approx(value, rel=1e-9, abs=half_unit * 1.001), (key, text)


def without_matplotlib(monkeypatch) -> list[str]:
    """matplotlib made unimportable for the test, and the HTML writer's warnings collected (returned list)."""
    import builtins

    from kerntailor.generate import html

    real, said = builtins.__import__, []
    monkeypatch.setattr(html.log, "warning", lambda *args: said.append(args[0] % args[1:]))

    def refuse(name, *args, **kwargs):
        if name == "matplotlib":
            raise ImportError("no matplotlib")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    return said


class FakeTimer:
    """A stand-in for the GPU worker (generate/evaluate.py's Evaluator.measure): times each module by
    `seconds(knobs)` (the candidate config's knobs), or fails it where that is None; keeps the sources it saw."""

    def __init__(self, seconds):
        self.seconds, self.sources = seconds, []

    def measure(self, evals) -> None:
        for e in evals:
            self.sources.append(e.source)
            value = self.seconds(dict(e.config.knobs))
            if value is None:
                e.error = "wrong result on the default inputs"
            else:
                e.seconds, e.label = value, "measured"
