#!/usr/bin/env python3
"""Chart of histogram time against pixels per work-item, per strategy, from halo_bench JSON.

  python3 scripts/plot-hist-ppi.py halo_bench.json hist-ppi.png
"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    source, target = sys.argv[1], sys.argv[2]
    doc = json.load(open(source))
    rows = [r for r in doc["results"] if "histogram" in r]
    cases = sorted({r["histogram"] for r in rows})
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4), squeeze=False)
    for ax, case in zip(axes[0], cases):
        for method in ("global", "local", "private"):
            pts = sorted((r["ppi"], r["median_ms"]) for r in rows
                         if r["histogram"] == case and r["method"] == method
                         and r.get("ppi_spec") != "auto")
            if pts:
                ax.plot([p for p, _ in pts], [m for _, m in pts], marker="o", label=method)
        floor = next(r["floor_ms"] for r in rows if r["histogram"] == case)
        ax.axhline(floor, color="grey", linestyle="--", label="read floor")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{case} ({doc['device']})")
        ax.set_xlabel("pixels per work-item")
        ax.set_ylabel("ms")
        ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=100)


if __name__ == "__main__":
    main()
