# Nsight Compute on a large recorded kernel: what rr-tui profile asks, and a plain run of the
# sections it uses whose raw page names the metrics (kept in $OUT).
export PATH=$PWD/.gpu-bin:$PATH
W=/tmp/diag; mkdir -p $W
nvcc -O3 -arch=sm_90 -o $W/prog tests/gpu/samples/profile_kernels.cu
rr-tui record --dir $W/rec --overwrite --kernels 'rr_triad|rr_fma_chain' -- $W/prog > $OUT/rec.txt 2>&1
pick() { python3 -c 'import json,os,sys
for f in sorted(os.listdir(sys.argv[1])):
    if f.endswith(".json") and sys.argv[2] in json.load(open(os.path.join(sys.argv[1], f))).get("Name", ""): print(os.path.join(sys.argv[1], f))' $W/rec $1; }
T=$(pick rr_triad); F=$(pick rr_fma_chain)
N=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Name"])' $F)
timeout 60 ncu --clock-control none --nvtx --nvtx-include "regex:rr-tui.rep.1/" --kernel-name-base mangled --kernel-name "regex:^$N\$" --launch-count 1 --set basic --section WarpStateStats --section SpeedOfLight_RooflineChart -f -o $W/a rr-tui replay $F --events-only > $OUT/plain.txt 2>&1
ncu --import $W/a.ncu-rep --csv --page raw --print-units base > $OUT/raw-fma.csv 2>&1
for j in $F $T; do /usr/bin/time -f "%e s" timeout 100 rr-tui profile $j; done > $OUT/profile.txt 2>&1
