"""The candidate process: the only referee process that runs candidate code.

    python -m kerntailor.verify.candidate SPEC.json      (started by the judge, judge.py)

It enters its sandbox (sandbox.py) before anything else is imported, then serves the judge's requests on
the socket it inherited, one at a time:

    load        import the candidate file (a copy in its private home); ModelNew must be an nn.Module class
    construct   ModelNew(*init_inputs) for a variant, in the problem's dtype, with the reference's state_dict
    inputs      keep a draw's inputs (pristine: each run gets a clone)
    run         forward once: allocations poisoned with a byte, program order reversed when asked, every
                PyTorch operator observed (observe.py); reply with the outputs and the facts only this
                process can see (an output that shares memory with an input, an input that changed)
    alloc       (GPU) allocate tensors and export them by CUDA IPC, for the judge to fill
    release     drop the exported outputs once the judge has copied them
    time        after the verdict: candidate vs eager vs torch.compile of the reference (the problem is
                sent only now), the GPU's timing lock held by the judge on request
    bye         exit

It holds no reference output and no reference module (until `time`), and nothing it says is a verdict:
the judge compares the outputs it receives. What it reports about itself (an exception, an operator it
ran, aliasing, a changed input) can only make the candidate fail, but for one: at an edge case (edges.py)
a named exception is a refusal that passes, one its forward could as well raise itself. A candidate that
rewrote this process's own code (the observer, the poison) could keep such facts back, not change how its
outputs are judged, and the static check's rule "reach" names the code it would take. Its timings (`time`)
are its own report too: the judge checks them against the physics floor only.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import sys
from pathlib import Path
from typing import Any

CUDA_CRASH_MARKERS = ("illegal memory access", "misaligned address", "unspecified launch failure",
                      "device-side assert", "CUDA error", "an illegal instruction", "HIP error")


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")[:500]


def error_facts(exc: BaseException) -> dict[str, Any]:
    """What the judge reads of an exception to tell a named refusal (verify/edges.py): its class's and base
    classes' names and its message."""
    return {"types": [c.__name__ for c in type(exc).__mro__][:12], "message": str(exc)[:2000]}


def classify(exc: BaseException) -> tuple[str, str]:
    """("crash", reason) for memory errors and dead CUDA contexts, else ("exception", reason)."""
    from kerntailor.verify.interp import IllegalMemoryAccess

    e: BaseException | None = exc
    while e is not None:
        if isinstance(e, IllegalMemoryAccess):
            return "crash", str(e)[:500]
        e = e.__cause__ or e.__context__
    text = str(exc)
    if any(m in text for m in CUDA_CRASH_MARKERS):
        return "crash", _one_line(exc)
    return "exception", f"forward raised {_one_line(exc)}"


def load_candidate(path: str):
    """Import a candidate file as a fresh module (its folder first on sys.path)."""
    import importlib.util

    path_obj = Path(path).resolve()
    name = f"kerntailor_candidate_{path_obj.stem}"
    sys.path.insert(0, str(path_obj.parent))
    spec = importlib.util.spec_from_file_location(name, path_obj)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Server:
    """Answers the judge's requests (module docstring), in order, until `bye`."""

    def __init__(self, chan, spec: dict[str, Any]):
        import torch

        self.chan, self.spec = chan, spec
        self.device = torch.device(spec["device"])
        self.allowed = None if spec.get("allowed_ops") is None else frozenset(spec["allowed_ops"])
        self.model_new = None
        self.models: dict[str, Any] = {}
        self.current = None
        self.namespace: dict[str, Any] = {}   # kernel.py's module dict, once loaded (op_load)
        self.defaults: dict[str, int] = {}
        self.inputs: list[Any] = []
        self.slots: dict[int, Any] = {}
        self.keep: list[Any] = []
        self.ipc = False
        # verification runs strict fp32, as the judge's reference does (PyTorch's defaults put cuDNN
        # convolutions on tf32: an allowed library convolution must not be looser than the reference);
        # `time` restores the defaults for the baselines
        self.tf32_defaults = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False

    def serve(self) -> None:
        while True:
            header, segments = self.chan.recv()
            op = header.get("op")
            payload = pickle.loads(segments[0]) if segments else None   # from the judge: trusted
            handler = getattr(self, f"op_{op}", None)
            try:
                reply, out = handler(header, payload) if handler else ({"ok": False, "reason": f"no op {op}"}, [])
            except Exception as e:   # a failure of this server, not of the candidate's forward
                reply, out = {"ok": False, "check": "referee", "reason": f"candidate process: {_one_line(e)}"}, []
            self.chan.send(reply, out)
            if op == "bye":
                return

    # ---- requests ----
    def op_load(self, header, _):
        import torch

        try:
            module = load_candidate(self.spec["candidate"])
        except BaseException as e:  # the candidate's import can raise anything
            return {"ok": False, "reason": f"importing the candidate raised {_one_line(e)}"}, []
        model_new = getattr(module, "ModelNew", None)
        if not isinstance(model_new, type) or not issubclass(model_new, torch.nn.Module):
            return {"ok": False, "reason": "ModelNew is not an nn.Module class"}, []
        self.model_new = model_new
        # kernel.py's module-level integers as loaded: each construct starts from them (set_constants)
        self.namespace = vars(module)
        self.defaults = {k: v for k, v in self.namespace.items() if type(v) is int}
        return {"ok": True}, []

    def set_constants(self, constants: dict) -> None:
        """kernel.py's copies of the problem's size constants at a variant's values (the defaults where it sets
        none): a constructor that reads a module-level size (an RNN's `batch_size`) then builds ModelNew at the
        variant's sizes, as the reference's module is built. Only integers kernel.py already defines change."""
        for name, value in self.defaults.items():
            self.namespace[name] = value
        for name, value in constants.items():
            if name in self.defaults and type(value) is int:
                self.namespace[name] = value

    def op_ipc_probe(self, header, _):
        import torch

        from kerntailor.verify.channel import export_cuda

        t = torch.arange(256, dtype=torch.int32, device=self.device)
        self.keep = [t]
        return {"ok": True, "ipc": export_cuda(t)}, []

    def op_ipc(self, header, _):
        self.ipc = bool(header.get("on"))
        self.keep = []
        return {"ok": True}, []

    def op_alloc(self, header, _):
        import torch

        from kerntailor.verify.channel import _dtypes, export_cuda

        dtypes = _dtypes()
        handles = []
        for slot, (dtype, numel) in zip(header["ids"], header["specs"]):
            t = torch.empty(int(numel), dtype=dtypes[dtype], device=self.device)
            self.slots[slot] = t
            handles.append(export_cuda(t) if t.numel() else None)
        return {"ok": True, "handles": handles}, []

    def _unship(self, value):
        import torch

        from kerntailor.verify.channel import Slot

        if isinstance(value, Slot):
            return self.slots.pop(value.id).as_strided(value.shape, value.stride, value.offset)
        if isinstance(value, torch.Tensor):
            return value.to(self.device) if value.device != self.device and value.device.type == "cpu" else value
        if isinstance(value, list):
            return [self._unship(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._unship(v) for v in value)
        if isinstance(value, dict):
            return {k: self._unship(v) for k, v in value.items()}
        return value

    def op_construct(self, header, payload):
        import torch

        from kerntailor.problem.spec import DTYPES

        init, state = self._unship(payload["init"]), self._unship(payload["state"])
        torch.manual_seed(payload["seed"])
        self.set_constants(payload.get("constants", {}))
        try:
            with torch.device(self.device):
                model = self.model_new(*init)
            model = model.to(self.device)
            if payload["dtype"] is not None:
                model = model.to(DTYPES[payload["dtype"]])
        except Exception as e:
            return {"ok": False, "check": "construct", "reason": f"ModelNew(*get_init_inputs()) raised "
                    f"{_one_line(e)}", "error": error_facts(e)}, []
        try:
            model.load_state_dict(state, strict=True)
        except Exception as e:
            msg = " ".join(str(e).split())
            return {"ok": False, "check": "state_dict",
                    "reason": f"the reference's state_dict does not load into ModelNew: {msg[:300]}"}, []
        self.current = model   # in the mode its constructor left it, as the reference (problem.load.build_model)
        if payload.get("keep", True):   # an edge case's model (verify/edges.py) is dropped with the next one
            self.models[payload["variant"]] = self.current
        return {"ok": True}, []

    def op_inputs(self, header, payload):
        self.inputs = self._unship(payload["inputs"])
        if not self.inputs and self.device.type == "cuda":
            import torch

            torch.cuda.empty_cache()   # let go (judge_edges.let_go): another job's case may need the memory
        return {"ok": True}, []

    def op_warm(self, header, payload):
        """One run of the constructed model on inputs this process draws itself (the judge's first draw of the
        variant, its own seed), before the judge takes the GPU's lock for the variant's judged runs (judge.warm).
        Not a judged run: its outputs are dropped and an exception is not reported (the judged runs meet it again);
        the process dying here is a crash as anywhere."""
        import torch

        from kerntailor.verify.draws import draw_inputs

        inputs = draw_inputs(payload["problem"], header["variant"], payload["draw"], payload["seed"], self.device)
        try:
            with torch.no_grad():
                self.current(*inputs)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        except Exception:   # noqa: BLE001 - the judged runs report it, with the inputs they judge
            pass
        del inputs
        if self.device.type == "cuda":
            torch.cuda.empty_cache()   # the judged draws come next, beside the float64 reference
        return {"ok": True}, []

    def op_run(self, header, _):
        import contextlib

        import torch

        from kerntailor.verify import checks as C
        from kerntailor.verify import interp
        from kerntailor.verify.channel import encode_values
        from kerntailor.verify.observe import Seen, observed
        from kerntailor.verify.poison import poison_device_cache, poisoned_allocations
        from kerntailor.verify.tolerance import flatten_outputs

        self.keep = []
        byte, reverse = int(header["byte"]), bool(header["reverse"])
        ins = [x.clone() if isinstance(x, torch.Tensor) else x for x in self.inputs]
        poison_device_cache(self.device, int(header["pool_bytes"]), byte)
        torch.manual_seed(int(header["seed"]))   # the reference's generator state (judge.py)
        watch = (contextlib.nullcontext(Seen()) if self.allowed is None else
                 observed(self.allowed, self.device.type))
        try:
            with torch.no_grad(), poisoned_allocations(byte), interp.reversed_grid(reverse), watch as seen:
                out = self.current(*ins)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        except Exception as e:
            check, reason = classify(e)
            return {"ok": False, "check": check, "reason": reason, "error": error_facts(e)}, []
        flat = flatten_outputs(out)
        descs, segments, keep = encode_values(flat, ipc=self.ipc)
        self.keep = keep
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return {"ok": True, "outputs": descs, "aliased": C.aliased(flat, ins),
                "changed": C.changed_inputs(ins, self.inputs), "library": seen.findings()[:20]}, segments

    def op_release(self, header, _):
        self.keep = []
        return {"ok": True}, []

    def op_time(self, header, payload):
        from kerntailor.measure import stopwatch
        from kerntailor.measure.baselines import time_functions
        from kerntailor.verify.draws import draw_inputs

        problem, seed = payload["problem"], payload["seed"]
        model = self.models.get("default")
        if model is None:
            return {"ok": False, "reason": "the default variant was not constructed"}, []
        import torch

        # the judged cases are over: their inputs and the allocator's cache of them would sit beside the timing's
        # own input set (measure/memory.py counts the timing step without them)
        self.inputs, self.keep, self.current = [], [], model
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        reference = problem.make_model("default", self.device, payload["model_seed"])

        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = self.tf32_defaults
        stopwatch.gpu_lock = self._judge_lock   # the judge holds the real lock (this process cannot see it)
        timings, input_sets, notes = time_functions(
            model, reference, make_inputs=lambda i: draw_inputs(problem, "default", "normal", seed + 99 + i,
                                                                self.device),
            compile_mode=payload["compile_mode"], tf32=payload["tf32"], device=self.device)
        if self.device.type == "cuda":
            # what this process held at its peak against the job's ledger reservation (measure/memory.py):
            # the admission's over-use by some jobs is not explained yet (issue #14), so every report says it
            notes = [*notes, f"candidate process GPU peak: {torch.cuda.max_memory_reserved(self.device) / 1e9:.2f} GB "
                             f"reserved by its allocator, {torch.cuda.max_memory_allocated(self.device) / 1e9:.2f} "
                             "GB allocated (judging and timing)"]
            del reference
            torch.cuda.empty_cache()   # what timing cached is of no further use here
        return {"ok": True, "timings": [t.to_dict() for t in timings.values()], "input_sets": input_sets,
                "notes": notes}, []

    def _judge_lock(self, device):
        import contextlib

        @contextlib.contextmanager
        def held():
            self.chan.send({"op": "lock"})
            self.chan.recv()
            try:
                yield None
            finally:
                self.chan.send({"op": "unlock"})
                self.chan.recv()

        return held()

    def op_bye(self, header, _):
        return {"ok": True}, []


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text())
    sock = socket.socket(fileno=spec["fd"])
    os.set_inheritable(sock.fileno(), False)   # no child of the candidate gets the line to the judge
    source = Path(spec["source"]).read_bytes()
    from kerntailor.verify.sandbox import enter_sandbox, spec_from_json

    report = enter_sandbox(spec_from_json(json.dumps(spec["sandbox"])))
    # sandboxed from here on: the heavy imports, then the candidate
    home = Path(spec["sandbox"]["home"])
    (home / "src").mkdir(exist_ok=True)
    spec["candidate"] = str(home / "src" / Path(spec["source"]).name)
    Path(spec["candidate"]).write_bytes(source)

    import torch

    from kerntailor.verify.channel import Channel

    if spec["interpreter"]:
        from kerntailor.verify import interp

        interp.install()
        torch.set_num_threads(1)   # tiny tensors; several verifications may share the cores
    chan = Channel(sock, max_bytes=1 << 40)
    chan.send({"op": "hello", "sandbox": report.to_json(), "pid": os.getpid()})
    Server(chan, spec).serve()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
