// procaddr_log.c: which driver entry points a program asks for, and how. An LD_PRELOAD library
// that logs every cuGetProcAddress[_v2] request (symbol, version, flags) and every dlsym of a
// `cu*` name to PROCADDR_LOG (default stderr), passing everything through. What rr-tui's
// interposition must wrap is read off this list (cudart, PyTorch, Triton, JAX each ask their way).
// Build: gcc -O2 -shared -fPIC -o libprocaddr_log.so procaddr_log.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef int (*gpa2_fn)(const char *, void **, int, unsigned long long, int *);
typedef int (*gpa1_fn)(const char *, void **, int, unsigned long long);
static dlsym_fn real_dlsym;
static gpa2_fn real_gpa2;
static gpa1_fn real_gpa1;
static FILE *out;

static void init(void) {
  if (!real_dlsym) real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!real_dlsym) real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  if (!out) {
    const char *p = getenv("PROCADDR_LOG");
    out = p ? fopen(p, "a") : stderr;
    if (!out) out = stderr;
  }
}

static int gpa2(const char *s, void **pfn, int v, unsigned long long f, int *st) {
  int r = real_gpa2(s, pfn, v, f, st);
  fprintf(out, "gpa %s %d %llu -> %d\n", s, v, f, r);
  return r;
}
static int gpa1(const char *s, void **pfn, int v, unsigned long long f) {
  int r = real_gpa1(s, pfn, v, f);
  fprintf(out, "gpa1 %s %d %llu -> %d\n", s, v, f, r);
  return r;
}

void *dlsym(void *h, const char *name) {
  init();
  void *p = real_dlsym(h, name);
  if (!p || !name || strncmp(name, "cu", 2)) return p;
  fprintf(out, "dlsym %s\n", name);
  if (!strcmp(name, "cuGetProcAddress_v2")) { real_gpa2 = (gpa2_fn)p; return (void *)gpa2; }
  if (!strcmp(name, "cuGetProcAddress")) { real_gpa1 = (gpa1_fn)p; return (void *)gpa1; }
  return p;
}
