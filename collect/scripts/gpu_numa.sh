#!/usr/bin/env bash
# Each GPU's NUMA node and the CPUs near it, from sysfs (what heurist-collect's workers bind to: collect/README.md,
# "Binding to the GPU's CPUs"), and the host's NUMA nodes; for the env.txt of the device scripts:
#   bash collect/scripts/gpu_numa.sh >> OUTDIR/env.txt
# A GPU whose sysfs entry is missing shows "-". nvidia-smi spells bus ids with an 8-digit domain, sysfs with 4.
echo "index, pci.bus_id, numa_node, local_cpulist"
nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader 2>/dev/null | while IFS=', ' read -r i bus; do
    dev=$(echo "$bus" | tr 'A-F' 'a-f' | sed 's/^0000\(....:\)/\1/')
    echo "$i, $bus, $(cat "/sys/bus/pci/devices/$dev/numa_node" 2>/dev/null || echo -), $(cat "/sys/bus/pci/devices/$dev/local_cpulist" 2>/dev/null || echo -)"
done
echo "CPUs: $(nproc) of $(getconf _NPROCESSORS_CONF 2>/dev/null); NUMA nodes:"
for n in /sys/devices/system/node/node[0-9]*; do
    [ -e "$n/cpulist" ] && echo "  ${n##*/}: CPUs $(cat "$n/cpulist")"
done
exit 0
