"""OK (softmax_rows), sandboxed: a correct row softmax that first looks, at import and in every forward, for
what a candidate must not reach, and raises naming whatever it found: a credential in its environment, in
the files under the homes it can name, or in the environment of any process it can see; the network (a
listener the test runs on 127.0.0.1); a file outside its own home. Expected to pass: it sees none of them.
tests/test_verify_sandbox.py fills SETTINGS (the planted secret, the fake home, the port, the canary folder).
"""
import os
import pwd
import socket

import torch
import torch.nn as nn
import triton
import triton.language as tl

SETTINGS = {}


def reachable() -> list[str]:
    found = []
    secret = SETTINGS["secret"]
    for name, value in os.environ.items():
        if secret in value or any(part in name.upper() for part in ("KEY", "TOKEN", "SECRET", "PASSWORD")):
            found.append(f"the environment variable {name}")
    homes = {os.path.expanduser("~"), pwd.getpwuid(os.getuid()).pw_dir, SETTINGS["home"]}
    for home in sorted(homes):
        for rel in (".ssh/id_rsa", ".aws/credentials", ".netrc", ".config/gh/hosts.yml"):
            try:
                with open(os.path.join(home, rel)) as f:
                    if f.read():
                        found.append(f"the file {home}/{rel}")
            except OSError:
                pass
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if secret.encode() in f.read():
                        found.append(f"the environment of process {pid}")
            except OSError:
                pass
    try:
        socket.create_connection(("127.0.0.1", SETTINGS["port"]), timeout=2).close()
        found.append("the test's listener")
    except OSError:
        pass
    try:
        with open(os.path.join(SETTINGS["canary"], "kerntailor-escaped"), "w") as f:
            f.write("written from the sandbox")
        found.append(f"a writable folder outside its home ({SETTINGS['canary']})")
    except OSError:
        pass
    return found


AT_IMPORT = reachable()


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n_cols)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        found = AT_IMPORT + reachable()
        if found:
            raise RuntimeError("the sandbox let me reach " + "; ".join(sorted(set(found))))
        if x.dim() != 2:
            raise ValueError(f"x has shape {tuple(x.shape)}: this kernel takes rows, a tensor of rank 2")
        block = triton.next_power_of_2(x.shape[1])
        if block > tl.TRITON_MAX_TENSOR_NUMEL:
            raise ValueError(f"x has rows of {x.shape[1]} elements: this kernel holds a row in one block")
        x = x.contiguous()
        y = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block)
        return y
