/* collect: binding a worker to its GPU's CPUs (run.h, bind.c): Linux cpulists parsed and written back, PCI bus
 * ids in sysfs's spelling, a GPU's local CPUs and NUMA node read from a fake sysfs tree, the choice of CPUs
 * against the ones the process may use, and the binding itself. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect.h"
#include "helpers/testutil.h"
#include "run.h"

Test(collect_bind, cpulist_parses_ranges_and_singles)
{
    collect_cpus s;
    cr_assert_eq(collect_cpus_parse("0-3,8,10-11\n", &s), 0, "%s", collect_last_error());
    cr_assert_eq(collect_cpus_count(&s), 7);
    for (int c = 0; c < 16; c++)
        cr_assert_eq(collect_cpus_has(&s, c), c <= 3 || c == 8 || c == 10 || c == 11, "CPU %d", c);
    char buf[64];
    collect_cpus_format(&s, buf, sizeof buf);
    cr_assert_str_eq(buf, "0-3,8,10-11");
    cr_assert_eq(collect_cpus_parse("64-127,1000", &s), 0, "%s", collect_last_error());
    cr_assert_eq(collect_cpus_count(&s), 65);
    cr_assert(collect_cpus_has(&s, 64) && collect_cpus_has(&s, 127) && collect_cpus_has(&s, 1000));
    cr_assert(!collect_cpus_has(&s, 63) && !collect_cpus_has(&s, 128) && !collect_cpus_has(&s, -1));
    /* a memory-only node lists no CPU */
    cr_assert_eq(collect_cpus_parse("\n", &s), 0);
    cr_assert_eq(collect_cpus_count(&s), 0);
    /* a list cut short by a small buffer keeps whole entries */
    cr_assert_eq(collect_cpus_parse("0,2,4,6,8,10,12", &s), 0);
    collect_cpus_format(&s, buf, 8);
    cr_assert_str_eq(buf, "0,2,4,6");
}

Test(collect_bind, cpulist_refuses_malformed_text)
{
    static const char *const bad[] = {"0-", "3-1", "a", "1,,2", "1,", "2000", "0-1024", "1 2", "-1", "4x"};
    collect_cpus s;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(collect_cpus_parse(bad[i], &s), COLLECT_EFORMAT, "'%s' parsed", bad[i]);
        cr_assert(strstr(collect_last_error(), "cpulist"), "'%s': %s", bad[i], collect_last_error());
    }
}

Test(collect_bind, bus_ids_take_sysfs_spelling)
{
    char buf[32];
    cr_assert_eq(collect_pci_bus_normalize("00000000:1B:00.0", buf, sizeof buf), 0, "%s", collect_last_error());
    cr_assert_str_eq(buf, "0000:1b:00.0");
    cr_assert_eq(collect_pci_bus_normalize("0000:c1:1f.7", buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "0000:c1:1f.7");
    static const char *const bad[] = {"", "1b:00.0", "0000:1b:00", "0000:1b:00.0x", "0000:100:00.0", "0000:1b:20.0",
                                      "fake"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(collect_pci_bus_normalize(bad[i], buf, sizeof buf), COLLECT_EFORMAT, "'%s' accepted", bad[i]);
}

/* A fake sysfs tree with one device: its local_cpulist (NULL: none) and numa_node (NULL: none). */
static char *fake_sysfs(const char *bus, const char *cpulist, const char *node)
{
    char *root = test_tmppath(".sysfs"), path[4096];
    snprintf(path, sizeof path, "mkdir -p '%s/bus/pci/devices/%s'", root, bus);
    char *out;
    cr_assert_eq(test_run_shell(path, &out), 0);
    free(out);
    const char *files[2] = {"local_cpulist", "numa_node"}, *text[2] = {cpulist, node};
    for (int i = 0; i < 2; i++) {
        if (!text[i]) continue;
        snprintf(path, sizeof path, "%s/bus/pci/devices/%s/%s", root, bus, files[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s", path);
        fputs(text[i], f);
        fclose(f);
    }
    return root;
}

static void sysfs_remove(char *root)
{
    char cmd[4200], *out;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    test_run_shell(cmd, &out);
    free(out);
    free(root);
}

Test(collect_bind, local_cpus_read_from_sysfs)
{
    char *root = fake_sysfs("0000:1b:00.0", "16-31,48-63\n", "1\n");
    collect_cpus s;
    int node;
    /* CUDA's spelling of the bus id finds sysfs's */
    cr_assert_eq(collect_gpu_local_cpus(root, "00000000:1B:00.0", &s, &node), 0, "%s", collect_last_error());
    cr_assert_eq(node, 1);
    cr_assert_eq(collect_cpus_count(&s), 32);
    cr_assert(collect_cpus_has(&s, 16) && collect_cpus_has(&s, 63) && !collect_cpus_has(&s, 32));
    /* another device, or no sysfs at all: absent, not an error */
    cr_assert_eq(collect_gpu_local_cpus(root, "0000:3b:00.0", &s, &node), 1);
    cr_assert_eq(collect_gpu_local_cpus("/nonexistent-sysfs", "0000:1b:00.0", &s, &node), 1);
    cr_assert_lt(collect_gpu_local_cpus(root, "fake", &s, &node), 0);
    sysfs_remove(root);
    /* a list without its node file: node unknown */
    root = fake_sysfs("0000:1b:00.0", "0-7\n", NULL);
    cr_assert_eq(collect_gpu_local_cpus(root, "0000:1b:00.0", &s, &node), 0, "%s", collect_last_error());
    cr_assert_eq(node, -1);
    cr_assert_eq(collect_cpus_count(&s), 8);
    sysfs_remove(root);
    /* a malformed list names the file */
    root = fake_sysfs("0000:1b:00.0", "0-x\n", "0\n");
    cr_assert_eq(collect_gpu_local_cpus(root, "0000:1b:00.0", &s, &node), COLLECT_EFORMAT);
    cr_assert(strstr(collect_last_error(), "local_cpulist"), "%s", collect_last_error());
    sysfs_remove(root);
}

Test(collect_bind, choice_is_the_allowed_local_cpus)
{
    collect_cpus allowed, local, out;
    cr_assert_eq(collect_cpus_parse("0-7", &allowed), 0);
    cr_assert_eq(collect_cpus_parse("4-11", &local), 0);
    cr_assert_eq(collect_bind_choose(&allowed, &local, &out), 4);
    char buf[64];
    collect_cpus_format(&out, buf, sizeof buf);
    cr_assert_str_eq(buf, "4-7");
    /* none of the GPU's CPUs may be used: nothing to bind */
    cr_assert_eq(collect_cpus_parse("8-15", &local), 0);
    cr_assert_eq(collect_bind_choose(&allowed, &local, &out), 0);
    /* the GPU's CPUs hold every allowed one (one NUMA node, or a launcher's binding): nothing would change */
    cr_assert_eq(collect_cpus_parse("0-63", &local), 0);
    cr_assert_eq(collect_bind_choose(&allowed, &local, &out), 0);
}

Test(collect_bind, binds_the_process_to_the_gpu_cpus)
{
    cpu_set_t before;
    cr_assert_eq(sched_getaffinity(0, sizeof before, &before), 0);
    int first = -1, n = CPU_COUNT(&before);
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &before)) first = c;
    char list[16], msg[512];
    snprintf(list, sizeof list, "%d\n", first);
    char *root = fake_sysfs("0000:01:00.0", list, "0\n");
    int bound = collect_bind_gpu(root, "0000:01:00.0", msg, sizeof msg);
    if (n > 1) {
        cr_assert_eq(bound, 1, "%s", msg);
        cr_assert(strstr(msg, "bound to NUMA node 0"), "%s", msg);
        cpu_set_t after;
        cr_assert_eq(sched_getaffinity(0, sizeof after, &after), 0);
        cr_assert(CPU_COUNT(&after) == 1 && CPU_ISSET(first, &after), "%d CPUs after binding", CPU_COUNT(&after));
        cr_assert_eq(sched_setaffinity(0, sizeof before, &before), 0);
    } else {
        cr_assert_eq(bound, 0, "%s", msg); /* one CPU: binding would change nothing */
        cr_assert(strstr(msg, "not bound"), "%s", msg);
    }
    cr_assert_eq(collect_bind_gpu(root, "0000:02:00.0", msg, sizeof msg), 0);
    cr_assert(strstr(msg, "not bound: no local_cpulist for 0000:02:00.0"), "%s", msg);
    sysfs_remove(root);
}
