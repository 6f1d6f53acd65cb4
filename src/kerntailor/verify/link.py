"""The judge's link to the candidate process: start it sandboxed, send it requests, read its replies, end it.

Used by judge.py only. Whatever the candidate process does wrong on this link (dies, closes it, sends
something malformed or too large) becomes a Stop ("crash") that says how it ended and the last line it
printed; what it sends is decoded by channel.py, never unpickled.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

INPUTS_NOT_ALLOCATED = "the candidate process did not allocate its inputs"


class Stop(Exception):
    """A failed check: ends the judge's run (raised by the judge, and here when the candidate process fails
    the link)."""

    def __init__(self, check: str, reason: str, **info: Any):
        super().__init__(reason)
        self.check, self.reason, self.info = check, reason, info


class CandidateProcess:
    """The judge's handle on the sandboxed candidate process: start it, ask it things, end it."""

    def __init__(self, spawn: dict[str, Any], workdir: Path):
        from dataclasses import asdict

        from kerntailor.verify.sandbox import sandbox_for

        self.workdir = workdir
        workdir.mkdir(mode=0o755)
        gpu = not spawn["interpreter"]
        sandbox, env = sandbox_for(workdir / "home", parent_pid=os.getpid(), gpu=gpu,
                                   cpu_seconds=int(2 * (spawn["timeout_s"] + spawn["time_timeout_s"])) + 60)
        parent, child = socket.socketpair()
        spec = dict(fd=child.fileno(), source=spawn["candidate"], device=spawn["device"],
                    interpreter=spawn["interpreter"], allowed_ops=spawn["allowed_ops"], sandbox=asdict(sandbox))
        (workdir / "spec.json").write_text(json.dumps(spec))
        self.log_path = workdir / "candidate.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "kerntailor.verify.candidate",
                                          str(workdir / "spec.json")], pass_fds=(child.fileno(),), env=env,
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=str(workdir), start_new_session=True)
        child.close()
        from kerntailor.verify.channel import Channel

        # replies are small but a run's outputs: the judge sets max_bytes to what they may weigh (Judge.case)
        self.chan = Channel(parent, max_bytes=64 << 20, alive=lambda: self.proc.poll() is None)
        self.ipc = False
        self._slot = 0

    def request(self, header: dict[str, Any], payload: Any = None, where: dict | None = None):
        """Send a request; its reply header and segments. A dead or misbehaving candidate process is a Stop."""
        from kerntailor.verify.channel import ProtocolError

        try:
            self.chan.send(header, [pickle.dumps(payload)] if payload is not None else [])
            return self.chan.recv()
        except (ProtocolError, OSError) as e:
            raise self.died(str(e), where or {}, during=str(header.get("op"))) from None

    def recv(self, where: dict | None = None):
        from kerntailor.verify.channel import ProtocolError

        try:
            return self.chan.recv()
        except (ProtocolError, OSError) as e:
            raise self.died(str(e), where or {}) from None

    def died(self, why: str, where: dict, during: str | None = None) -> Stop:
        """A Stop ("crash") that says how the candidate process ended, with the last line it printed."""
        import signal
        import time

        deadline = time.monotonic() + 2.0
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        code = self.proc.poll()
        if code is None:
            what = f"the candidate process broke the referee's protocol ({why})"
        elif code < 0:
            try:
                what = f"the candidate process died of {signal.Signals(-code).name}"
            except ValueError:
                what = f"the candidate process died of signal {-code}"
        else:
            what = f"the candidate process exited ({code})"
        steps = {"load": "while importing the candidate", "construct": "while constructing ModelNew",
                 "run": "during forward", "time": "while timing"}
        what += f" {steps[during]}" if during in steps else ""
        last = self.log_tail().splitlines()[-1:] or [""]
        return Stop("crash", f"{what}" + (f": {last[0][:200]}" if last[0] else ""), **where)

    def log_tail(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 4000))
                return f.read().decode(errors="replace").strip()
        except OSError:
            return ""

    def ship(self, value: Any, where: dict) -> Any:
        """`value` made ready for a judge -> candidate payload: over CUDA IPC, the storage of each top-level CUDA
        tensor is copied into memory the candidate allocates, and the candidate rebuilds the same view (shape,
        strides, offset); otherwise tensors travel pickled from the host (strides kept)."""
        import torch

        from kerntailor.verify.channel import Slot, dtype_name, import_cuda

        if isinstance(value, dict):
            keys = list(value)
            shipped = self.ship([value[k] for k in keys], where)
            return dict(zip(keys, shipped))
        if not isinstance(value, (list, tuple)):
            return value
        items = list(value)
        picks = [i for i, v in enumerate(items) if isinstance(v, torch.Tensor) and v.is_cuda and v.numel() > 0]
        if self.ipc and picks:
            ids = list(range(self._slot, self._slot + len(picks)))
            self._slot += len(picks)
            flats = [self._flat_storage(items[i]) for i in picks]
            specs = [[dtype_name(f.dtype), f.numel()] for f in flats]
            reply, _ = self.request({"op": "alloc", "ids": ids, "specs": specs}, where=where)
            handles = reply.get("handles")
            if not reply.get("ok") or not isinstance(handles, list) or len(handles) != len(picks):
                why = f": {str(reply.get('reason'))[:300]}" if reply.get("reason") else ""
                raise Stop("crash", f"{INPUTS_NOT_ALLOCATED}{why}", **where)
            for slot, i, flat, handle in zip(ids, picks, flats, handles):
                dst = import_cuda(handle, flat.dtype, (flat.numel(),), flat.device)
                dst.copy_(flat)
                torch.cuda.synchronize(flat.device)
                del dst
                t = items[i]
                items[i] = Slot(slot, tuple(t.shape), tuple(t.stride()), t.storage_offset())
        items = [v.detach().cpu() if isinstance(v, torch.Tensor) and v.is_cuda else v for v in items]
        return type(value)(items) if isinstance(value, tuple) else items

    @staticmethod
    def _flat_storage(t):
        """The whole storage under tensor `t`, as a flat tensor of its dtype."""
        import torch

        n = t.untyped_storage().nbytes() // t.element_size()
        return torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage(), 0, (n,), (1,))

    def close(self) -> None:
        import signal

        if self.proc.poll() is None:
            try:
                self.chan.send({"op": "bye"})
            except OSError:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        self.proc.wait()
