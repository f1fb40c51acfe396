/*
 * A mock of the CUDA driver library, for testing package cuda's binding
 * and the code above it where there is no GPU. Built by package cudamock
 * with the system C compiler and loaded in place of libcuda.so.1. It
 * declares each function as cuda.h does (CUresult is int, CUdevice is int,
 * CUdeviceptr is 64 bits, handles are pointers, sizes are size_t).
 *
 * "Device memory" is host memory from malloc, filled with 0xEE; copies are
 * memcpy and run at once, so streams and events are always complete. The
 * current context is per thread, as in the real driver, and every function
 * that needs one fails with CUDA_ERROR_INVALID_CONTEXT (201) without it.
 * Kernel launches call a hook the Go side installs (cudamock.SetLaunch:
 * package cuda's tests run the PTX in an interpreter, others reduce on the
 * host). Counters of live objects let tests check for leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

#define OK 0
#define INVALID_VALUE 1
#define NOT_INITIALIZED 3
#define NO_DEVICE 100
#define INVALID_DEVICE 101
#define INVALID_CONTEXT 201
#define INVALID_PTX 218
#define NOT_FOUND 500
#define LAUNCH_FAILED 719

static int devices = 1;
static int initialized;
static int retained;
static __thread void *current;
static void *const primary = (void *)0xC0FFEE;

static long live_allocs, live_pinned, live_streams, live_events, launches, copies;

/* The counters change on whichever threads the ranks of a test call from,
 * at once: a plain ++ loses updates and a test then sees a leak or a
 * double free that did not happen. */
#define INC(x) __atomic_add_fetch(&(x), 1, __ATOMIC_SEQ_CST)
#define DEC(x) __atomic_sub_fetch(&(x), 1, __ATOMIC_SEQ_CST)
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)

typedef int (*launch_hook_t)(uintptr_t fn, uintptr_t grid, uintptr_t block, uintptr_t params);
static launch_hook_t launch_hook;

#define MAX_FUNCS 256
static char *func_names[MAX_FUNCS];
static int nfuncs;

#define NEED_CTX() do { if (!initialized) return NOT_INITIALIZED; if (current != primary || retained == 0) return INVALID_CONTEXT; } while (0)

/* Test controls. */
void mock_set_devices(int n) { devices = n; }
void mock_set_launch_hook(launch_hook_t h) { launch_hook = h; }
const char *mock_function_name(uintptr_t f) { return f >= 1 && f <= (uintptr_t)nfuncs ? func_names[f - 1] : ""; }
void mock_counters(long *out) {
	out[0] = LOAD(live_allocs); out[1] = LOAD(live_pinned); out[2] = LOAD(live_streams);
	out[3] = LOAD(live_events); out[4] = LOAD(launches); out[5] = LOAD(copies); out[6] = LOAD(retained);
}

/* NEXAR_MOCK_DEVICES sets the number of devices in a process that cannot
 * call mock_set_devices (a child process that only loads the library). */
__attribute__((constructor)) static void mock_init(void) {
	const char *n = getenv("NEXAR_MOCK_DEVICES");
	if (n && *n) devices = atoi(n);
}

CUresult cuInit(unsigned flags) {
	if (flags != 0) return INVALID_VALUE;
	if (devices == 0) return NO_DEVICE;
	initialized = 1;
	return OK;
}
CUresult cuDriverGetVersion(int *v) { *v = 12040; return OK; }
CUresult cuDeviceGetCount(int *n) { if (!initialized) return NOT_INITIALIZED; *n = devices; return OK; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	if (ordinal < 0 || ordinal >= devices) return INVALID_DEVICE;
	*d = ordinal;
	return OK;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	if (d < 0 || d >= devices || len < 1) return INVALID_VALUE;
	strncpy(name, "Mock GPU", len - 1);
	name[len - 1] = 0;
	return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	if (d < 0 || d >= devices) return INVALID_DEVICE;
	switch (attr) {
	case 16: *v = 2; break;        /* SMs */
	case 33: *v = 7; break;        /* PCI bus */
	case 36: *v = 1000000; break;  /* memory clock, kHz */
	case 37: *v = 1024; break;     /* bus width, bits */
	case 39: *v = 1024; break;     /* threads per SM */
	case 40: *v = 2; break;        /* copy engines */
	case 75: *v = 7; break;        /* compute capability 7.0 */
	case 76: *v = 0; break;
	case 106: *v = 16; break;      /* blocks per SM */
	default: return INVALID_VALUE;
	}
	return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { *bytes = (size_t)1 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d) {
	if (!initialized) return NOT_INITIALIZED;
	if (d < 0 || d >= devices) return INVALID_DEVICE;
	INC(retained);
	*ctx = primary;
	return OK;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { if (retained == 0) return INVALID_CONTEXT; DEC(retained); return OK; }
CUresult cuCtxSetCurrent(void *ctx) { if (ctx != primary && ctx != NULL) return INVALID_CONTEXT; current = ctx; return OK; }
CUresult cuCtxSynchronize(void) { NEED_CTX(); return OK; }

CUresult cuStreamCreate(void **s, unsigned flags) { NEED_CTX(); *s = malloc(8); INC(live_streams); return OK; }
CUresult cuStreamSynchronize(void *s) { NEED_CTX(); return s ? OK : INVALID_VALUE; }
CUresult cuStreamDestroy_v2(void *s) { NEED_CTX(); free(s); DEC(live_streams); return OK; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) { NEED_CTX(); return s && e ? OK : INVALID_VALUE; }

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	NEED_CTX();
	if (n == 0) return INVALID_VALUE;
	void *m = malloc(n);
	memset(m, 0xEE, n);
	*p = (CUdeviceptr)(uintptr_t)m;
	INC(live_allocs);
	return OK;
}
CUresult cuMemFree_v2(CUdeviceptr p) { NEED_CTX(); free((void *)(uintptr_t)p); DEC(live_allocs); return OK; }
CUresult cuMemAllocHost_v2(void **p, size_t n) { NEED_CTX(); *p = malloc(n); INC(live_pinned); return OK; }
CUresult cuMemFreeHost(void *p) { NEED_CTX(); free(p); DEC(live_pinned); return OK; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { NEED_CTX(); *f = (size_t)1 << 29; *t = (size_t)1 << 30; return OK; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) {
	NEED_CTX(); memcpy((void *)(uintptr_t)d, s, n); INC(copies); return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) {
	NEED_CTX(); memcpy(d, (void *)(uintptr_t)s, n); INC(copies); return OK;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
	NEED_CTX(); memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n); INC(copies); return OK;
}

struct event { int recorded; unsigned flags; long at; };
static long clock_ticks;
CUresult cuEventCreate(void **e, unsigned flags) {
	NEED_CTX();
	struct event *ev = calloc(1, sizeof *ev);
	ev->flags = flags;
	*e = ev;
	INC(live_events);
	return OK;
}
CUresult cuEventRecord(void *e, void *s) { NEED_CTX(); struct event *ev = e; ev->recorded = 1; ev->at = INC(clock_ticks); return OK; }
CUresult cuEventQuery(void *e) { NEED_CTX(); return OK; }
CUresult cuEventSynchronize(void *e) { NEED_CTX(); return OK; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
	NEED_CTX();
	struct event *x = a, *y = b;
	if ((x->flags | y->flags) & 2) return INVALID_VALUE; /* CU_EVENT_DISABLE_TIMING */
	*ms = 0.5f * (float)(y->at - x->at);
	return OK;
}
CUresult cuEventDestroy_v2(void *e) { NEED_CTX(); free(e); DEC(live_events); return OK; }

CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
	NEED_CTX();
	const char *ptx = image;
	char *errlog = NULL;
	size_t errsize = 0;
	for (unsigned i = 0; i < n; i++) {
		if (opts[i] == 5) errlog = vals[i];
		if (opts[i] == 6) errsize = (size_t)(uintptr_t)vals[i];
	}
	if (!strstr(ptx, ".version") || !strstr(ptx, ".entry")) {
		if (errlog && errsize > 0) {
			strncpy(errlog, "mock ptxas: no .version or .entry", errsize - 1);
			errlog[errsize - 1] = 0;
		}
		return INVALID_PTX;
	}
	*m = (void *)0x600D;
	return OK;
}
CUresult cuModuleUnload(void *m) { NEED_CTX(); return OK; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	NEED_CTX();
	for (int i = 0; i < nfuncs; i++) {
		if (strcmp(func_names[i], name) == 0) { *f = (void *)(uintptr_t)(i + 1); return OK; }
	}
	if (nfuncs == MAX_FUNCS) return NOT_FOUND;
	func_names[nfuncs] = strdup(name);
	*f = (void *)(uintptr_t)++nfuncs;
	return OK;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void *stream, void **params, void **extra) {
	NEED_CTX();
	if (gy != 1 || gz != 1 || by != 1 || bz != 1 || shmem != 0 || extra != NULL || gx == 0 || bx == 0) return INVALID_VALUE;
	if (!launch_hook) return LAUNCH_FAILED;
	INC(launches);
	return launch_hook((uintptr_t)f, gx, bx, (uintptr_t)params);
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t smem) {
	NEED_CTX();
	*n = block > 0 ? 1024 / block : 0;
	return OK;
}

static const char *names[][3] = {
	{"0", "CUDA_SUCCESS", "no error"},
	{"1", "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{"3", "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{"100", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{"101", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{"201", "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{"218", "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{"719", "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};
static CUresult describe(CUresult r, const char **s, int which) {
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (atoi(names[i][0]) == r) { *s = names[i][which]; return OK; }
	}
	*s = NULL;
	return INVALID_VALUE;
}
CUresult cuGetErrorName(CUresult r, const char **s) { return describe(r, s, 1); }
CUresult cuGetErrorString(CUresult r, const char **s) { return describe(r, s, 2); }
