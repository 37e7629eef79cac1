#!/usr/bin/env python3
"""Registers, spills and local memory of halo's kernels as NVIDIA's driver compiles them.

  python3 scripts/kernel-resources.py LABEL=CACHE_DIR [LABEL=CACHE_DIR ...] [--json FILE]

Runs on the GPU machine (it needs CuPy). NVIDIA's OpenCL stores a program's binary as PTX; halo's
kernel cache (HALO_CACHE_DIR) keeps those files. Each PTX is loaded again through the CUDA driver
(cuModuleLoad: the same JIT that compiled it for OpenCL) and each entry's attributes are read:
registers per work-item, bytes spilled to local memory per work-item, local (shared) memory per
group. Occupancy is the driver's own figure for the group size the kernel requires
(reqd_work_group_size, `.reqntid` in the PTX) or, where it requires none, for `--group`
work-items (default 128), in resident warps per SM of the 64 an SM can hold. One cache folder
per filter (run halo_bench with HALO_CACHE_DIR set per filter) keeps the labels apart.
"""
import argparse
import json
import os
import re
import sys
import tempfile


def entries(ptx):
    """(name, group size or None) of each kernel entry in a PTX text."""
    found = []
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)\s*((?:\.\w+[^{]*?)*)\{", ptx, re.S):
        req = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", m.group(3))
        size = None
        if req:
            size = 1
            for v in req.groups():
                size *= int(v) if v else 1
        found.append((m.group(1), size))
    return found


def resident_warps(driver, fn, attrs, group):
    """Warps of `group`-sized groups resident on one SM: the driver's occupancy figure, or where
    this CuPy lacks it, Hopper's limits worked out by hand (64K registers in 256-register
    allocations per warp, 228 KiB shared memory with 1 KiB reserved per group, 32 groups,
    64 warps)."""
    warps_per_group = (group + 31) // 32
    try:
        return driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, group, 0) * \
            warps_per_group
    except Exception:
        per_warp = -(-attrs["num_regs"] * 32 // 256) * 256
        groups = min(32, 65536 // max(1, per_warp) // warps_per_group,
                     233472 // (attrs["shared_size_bytes"] + 1024), 64 // warps_per_group)
        return groups * warps_per_group


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", help="LABEL=CACHE_DIR")
    ap.add_argument("--group", type=int, default=128, help="work-items per group where the kernel "
                    "requires no size (default 128)")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    import cupy
    from cupy.cuda import driver
    rows = []
    for spec in a.dirs:
        label, _, folder = spec.rpartition("=")
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            data = open(os.path.join(folder, name), "rb").read()
            if b".entry" not in data:
                continue
            ptx = data.decode("latin-1").rstrip("\0")
            with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
                f.write(ptx)
            try:
                module = cupy.RawModule(path=f.name)
                for kernel, required in entries(ptx):
                    fn = module.get_function(kernel)
                    attrs = fn.attributes
                    group = required or a.group
                    warps = resident_warps(driver, fn, attrs, group)
                    rows.append({"filter": label, "kernel": kernel, "group": group,
                                 "group_required": required is not None,
                                 "registers": attrs["num_regs"],
                                 "spill_bytes": attrs["local_size_bytes"],
                                 "local_bytes": attrs["shared_size_bytes"],
                                 "warps_per_sm": warps})
            except Exception as e:  # one unloadable program must not hide the others
                print(f"{label}: {name}: {e}", file=sys.stderr)
            finally:
                os.unlink(f.name)
    print(f"{'filter':<16} {'kernel':<28} {'group':>6} {'regs':>5} {'spill B':>8} "
          f"{'local B':>8} {'warps/SM':>9}")
    for r in rows:
        group = f"{r['group']}{'' if r['group_required'] else '*'}"
        print(f"{r['filter']:<16} {r['kernel']:<28} {group:>6} {r['registers']:>5} "
              f"{r['spill_bytes']:>8} {r['local_bytes']:>8} {r['warps_per_sm']:>6}/64")
    print("* no required group size: occupancy for --group work-items")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
