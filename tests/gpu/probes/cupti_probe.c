// cupti_probe.c: a CUDA_INJECTION64_PATH library for measuring what the recorder stands on.
//   PROBE_MODE=trace          every driver call and resource callback counted; graphs walked when
//                             instantiated (node kinds, kernel handles, child graphs), graph
//                             destruction, executable updates, texture/surface objects and pinned
//                             host allocations logged. Written to PROBE_LOG (default stderr).
//   PROBE_MODE=inject-only    loaded as the injection library, CUPTI never initialised
//   PROBE_MODE=unsubscribed   subscribed, then unsubscribed at once (CUPTI initialised)
//   PROBE_MODE=floor-none     subscribed, no callback enabled
//   PROBE_MODE=floor-launch   the launch callbacks enabled, an empty callback (CUPTI's floor)
//   PROBE_MODE=floor-symbol   as floor-launch, and the callback reads the kernel's name
//   PROBE_MODE=floor-rr       what the recorder enables when launches come through its own
//                             entry points: memory, module, graph and object callbacks, none for
//                             launches, an empty callback (with LD_PRELOAD of procaddr_hook: the
//                             recorder's structure without its code)
//   PROBE_MODE=floor-resource only the module-loaded resource callback (no driver-API callback):
//                             whether CUPTI's cost comes with driver-API callbacks at all
// Build: gcc -O2 -shared -fPIC -o libcupti_probe.so cupti_probe.c -I$CUDA/include
//        -I$CUDA/extras/CUPTI/include -L$CUDA/lib64 -lcupti -lcuda
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static unsigned long counts[1024];
static unsigned long res_counts[64];
static unsigned long symbol_bytes;
static __thread int depth;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int mode; // 0 trace, 1 none, 2 launch, 3 symbol, 4 inject-only, 5 unsubscribed

static const char *type_name(CUgraphNodeType t) {
  switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
    case CU_GRAPH_NODE_TYPE_HOST: return "host";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "child-graph";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event-wait";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event-record";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return "ext-sema-signal";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return "ext-sema-wait";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "mem-alloc";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "mem-free";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch-mem-op";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
    default: return "other";
  }
}

static void walk(CUgraph g, int level) {
  size_t n = 0, ne = 0;
  cuGraphGetNodes(g, NULL, &n);
  CUgraphNode *nodes = calloc(n + 1, sizeof *nodes);
  cuGraphGetNodes(g, nodes, &n);
  cuGraphGetEdges_v2(g, NULL, NULL, NULL, &ne);
  fprintf(out, "%*sgraph %p: %zu nodes, %zu edges\n", level * 2, "", (void *)g, n, ne);
  unsigned long kinds[32] = {0};
  for (size_t i = 0; i < n; i++) {
    CUgraphNodeType t;
    if (cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS) continue;
    if ((int)t < 32) kinds[t]++;
    if (t == CU_GRAPH_NODE_TYPE_KERNEL && kinds[t] <= 4) {
      CUDA_KERNEL_NODE_PARAMS_v2 kp;
      memset(&kp, 0, sizeof kp);
      CUresult r = cuGraphKernelNodeGetParams_v2(nodes[i], &kp);
      const char *name = NULL;
      if (kp.func) cuFuncGetName(&name, kp.func);
      if (!name && kp.kern) cuKernelGetName(&name, kp.kern);
      CUlaunchAttributeValue cl;
      CUresult ra = cuGraphKernelNodeGetAttribute(nodes[i], CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &cl);
      fprintf(out, "%*s  kernel r=%d func=%p kern=%p ctx=%p params=%p extra=%p grid=%u,%u,%u block=%u,%u,%u smem=%u cluster(r=%d)=%u name=%.60s\n",
              level * 2, "", r, (void *)kp.func, (void *)kp.kern, (void *)kp.ctx, (void *)kp.kernelParams, (void *)kp.extra,
              kp.gridDimX, kp.gridDimY, kp.gridDimZ, kp.blockDimX, kp.blockDimY, kp.blockDimZ, kp.sharedMemBytes, ra,
              cl.clusterDim.x, name ? name : "?");
    }
    if (t == CU_GRAPH_NODE_TYPE_GRAPH) {
      CUgraph child;
      if (cuGraphChildGraphNodeGetGraph(nodes[i], &child) == CUDA_SUCCESS) walk(child, level + 1);
    }
  }
  fprintf(out, "%*s  kinds:", level * 2, "");
  for (int k = 0; k < 32; k++)
    if (kinds[k]) fprintf(out, " %s=%lu", type_name((CUgraphNodeType)k), kinds[k]);
  fprintf(out, "\n");
  free(nodes);
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data) {
  (void)ud;
  if (mode == 2 || mode == 6 || mode == 7) return;
  if (mode == 3) {
    const CUpti_CallbackData *d = data;
    if (d->callbackSite == CUPTI_API_ENTER && d->symbolName) symbol_bytes += strlen(d->symbolName);
    return;
  }
  if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
    pthread_mutex_lock(&mu);
    if (id < 64) res_counts[id]++;
    pthread_mutex_unlock(&mu);
    return;
  }
  if (dom != CUPTI_CB_DOMAIN_DRIVER_API || depth) return;
  const CUpti_CallbackData *d = data;
  depth = 1;
  pthread_mutex_lock(&mu);
  if (d->callbackSite == CUPTI_API_ENTER && id < 1024) counts[id]++;
  if (d->callbackSite == CUPTI_API_EXIT) {
    CUresult ret = d->functionReturnValue ? *(CUresult *)d->functionReturnValue : -1;
    switch (id) {
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags: {
        const cuGraphInstantiateWithFlags_params *p = d->functionParams;
        fprintf(out, "instantiate(flags=%llu) ret=%d exec=%p\n", p->flags, ret, p->phGraphExec ? (void *)*p->phGraphExec : 0);
        if (ret == 0) walk(p->hGraph, 1);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz: {
        const cuGraphInstantiateWithParams_params *p = d->functionParams;
        fprintf(out, "instantiateWithParams(flags=%llu) ret=%d exec=%p\n", p->instantiateParams ? p->instantiateParams->flags : 0, ret,
                p->phGraphExec ? (void *)*p->phGraphExec : 0);
        if (ret == 0) walk(p->hGraph, 1);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2: {
        const cuGraphInstantiate_v2_params *p = d->functionParams;
        fprintf(out, "instantiate_v2 ret=%d\n", ret);
        if (ret == 0) walk(p->hGraph, 1);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy:
        fprintf(out, "graph destroyed %p\n", (void *)((const cuGraphDestroy_params *)d->functionParams)->hGraph);
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2:
        fprintf(out, "exec update ret=%d\n", ret);
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2:
        fprintf(out, "exec kernel node set params ret=%d\n", ret);
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams:
        fprintf(out, "exec node set params ret=%d\n", ret);
        break;
      case CUPTI_DRIVER_TRACE_CBID_cuTexObjectCreate: {
        const cuTexObjectCreate_params *p = d->functionParams;
        fprintf(out, "tex object %llu resType=%d ret=%d\n", p->pTexObject ? *p->pTexObject : 0ull, p->pResDesc->resType, ret);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuSurfObjectCreate: {
        const cuSurfObjectCreate_params *p = d->functionParams;
        fprintf(out, "surf object %llu ret=%d\n", p->pSurfObject ? *p->pSurfObject : 0ull, ret);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc: {
        const cuMemHostAlloc_params *p = d->functionParams;
        CUdeviceptr dp = 0;
        cuMemHostGetDevicePointer(&dp, *p->pp, 0);
        fprintf(out, "cuMemHostAlloc %p size=%zu flags=%u device=%p\n", *p->pp, p->bytesize, p->Flags, (void *)dp);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2: {
        const cuMemAllocHost_v2_params *p = d->functionParams;
        CUdeviceptr dp = 0;
        cuMemHostGetDevicePointer(&dp, *p->pp, 0);
        fprintf(out, "cuMemAllocHost %p size=%zu device=%p\n", *p->pp, p->bytesize, (void *)dp);
        break;
      }
      case CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2: {
        const cuMemHostRegister_v2_params *p = d->functionParams;
        CUdeviceptr dp = 0;
        CUresult r = cuMemHostGetDevicePointer(&dp, p->p, 0);
        fprintf(out, "cuMemHostRegister %p size=%zu flags=%u device=%p (r=%d)\n", p->p, p->bytesize, p->Flags, (void *)dp, r);
        break;
      }
      default: break;
    }
  }
  pthread_mutex_unlock(&mu);
  depth = 0;
}

static void dump(void) {
  if (mode == 3) fprintf(out, "symbol bytes read: %lu\n", symbol_bytes);
  if (mode != 0) return;
  fprintf(out, "== driver calls (enter counts)\n");
  for (int i = 0; i < 1024; i++) {
    if (!counts[i]) continue;
    const char *name = "?";
    cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, i, &name);
    fprintf(out, "%6lu %s (%d)\n", counts[i], name, i);
  }
  fprintf(out, "== resource callbacks\n");
  for (int i = 0; i < 64; i++)
    if (res_counts[i]) fprintf(out, "%6lu resource id %d\n", res_counts[i], i);
  fflush(out);
}

int InitializeInjection(void) {
  const char *m = getenv("PROBE_MODE");
  mode = !m || !strcmp(m, "trace") ? 0 : !strcmp(m, "floor-none") ? 1 : !strcmp(m, "floor-launch") ? 2
       : !strcmp(m, "inject-only") ? 4 : !strcmp(m, "unsubscribed") ? 5 : !strcmp(m, "floor-rr") ? 6
       : !strcmp(m, "floor-resource") ? 7 : 3;
  if (mode == 4) return 1;
  const char *path = getenv("PROBE_LOG");
  out = path ? fopen(path, "a") : stderr;
  if (!out) out = stderr;
  CUpti_SubscriberHandle sub;
  if (cuptiSubscribe(&sub, callback, NULL) != CUPTI_SUCCESS) { fprintf(out, "probe: subscribe failed\n"); return 1; }
  if (mode == 5) { cuptiUnsubscribe(sub); return 1; }
  if (mode == 0) {
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE);
  } else if (mode == 7) {
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
  } else if (mode == 6) {
    static const int ids[] = {
      CUPTI_DRIVER_TRACE_CBID_cuModuleLoad, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
      CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary,
      CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload,
      CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
      CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
      CUPTI_DRIVER_TRACE_CBID_cuTexObjectCreate, CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    };
    for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++)
      cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
  } else if (mode >= 2) {
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx);
    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz);
  }
  atexit(dump);
  return 1;
}
