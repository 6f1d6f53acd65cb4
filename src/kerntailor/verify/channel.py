"""The line between the judge and the candidate process: framed messages on a Unix socket pair.

A frame is a 4-byte big-endian length, a JSON header of that length, then the raw segments whose byte
lengths the header lists under "segments". What the two sides may put in them is not symmetric:

- judge -> candidate: a header and at most one pickled segment (init inputs, the state_dict, inputs). The
  judge is trusted; the candidate process may unpickle it.
- candidate -> judge: JSON and raw bytes only. The judge never unpickles, evaluates or imports anything the
  candidate sends; `decode_values` checks every field (dtype name, shape, byte count, IPC handle sizes)
  before it makes a tensor of it, and `Channel` caps every frame.

Tensors travel as raw bytes (CPU; and the GPU where CUDA IPC is refused) or, on the GPU, as CUDA IPC
handles of memory the *candidate* allocated: the judge maps it, copies, and lets go. The judge never shares
its own memory, so the candidate cannot read the reference or write into the judge's tensors.
"""

from __future__ import annotations

import base64
import json
import select
import socket
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any

MAX_HEADER = 4 << 20
MAX_DIMS = 16


class ProtocolError(Exception):
    """The other side sent something malformed, too large, or went away."""


class Overtime(Exception):
    """No reply by the channel's deadline (judge side): the candidate process is still at work, and the channel
    can carry nothing more (the reply would come later)."""


class Channel:
    """Framed messages over a connected stream socket. `alive()` (judge side) says whether the peer process
    still runs, so that a dead candidate whose child kept the socket open cannot hang the judge."""

    def __init__(self, sock: socket.socket, max_bytes: int = 1 << 30, alive: Callable[[], bool] | None = None):
        self.sock, self.max_bytes, self.alive = sock, max_bytes, alive
        self.deadline: float | None = None   # time.monotonic() past which a wait raises Overtime (with `alive`)

    def send(self, header: dict[str, Any], segments: Sequence[bytes | bytearray | memoryview] = ()) -> None:
        views = [memoryview(s).cast("B") for s in segments]
        data = json.dumps(dict(header, segments=[v.nbytes for v in views])).encode()
        self.sock.sendall(struct.pack(">I", len(data)) + data)
        for v in views:
            if v.nbytes:
                self.sock.sendall(v)

    def recv(self) -> tuple[dict[str, Any], list[bytearray]]:
        (n,) = struct.unpack(">I", self._exact(4))
        if n > MAX_HEADER:
            raise ProtocolError(f"a {n}-byte header (at most {MAX_HEADER})")
        try:
            header = json.loads(bytes(self._exact(n)))
        except (UnicodeDecodeError, ValueError) as e:
            raise ProtocolError(f"a header that is not JSON ({e})") from None
        if not isinstance(header, dict):
            raise ProtocolError("a header that is not a JSON object")
        sizes = header.get("segments", [])
        if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
            raise ProtocolError("bad segment sizes")
        if sum(sizes) > self.max_bytes:
            raise ProtocolError(f"{sum(sizes)} bytes of payload (at most {self.max_bytes})")
        return header, [self._exact(s) for s in sizes]

    def _exact(self, n: int) -> bytearray:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            if self.alive is not None:
                ready, _, _ = select.select([self.sock], [], [], 0.5)
                if not ready:
                    if not self.alive():
                        raise ProtocolError("the candidate process is gone")
                    if self.deadline is not None and time.monotonic() > self.deadline:
                        raise Overtime()
                    continue
            k = self.sock.recv_into(view[got:])
            if k == 0:
                raise ProtocolError("the candidate process closed the connection")
            got += k
        return buf


# --- tensors and values ------------------------------------------------------------------------------------

def _dtypes() -> dict[str, Any]:
    import torch

    names = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int8", "int16", "int32",
             "int64", "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
    return {n: getattr(torch, n) for n in names if hasattr(torch, n)}


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Opaque:
    """An output the candidate returned that is neither a tensor nor a plain number (its type name only)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"


def _host_bytes(t) -> memoryview:
    import torch

    c = t.detach().contiguous().cpu()
    if c.numel() == 0:
        return memoryview(b"")
    return memoryview(c.reshape(-1).view(torch.uint8).numpy())


def encode_values(values: Sequence[Any], *, ipc: bool) -> tuple[list[dict], list[memoryview], list[Any]]:
    """Candidate side: (descriptors, raw segments, tensors to keep alive until the judge has copied them).

    A CUDA tensor under `ipc` is copied into fresh memory of its own and exported as a CUDA IPC handle."""
    import torch

    descs, segments, keep = [], [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            t = v.detach()
            desc = {"kind": "tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape), "device": t.device.type}
            if ipc and t.is_cuda and t.numel() > 0:
                fresh = torch.empty(t.shape, dtype=t.dtype, device=t.device)
                fresh.copy_(t)
                desc["ipc"] = export_cuda(fresh)
                keep.append(fresh)
            else:
                data = _host_bytes(t)
                desc["nbytes"] = data.nbytes
                segments.append(data)
            descs.append(desc)
        elif v is None or isinstance(v, (bool, int, float)):
            descs.append({"kind": "value", "value": v})
        else:
            descs.append({"kind": "other", "type": type(v).__name__[:80]})
    return descs, segments, keep


def export_cuda(t) -> dict[str, Any]:
    """A CUDA IPC description of contiguous tensor `t`'s storage (torch's own sharing, as torch.multiprocessing
    does it): JSON fields only."""
    (device, handle, size, offset, ref_handle, ref_offset, event, event_sync) = t.untyped_storage()._share_cuda_()
    def b64(b: bytes | None) -> str | None:
        return base64.b64encode(b).decode() if b is not None else None

    return {"device": int(device), "handle": b64(handle), "size": int(size), "offset": int(offset),
            "ref_handle": b64(ref_handle), "ref_offset": int(ref_offset), "event": b64(event),
            "event_sync": bool(event_sync), "storage_offset": int(t.storage_offset())}


def _b64(d: dict, key: str, most: int, optional: bool = False) -> bytes | None:
    value = d.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > 4 * most:
        raise ProtocolError(f"bad IPC field {key}")
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        raise ProtocolError(f"bad IPC field {key}") from None
    if len(raw) > most:
        raise ProtocolError(f"bad IPC field {key}")
    return raw


def _int(d: dict, key: str) -> int:
    value = d.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ProtocolError(f"bad field {key}")
    return value


def import_cuda(ipc: dict, dtype, shape: tuple[int, ...], device):
    """Judge side: map the candidate's exported memory as a contiguous tensor of `shape`, through torch's own
    consumer (torch.multiprocessing.reductions.rebuild_cuda_tensor, with its cache of opened handles), from
    fields checked here: nothing the candidate sent is unpickled."""
    import torch
    from torch.multiprocessing.reductions import rebuild_cuda_tensor

    if not isinstance(ipc, dict):
        raise ProtocolError("bad IPC description")
    handle = _b64(ipc, "handle", 4096)
    ref_handle = _b64(ipc, "ref_handle", 1024)
    event = _b64(ipc, "event", 4096, optional=True)
    size, offset, ref_offset = _int(ipc, "size"), _int(ipc, "offset"), _int(ipc, "ref_offset")
    elem_offset = _int(ipc, "storage_offset")
    itemsize = torch.empty((), dtype=dtype).element_size()
    numel = 1
    for s in shape:
        numel *= s
    if (elem_offset + numel) * itemsize > size:
        raise ProtocolError("a CUDA IPC tensor larger than its storage")
    return rebuild_cuda_tensor(torch.Tensor, torch.Size(shape), _contiguous_strides(shape), elem_offset,
                               torch.UntypedStorage, dtype, device.index or 0, handle, size, offset, False,
                               ref_handle, ref_offset, event, bool(ipc.get("event_sync")))


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def decode_values(descs: Any, segments: list[bytearray], device, *, max_numel: int) -> list[Any]:
    """Judge side: the candidate's values as tensors on `device` (a private copy: nothing shared stays mapped),
    numbers, or Opaque. Raises ProtocolError on anything malformed."""
    import torch

    if not isinstance(descs, list) or len(descs) > 4096:
        raise ProtocolError("bad output list")
    dtypes = _dtypes()
    out, seg = [], iter(segments)
    for d in descs:
        if not isinstance(d, dict):
            raise ProtocolError("bad output descriptor")
        kind = d.get("kind")
        if kind == "value":
            v = d.get("value")
            if not (v is None or isinstance(v, (bool, int, float))):
                raise ProtocolError("bad value")
            out.append(v)
            continue
        if kind == "other":
            out.append(Opaque(str(d.get("type", "?"))[:80]))
            continue
        if kind != "tensor":
            raise ProtocolError(f"unknown kind {kind!r}")
        dtype = dtypes.get(d.get("dtype"))
        shape = d.get("shape")
        if dtype is None or not isinstance(shape, list) or len(shape) > MAX_DIMS or \
                not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise ProtocolError("bad tensor descriptor")
        numel = 1
        for s in shape:
            numel *= s
        if numel > max_numel:
            raise ProtocolError(f"an output of {numel} elements (at most {max_numel})")
        where = d.get("device")
        target = device if where == device.type else torch.device("cpu") if where == "cpu" else None
        if target is None:
            out.append(Opaque(f"tensor on {str(where)[:20]}"))
            continue
        if "ipc" in d:
            if target.type != "cuda":
                raise ProtocolError("a CUDA IPC handle for a host tensor")
            mapped = import_cuda(d["ipc"], dtype, tuple(shape), target)
            t = mapped.clone()
            torch.cuda.synchronize(target)
            del mapped
            out.append(t)
            continue
        data = next(seg, None)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if data is None or len(data) != numel * itemsize or d.get("nbytes") != len(data):
            raise ProtocolError("tensor bytes do not match its shape and dtype")
        flat = torch.frombuffer(data, dtype=torch.uint8) if numel else torch.empty(0, dtype=torch.uint8)
        t = flat.view(dtype).reshape(shape) if numel else torch.empty(shape, dtype=dtype)
        out.append(t.to(target) if target.type != "cpu" else t.clone())
    return out


class Slot:
    """In a judge -> candidate payload: a tensor whose storage the candidate allocated under this id (request
    `alloc`, flat) and the judge filled through CUDA IPC; the candidate rebuilds the view from shape, strides
    and offset."""

    __slots__ = ("id", "shape", "stride", "offset")

    def __init__(self, id: int, shape: tuple[int, ...], stride: tuple[int, ...], offset: int):
        self.id, self.shape, self.stride, self.offset = id, shape, stride, offset

    def __reduce__(self):
        return (Slot, (self.id, self.shape, self.stride, self.offset))
