#!/usr/bin/env python3
"""torch_ops.py: PyTorch + Triton round-trip sample for the rr-tui recorder.

Exercises: cuBLAS matmul (arrives as cuLaunchKernelEx), elementwise add/mul,
full and row reductions (sum), softmax, and a Triton @triton.jit vector add
(Triton's own launcher, module from a Triton-built cubin). Inputs come from
torch.manual_seed; TF32 is off; no torch.compile and no CUDA graphs.
Run: python3 torch_ops.py
"""
import hashlib
import os

# Must be set before CUDA/cuBLAS initialise (documented for deterministic cuBLAS).
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def triton_add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](x, y, out, n, BLOCK=1024)
    return out


def digest(t):
    """sha256 of the tensor's raw bytes (first 16 hex digits)."""
    t = t.detach().contiguous().cpu()
    try:
        raw = t.numpy().tobytes()
    except Exception:                      # numpy missing: go through uint8 view
        raw = bytes(t.view(-1).view(torch.uint8).tolist())
    return hashlib.sha256(raw).hexdigest()[:16]


def main():
    assert torch.cuda.is_available(), "CUDA device required"
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True)
    dev = torch.device("cuda", 0)

    a = torch.randn(512, 512, device=dev, dtype=torch.float32)
    b = torch.randn(512, 512, device=dev, dtype=torch.float32)
    v = torch.randn(512 * 512 + 3, device=dev, dtype=torch.float32)   # odd size: masked tail

    results = {}
    results["matmul"] = a @ b                      # cuBLAS
    results["add"] = a + b                         # elementwise
    results["mul"] = a * b
    results["sum_all"] = results["matmul"].sum()   # full reduction
    results["sum_rows"] = a.sum(dim=1)             # row reduction
    results["softmax"] = torch.softmax(a, dim=1)
    results["triton_add"] = triton_add(v, v * 0.5)
    torch.cuda.synchronize()

    ref = v + v * 0.5
    assert torch.equal(results["triton_add"], ref), "triton add mismatch"

    total = hashlib.sha256()
    for name, t in results.items():
        d = digest(t)
        total.update(d.encode())
        print(f"torch_ops: {name:10s} shape={tuple(t.shape)} sha={d}")
    print(f"torch={torch.__version__} triton={triton.__version__} device={torch.cuda.get_device_name(0)}")
    print(f"checksum={total.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
