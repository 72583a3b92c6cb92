/* Binding a worker to the CPUs local to its GPU (run.h): Linux publishes each PCI device's NUMA node and the
 * CPUs near it in sysfs, <sysfs>/bus/pci/devices/<bus id>/{numa_node,local_cpulist}. A worker whose host-side
 * work (cuDNN's heuristic, cuBLASLt's AlgoCheck, launches, the fills of host buffers) runs on the far socket
 * pays the interconnect on every access; bound, the memory it touches first is allocated on its own node. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "run.h"

static void cpus_add(collect_cpus *s, int cpu)
{
    s->bits[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

int collect_cpus_has(const collect_cpus *s, int cpu)
{
    return cpu >= 0 && cpu < COLLECT_CPUS_MAX && (s->bits[cpu / 64] >> (cpu % 64) & 1);
}

int collect_cpus_count(const collect_cpus *s)
{
    int n = 0;
    for (int i = 0; i < COLLECT_CPUS_MAX / 64; i++) n += __builtin_popcountll(s->bits[i]);
    return n;
}

/* a CPU number of a cpulist: decimal digits, below COLLECT_CPUS_MAX */
static int cpu_number(const char **p, int *cpu)
{
    const char *s = *p;
    if (*s < '0' || *s > '9') return 0;
    long v = 0;
    while (*s >= '0' && *s <= '9' && v < COLLECT_CPUS_MAX) v = 10 * v + (*s++ - '0');
    if (v >= COLLECT_CPUS_MAX) return 0;
    *cpu = (int)v;
    *p = s;
    return 1;
}

int collect_cpus_parse(const char *text, collect_cpus *out)
{
    memset(out, 0, sizeof *out);
    const char *p = text;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\n' || *p == '\0') return COLLECT_OK; /* a node without CPUs (memory alone) */
    for (;;) {
        int lo, hi;
        const char *at = p;
        if (!cpu_number(&p, &lo))
            return collect_error(COLLECT_EFORMAT, "cpulist '%.40s': expected a CPU number below %d at offset %d", text,
                                 COLLECT_CPUS_MAX, (int)(at - text));
        hi = lo;
        if (*p == '-') {
            p++;
            at = p;
            if (!cpu_number(&p, &hi) || hi < lo)
                return collect_error(COLLECT_EFORMAT, "cpulist '%.40s': bad range end at offset %d", text, (int)(at - text));
        }
        for (int c = lo; c <= hi; c++) cpus_add(out, c);
        if (*p == ',') {
            p++;
            continue;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (*p) return collect_error(COLLECT_EFORMAT, "cpulist '%.40s': unexpected '%c' at offset %d", text, *p, (int)(p - text));
        return COLLECT_OK;
    }
}

void collect_cpus_format(const collect_cpus *s, char *buf, size_t size)
{
    size_t len = 0;
    if (size) buf[0] = '\0';
    for (int c = 0; c < COLLECT_CPUS_MAX; c++) {
        if (!collect_cpus_has(s, c)) continue;
        int e = c;
        while (e + 1 < COLLECT_CPUS_MAX && collect_cpus_has(s, e + 1)) e++;
        int n = e > c ? snprintf(buf + len, size > len ? size - len : 0, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(buf + len, size > len ? size - len : 0, "%s%d", len ? "," : "", c);
        if (n < 0 || len + (size_t)n >= size) return; /* cut short: the buffer holds what fit */
        len += (size_t)n;
        c = e;
    }
}

int collect_pci_bus_normalize(const char *bus_id, char *buf, size_t size)
{
    unsigned domain, bus, dev, fn;
    int used = -1;
    /* hex digits and the separators alone: sscanf's %x would also take a sign or a 0x prefix */
    int plain = bus_id[strspn(bus_id, "0123456789abcdefABCDEF:.")] == '\0';
    if (!plain || sscanf(bus_id, "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &used) != 4 || bus_id[used] ||
        bus > 0xff || dev > 0x1f || fn > 7)
        return collect_error(COLLECT_EFORMAT, "PCI bus id '%.40s': expected domain:bus:device.function in hex", bus_id);
    int n = snprintf(buf, size, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
    if (n < 0 || (size_t)n >= size) return collect_error(COLLECT_EINVAL, "PCI bus id: buffer too small");
    return COLLECT_OK;
}

/* The first line of a small file into buf; 1 when it does not exist. */
static int read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT || errno == ENOTDIR ? 1 : collect_error(COLLECT_EIO, "%s: %s", path, strerror(errno));
    int ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (!ok) buf[0] = '\0';
    return COLLECT_OK;
}

int collect_gpu_local_cpus(const char *sysfs, const char *bus_id, collect_cpus *cpus, int *numa_node)
{
    memset(cpus, 0, sizeof *cpus);
    *numa_node = -1;
    char bus[32], path[4200], line[8192];
    int rc = collect_pci_bus_normalize(bus_id, bus, sizeof bus);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/bus/pci/devices/%s/local_cpulist", sysfs, bus);
    if ((rc = read_line(path, line, sizeof line))) return rc;
    if ((rc = collect_cpus_parse(line, cpus))) return collect_error(rc, "%s: %s", path, collect_last_error());
    snprintf(path, sizeof path, "%s/bus/pci/devices/%s/numa_node", sysfs, bus);
    if (read_line(path, line, sizeof line) == COLLECT_OK) {
        char *end;
        long v = strtol(line, &end, 10);
        if (end != line) *numa_node = v >= 0 && v < 1 << 20 ? (int)v : -1;
    }
    return COLLECT_OK;
}

int collect_bind_choose(const collect_cpus *allowed, const collect_cpus *local, collect_cpus *out)
{
    for (int i = 0; i < COLLECT_CPUS_MAX / 64; i++) out->bits[i] = allowed->bits[i] & local->bits[i];
    int n = collect_cpus_count(out), all = collect_cpus_count(allowed);
    if (n == 0) return 0;             /* the GPU's CPUs are not ours to run on */
    if (n == all) return 0;           /* already there (one node, or a launcher bound us) */
    return n;
}

int collect_bind_gpu(const char *sysfs, const char *bus_id, char *msg, size_t size)
{
    collect_cpus local, allowed, chosen;
    int node, rc = collect_gpu_local_cpus(sysfs, bus_id, &local, &node);
    if (rc == 1) {
        snprintf(msg, size, "not bound: no local_cpulist for %s under %s/bus/pci/devices", bus_id, sysfs);
        return 0;
    }
    if (rc) {
        snprintf(msg, size, "not bound: %s", collect_last_error());
        return 0;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set)) {
        snprintf(msg, size, "not bound: sched_getaffinity: %s", strerror(errno));
        return 0;
    }
    memset(&allowed, 0, sizeof allowed);
    for (int c = 0; c < COLLECT_CPUS_MAX && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) cpus_add(&allowed, c);
    char list[256];
    int n = collect_bind_choose(&allowed, &local, &chosen);
    if (n == 0) {
        collect_cpus_format(&local, list, sizeof list);
        snprintf(msg, size, "not bound: NUMA node %d, its CPUs %s %s the %d this process may use", node, list,
                 collect_cpus_count(&chosen) ? "are all of" : "are none of", collect_cpus_count(&allowed));
        return 0;
    }
    CPU_ZERO(&set);
    for (int c = 0; c < COLLECT_CPUS_MAX && c < CPU_SETSIZE; c++)
        if (collect_cpus_has(&chosen, c)) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        snprintf(msg, size, "not bound: sched_setaffinity: %s", strerror(errno));
        return 0;
    }
    collect_cpus_format(&chosen, list, sizeof list);
    snprintf(msg, size, "bound to NUMA node %d: CPUs %s (%d of %d)", node, list, n, collect_cpus_count(&allowed));
    return 1;
}
