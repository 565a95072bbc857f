/*
 * A tiny fake libnvidia-ml.so.1 for the ignored `c_fake` tests in ../c_fake_tests.rs.
 * It exercises the FFI paths the simulator does not: an old-driver symbol mix
 * (memory v2 refusing one device, TemperatureV retired, only ThrottleReasons), the R535
 * 32-byte process-info stride through _v3, garbage power/utilization readings, a union
 * with junk in its upper half, Xid events, GPM and buffered samples handed out newest
 * first. Layouts are written out by hand from nvml.h (docs/nvml-facts.md), independently
 * of the Rust mirrors.
 */
#include <stdlib.h>
#include <string.h>

typedef struct { int dummy; } dev_st;
static dev_st devs[2];
static int init_count = 0;
static int events_sent = 0;

int fake_init_count(void) { return init_count; }

unsigned nvmlInit_v2(void) { init_count++; return 0; }
unsigned nvmlShutdown(void) { init_count--; return 0; }
const char *nvmlErrorString(unsigned c) { return c == 3 ? "Not Supported" : NULL; }

unsigned nvmlSystemGetDriverVersion(char *b, unsigned n) { strncpy(b, "535.54.03", n); return 0; }
unsigned nvmlSystemGetCudaDriverVersion(int *v) { *v = 12020; return 0; }
unsigned nvmlDeviceGetCount_v2(unsigned *c) { *c = 2; return 0; }
unsigned nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) {
    if (i > 1) return 2;
    *d = &devs[i];
    return 0;
}
unsigned nvmlDeviceGetName(void *d, char *b, unsigned n) {
    strncpy(b, d == &devs[0] ? "NVIDIA H100 80GB HBM3" : "Fake GPU", n);
    return 0;
}
unsigned nvmlDeviceGetUUID(void *d, char *b, unsigned n) {
    if (n < 96) return 7;
    strncpy(b, "GPU-12345678-1234-1234-1234-123456789abc", n);
    return 0;
}

typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci_t;
unsigned nvmlDeviceGetPciInfo_v3(void *d, pci_t *p) {
    strcpy(p->busIdLegacy, "0000:3B:00.0");
    strcpy(p->busId, "00000000:3B:00.0");
    p->bus = 0x3b;
    p->device = 0;
    p->pciDeviceId = 0x233010DE;
    return 0;
}
unsigned nvmlDeviceGetArchitecture(void *d, unsigned *a) { *a = 9; return 0; }
unsigned nvmlDeviceGetCudaComputeCapability(void *d, int *maj, int *min) { *maj = 9; *min = 0; return 0; }

typedef struct { unsigned version; unsigned long long total, reserved, free, used; } mem2_t;
typedef struct { unsigned long long total, free, used; } mem1_t;
/* Refuses a wrong version, and pretends device 1 has a driver without v2 support. */
unsigned nvmlDeviceGetMemoryInfo_v2(void *d, mem2_t *m) {
    if (m->version != 0x02000028 || d == &devs[1]) return 13;
    m->total = 80ull << 30; m->reserved = 1 << 20; m->free = 70ull << 30; m->used = 10ull << 30;
    return 0;
}
unsigned nvmlDeviceGetMemoryInfo(void *d, mem1_t *m) { m->total = 80ull << 30; m->free = 1; m->used = 2; return 0; }

unsigned nvmlDeviceGetTemperatureV(void *d, void *t) { return 26; /* DEPRECATED */ }
unsigned nvmlDeviceGetTemperature(void *d, unsigned sensor, unsigned *t) { if (sensor) return 2; *t = 61; return 0; }
unsigned nvmlDeviceGetTemperatureThreshold(void *d, unsigned which, unsigned *t) { *t = 80 + which; return 0; }

/* Device 1 returns the garbage a 32-bit 580.xx library returned (docs/nvml-facts.md, "Hazards"). */
unsigned nvmlDeviceGetPowerUsage(void *d, unsigned *p) { *p = d == &devs[0] ? 350000u : 3700000000u; return 0; }
unsigned nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned *p) { *p = 700000; return 0; }
typedef struct { unsigned gpu, memory; } util_t;
unsigned nvmlDeviceGetUtilizationRates(void *d, util_t *u) { u->gpu = d == &devs[0] ? 87 : 140; u->memory = 40; return 0; }
unsigned nvmlDeviceGetClockInfo(void *d, unsigned type, unsigned *c) { *c = 1000 + type; return 0; }
unsigned nvmlDeviceGetMaxClockInfo(void *d, unsigned type, unsigned *c) { *c = 2000 + type; return 0; }
unsigned nvmlDeviceGetPerformanceState(void *d, unsigned *p) { *p = 0; return 0; }
unsigned nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *r) { *r = 0x4; return 0; }
unsigned nvmlDeviceGetPcieThroughput(void *d, unsigned counter, unsigned *v) { *v = counter ? 2000 : 1000; return 0; }
unsigned nvmlDeviceGetCurrPcieLinkGeneration(void *d, unsigned *v) { *v = 4; return 0; }
unsigned nvmlDeviceGetCurrPcieLinkWidth(void *d, unsigned *v) { *v = 8; return 0; }
unsigned nvmlDeviceGetMaxPcieLinkGeneration(void *d, unsigned *v) { *v = 5; return 0; }
unsigned nvmlDeviceGetMaxPcieLinkWidth(void *d, unsigned *v) { *v = 16; return 0; }

/* _v3 with the R535 32-byte element (extra usedGpuCcProtectedMemory). */
typedef struct { unsigned pid; unsigned long long mem; unsigned gi, ci; unsigned long long cc; } proc32_t;
unsigned nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, proc32_t *p) {
    unsigned have = 3;
    if (*n < have) { *n = have; return 7; }
    for (unsigned i = 0; i < have; i++) {
        p[i].pid = 1000 + i; p[i].mem = (i + 1ull) << 30;
        p[i].gi = 0xFFFFFFFF; p[i].ci = 0xFFFFFFFF; p[i].cc = 0;
    }
    *n = have;
    return 0;
}

typedef struct {
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    unsigned valueType, nvmlReturn;
    union { double d; unsigned ui; unsigned long long ull; } value;
} field_t;
unsigned nvmlDeviceGetFieldValues(void *d, int n, field_t *v) {
    for (int i = 0; i < n; i++) {
        v[i].timestamp = 123;
        if (v[i].fieldId == 185) {          /* uiVal with junk in the upper half */
            v[i].valueType = 1; v[i].value.ull = 0xDEAD000000000000ull; v[i].value.ui = 250000; v[i].nvmlReturn = 0;
        } else if (v[i].fieldId == 83) {   /* ullVal */
            v[i].valueType = 3; v[i].value.ull = 1ull << 40; v[i].nvmlReturn = 0;
        } else if (v[i].fieldId == 138 && v[i].scopeId == 0xFFFFFFFF) {
            v[i].valueType = 0; v[i].value.d = 2.5; v[i].nvmlReturn = 0;
        } else {
            v[i].nvmlReturn = 3;
        }
    }
    return 0;
}

typedef struct { void *dev; unsigned long long type, data; unsigned gi, ci; } event_t;
unsigned nvmlEventSetCreate(void **s) { *s = malloc(8); return 0; }
unsigned nvmlEventSetFree(void *s) { free(s); return 0; }
unsigned nvmlDeviceGetSupportedEventTypes(void *d, unsigned long long *m) { *m = d == &devs[0] ? 0xC : 0; return 0; }
unsigned nvmlDeviceRegisterEvents(void *d, unsigned long long m, void *s) { return m == 0xC ? 0 : 2; }
unsigned nvmlEventSetWait_v2(void *s, event_t *e, unsigned timeout_ms) {
    if (events_sent++) return 10;
    e->dev = &devs[0]; e->type = 8; e->data = 79;
    return 0;
}

typedef struct { unsigned version, isSupportedDevice; } gpm_support_t;
unsigned nvmlGpmQueryDeviceSupport(void *d, gpm_support_t *s) {
    if (s->version != 1) return 25;
    s->isSupportedDevice = d == &devs[0];
    return 0;
}
unsigned nvmlGpmSampleAlloc(void **s) { *s = malloc(8); return 0; }
unsigned nvmlGpmSampleFree(void *s) { free(s); return 0; }
unsigned nvmlGpmSampleGet(void *d, void *s) { return s ? 0 : 2; }
typedef struct { unsigned metricId, nvmlReturn; double value; char *a, *b, *c; } gpm_metric_t;
typedef struct { unsigned version, numMetrics; void *s1, *s2; gpm_metric_t metrics[98]; } gpm_get_t;
unsigned nvmlGpmMetricsGet(gpm_get_t *g) {
    if (g->version != 1 || g->numMetrics > 98) return 25;
    for (unsigned i = 0; i < g->numMetrics; i++) {
        if (g->metrics[i].metricId == 3) { g->metrics[i].nvmlReturn = 0; g->metrics[i].value = 37.5; }
        else g->metrics[i].nvmlReturn = 3;
    }
    return 0;
}

/* nvmlDeviceGetSamples: nvmlSample_t is { unsigned long long timeStamp; 8-byte nvmlValue_t }.
 * GPU 0 type 1 holds three samples handed out newest first; type 5 holds 200 (more than
 * one call of the binding takes). GPU 1 answers type 1 with an unknown value type and
 * type 0 with NOT_SUPPORTED. */
typedef struct { unsigned long long ts; union { unsigned ui; unsigned long long ull; } v; } sample_t;
unsigned nvmlDeviceGetSamples(void *d, unsigned type, unsigned long long since, unsigned *vt,
                              unsigned *count, sample_t *out) {
    static const unsigned long long ts[3] = {300, 100, 200};
    unsigned held = 0, i;
    if (d == &devs[1]) {
        if (type == 0) return 3;
        *vt = 99;
    } else {
        *vt = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
    }
    if (type == 5 && d == &devs[0]) {
        for (i = 0; i < 200; i++)
            if (i + 1 > since) {
                if (out) {
                    if (held == *count) break;
                    out[held].ts = i + 1;
                    out[held].v.ull = 0;
                    out[held].v.ui = 1000 + i;
                }
                held++;
            }
    } else {
        for (i = 0; i < 3; i++)
            if (ts[i] > since) {
                if (out) {
                    if (held == *count) break;
                    out[held].ts = ts[i];
                    out[held].v.ull = 0xFFFFFFFF00000000ull; /* junk above the uint */
                    out[held].v.ui = (unsigned)(ts[i] / 10);
                }
                held++;
            }
    }
    if (held == 0) return 6; /* NOT_FOUND */
    *count = held;
    return 0;
}
