// A candidate for the bundled record record-fixtures/llvm-two-kernels (the examples of
// `rr-tui ab --help`, docs/ab-testing.md): tests/gpu/kernels.cu's rr_saxpy, the kernel that
// record's two rr_saxpy instances were made of, with the same parameters (five of 8 bytes, the
// last libomptarget's dyn_ptr slot) and ILP elements per thread and loop iteration.
//
//   rr-tui ab record-fixtures/llvm-two-kernels --kernels saxpy \
//     --candidate record-fixtures/candidates/saxpy.cu -D ILP=4
//
// extern "C": the kernel keeps the recorded name whatever its parameters.
#ifndef ILP
#define ILP 2
#endif

extern "C" __global__ void rr_saxpy(float *__restrict__ y, const float *__restrict__ x, double a,
                                    long n, void *dyn_ptr) {
  const float af = (float)a;
  const long stride = (long)gridDim.x * blockDim.x;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride * ILP) {
#pragma unroll
    for (int j = 0; j < ILP; ++j) {
      const long k = i + j * stride;
      if (k < n) y[k] = af * x[k] + y[k];
    }
  }
}
