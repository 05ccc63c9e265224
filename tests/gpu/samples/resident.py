"""A model-sized process (issue 20): GIB GiB of data resident on the GPU that the kernels do not
change, then five small elementwise kernels. With CHANGE > 0, that percentage of the resident
memory is rewritten before each small kernel (whole 1 GiB tensors, rounded; below 1 GiB, the
start of one tensor), as weights updated between steps would be.

    python3 resident.py GIB CHANGE [one]

With `one`, the GIB GiB are one allocation (the tensors are views into it), as a caching
allocator's large segment or a model's flat weight buffer holds many tensors. Prints the kernel
phase's time and checksums that a recorded run must reproduce."""
import sys
import time

import torch

gib = int(sys.argv[1])
change = float(sys.argv[2])
# 1 GiB each, every one different (constant tensors would make a changed one equal another).
one = len(sys.argv) > 3 and sys.argv[3] == "one"
g = torch.Generator(device="cuda").manual_seed(20)
if one:
    flat = torch.rand((gib << 28,), device="cuda", generator=g)
    big = list(flat.split(1 << 28))
else:
    big = [torch.rand((1 << 28,), device="cuda", generator=g) for _ in range(gib)]
x = torch.arange(1 << 16, device="cuda", dtype=torch.float32)
torch.cuda.synchronize()
per_step = round(gib * change / 100)
# Less than a GiB a step: that many elements at the start of one tensor (a different one a step).
part = 0 if per_step or change <= 0 else max(1, round(gib * change / 100 * (1 << 28)))
ops = [
    lambda a: a * 2.0,
    lambda a: a + 1.0,
    torch.sin,
    lambda a: torch.relu(a - 0.25),
    torch.exp,
]
t0 = time.perf_counter()
for k, op in enumerate(ops):
    for j in range(per_step):
        big[(k * per_step + j) % gib].add_(1.0)
    if part:
        big[k % gib][:part].add_(1.0)
    x = op(x)
torch.cuda.synchronize()
t1 = time.perf_counter()
print(
    f"kernel_phase_s={t1 - t0:.3f} changed_per_step_gib={per_step or part / (1 << 28):.3g} "
    f"checksum={x.double().sum().item():.9e} resident={sum(b[0].item() for b in big):.3f}"
)
