"""y = x @ W^T + b with tl.dot in IEEE fp32 (exact products, fp32 accumulation): a correct candidate for
linear_small under the default (fp32) tolerance. Parameters live in self.linear so the state_dict loads."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   PRECISION: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)   # int64 offsets: rm * sxm may pass 2^31
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rm[:, None] * sxm + rk[None, :] * sxk,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)          # (BLOCK_M, BLOCK_K)
        b = tl.load(w_ptr + rn[None, :] * swn + rk[:, None] * swk,
                    mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)          # (BLOCK_K, BLOCK_N) = W^T
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc += bias[None, :]
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, acc.to(y_ptr.dtype.element_ty),   # bf16 out for bf16 in
             mask=(rm[:, None] < M) & (rn[None, :] < N))


PRECISION = "ieee"


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        K = x.shape[-1]
        x2 = x.reshape(-1, K)                            # (M, K): any leading axes, as nn.Linear takes them
        M = x2.shape[0]
        N = self.linear.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        w = self.linear.weight
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        _linear_kernel[grid](x2, w, self.linear.bias, y, M, N, K, x2.stride(0), x2.stride(1), w.stride(0),
                             w.stride(1), y.stride(0), y.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
                             PRECISION=PRECISION)
        return y.reshape(*x.shape[:-1], N)
