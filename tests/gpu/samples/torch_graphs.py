#!/usr/bin/env python3
"""torch_graphs.py: PyTorch CUDA graphs for the rr-tui recorder.

    python3 torch_graphs.py capture   torch.cuda.graph: capture one step, replay it 3 times
    python3 torch_graphs.py compile   torch.compile(mode="reduce-overhead") (Inductor's CUDA graphs)

`capture` warms up eagerly on a smaller batch (so most graph kernels run with launch
configurations of their own), captures a step (cuBLAS matmul, bias, relu, softmax, a row sum,
an in-place update and a zero_) and replays it on new inputs copied into the static input.
`compile` runs a compiled step 5 times; Inductor runs it eagerly once, then records a graph
and replays it. Inputs come from torch.manual_seed; TF32 is off; deterministic algorithms.
The last line is `checksum=<16 hex digits>`.
"""
import hashlib
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch


def digest(t):
    t = t.detach().contiguous().cpu()
    return hashlib.sha256(t.numpy().tobytes()).hexdigest()[:16]


def setup():
    assert torch.cuda.is_available(), "CUDA device required"
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True)
    return torch.device("cuda", 0)


def capture(dev):
    w = torch.randn(256, 256, device=dev)
    bias = torch.randn(256, device=dev)
    acc = torch.zeros(256, device=dev)

    def step(x):
        y = torch.relu(x @ w + bias) * 0.5
        y = torch.softmax(y, dim=1)
        acc.add_(y.sum(dim=0))
        scratch = torch.empty_like(y)
        scratch.zero_()
        return y + scratch

    # Eager warm-up on a side stream, as torch.cuda.graph's documentation asks.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(torch.randn(64, 256, device=dev))
    torch.cuda.current_stream().wait_stream(side)
    acc.zero_()

    static_x = torch.randn(1024, 256, device=dev)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = step(static_x)
    outs = []
    for i in range(3):
        static_x.copy_(torch.randn(1024, 256, device=dev) * (i + 1))
        g.replay()
        outs.append(static_y.clone())
    outs.append(acc.clone())
    return outs


def compile_step(dev):
    w = torch.randn(512, 512, device=dev)

    @torch.compile(mode="reduce-overhead")
    def step(x):
        y = torch.tanh(x @ w) * 1.5 + x
        return torch.softmax(y, dim=-1).sum(dim=0)

    outs = []
    for i in range(5):
        x = torch.randn(512, 512, device=dev) + i
        outs.append(step(x).clone())
    return outs


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "capture"
    dev = setup()
    outs = capture(dev) if mode == "capture" else compile_step(dev)
    torch.cuda.synchronize()
    total = hashlib.sha256()
    for i, t in enumerate(outs):
        d = digest(t)
        total.update(d.encode())
        print(f"torch_graphs {mode}: output {i} sha={d}")
    print(f"checksum={total.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
