# The GPU suite's parts (sourced by run-suite.sh, run-part.sh and run-parts.sh; data only).
# One line a part: NAME|FILE|SECONDS|NEEDS|DESCRIPTION
#   FILE     the part's script under tests/gpu/, sourced by run-part.sh after suite-lib.sh
#   SECONDS  a rough duration on one H100 (each part must end well inside 360 s)
#   NEEDS    what the part cannot run without (comma-separated; "-" for nothing beyond nvcc and
#            the binary): gpus2 (two GPUs), ncu, tmux, and the Python modules torch, jax, ray,
#            rr_tui. A part whose need is missing is one skip (a failure under REQUIRE_ALL=1).
#            Needs of single checks inside a part are checked there.
# Every part builds what it needs itself (the harness, the samples, its recordings): a part
# never reads a variable or a file another part made, and runs alone with --part.
suite_parts() {
  cat <<'EOF'
core|core-suite.sh|70|-|fixtures, legacy LLVM 16-22 records, recorded directories, overrides and limits, globals, tolerance, the JSON stream, faults, NVTX ranges
bench|bench-suite.sh|60|-|the 1 GiB replay benchmark: first restore, between-repetition restore, replay against a plain program, host overhead
tune|tune-suite.sh|110|-|tune: cold clocks, adaptive stop, sweeps, faults, --resume, strategies, --simulate, register limits, Slurm parts merged, tune DIR
tune-bench|tune-bench-suite.sh|100|-|tune benchmark: configurations per second, a process per configuration, timing noise
multi-gpu|multi-gpu-suite.sh|200|gpus2|tune --devices on every GPU and tests/gpu/scaling.sh (two GPUs against one, Slurm-style parts)
ray|ray-suite.sh|200|gpus2,ray,rr_tui|tests/gpu/ray-scaling.sh: a Ray cluster of two one-GPU nodes against one
record|record-suite.sh|70|-|the recorder on the sample programs and PyTorch: results unchanged, every instance replays and verifies
record-bench|record-bench-suite.sh|90|-|recorder benchmark: loaded and recording nothing (launch-bound, GPU-bound, PyTorch), recording throughput, disk use
capture|capture-suite.sh|130|-|graphs (PyTorch, torch.compile, JAX, the graph API), host memory, textures, outside arguments, the watchdog, both hook ways
storm|storm-suite.sh|160|-|the launch storm: 31 interleaved rounds launch-bound, 5 GPU-bound, paired ratios with bootstrap intervals
ordered|ordered-suite.sh|100|-|stream-ordered snapshots: snapshot kernels, flags, producer/consumer, host functions, late flags, graph shapes, one name in two images, JAX command buffers
recorder-hostile|recorder-hostile-suite.sh|180|-|the stream-ordered recorder attacked: staging overflow, global-mode captures, device resets, forks, exits while kernels run, many streams, unaligned pointers, per-thread default streams
model-record|model-record-suite.sh|240|torch|a model-sized process (24 GiB resident) recorded within the disk's limit, then replay-ready time and on-GPU verification
ab|ab-suite.sh|70|-|A/B replays against candidates, the image against itself, compile-time tuning and its exported header
ab-guards|ab-guards-suite.sh|110|-|rr-tui ab on every recorded instance of a kernel: the leaderboard, and cheating candidates (writing nothing, half, outside the output, a cached result, launch bounds, a result stashed beyond the resets, timed runs that skip the work) caught by the guards
repro|repro-suite.sh|175|-|rr-tui repro: reproducers of the fixtures (both formats, LLVM 16 and 18), two recorded nvcc programs and a PyTorch program's cuBLAS, softmax and Triton kernels built with g++, verified, kernel time within 3 % of replay's (or replay's own spread between processes); --python where cuda-python imports; --pack
compile-bench|compile-bench-suite.sh|60|-|tests/gpu/bench-compile.sh: NVRTC variants per second on one thread and on every core, the GPU's idle time waiting for compilations
strategy|strategy-suite.sh|180|-|tests/gpu/strategy-sweeps.sh: six exhaustive sweeps, then random, annealing and tpe simulated over them (measurements to within 2 % of the best)
profile|profile-suite.sh|60|ncu|profile: a memory-bound and a compute-bound kernel, another configuration and section, --events, a missing ncu
profile-ab|profile-ab-suite.sh|45|ncu|profile --candidate: the recorded kernel against its faster source, each in its own range and report
energy|energy-suite.sh|45|-|replay --energy at two block sizes and tune --objective energy with its Pareto front
model|model-suite.sh|180|torch|model-sized processes at 2 GiB: fingerprints, chunks, on-GPU verification, tune DIR with kept engines, the explorer's kept replay process
explorer|explorer-suite.sh|40|tmux,ncu|the explorer driven in tmux: replay and verify, output against replay, a live sweep, profiles side by side
EOF
}
# part_field NAME FIELD(1-5): one field of a part's line; nothing (status 1) for an unknown part.
part_field() {
  suite_parts | awk -F'|' -v n="$1" -v f="$2" '$1 == n { print $f; found = 1 } END { exit !found }'
}
part_names() { suite_parts | cut -d'|' -f1; }
