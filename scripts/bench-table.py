#!/usr/bin/env python3
"""The README's performance table from one GPU call: halo_bench's JSON and bench-peers.py's
JSON (run in the same call by `bench-gpu.sh bench peers table`).

  python3 scripts/bench-table.py halo_bench.json peers.json [--channels 1]

Per filter: halo's median and its ratio to the one-pass floor; for each peer its fastest call
on the device (name and border given), its CPU fallbacks named; halo against the fastest peer.
"""
import argparse
import json

# halo_bench's spec -> bench-peers.py's name for the same work.
SAME_WORK = {"sharpen": "conv3x3", "gaussian:r=2": "gaussian:r=2", "gaussian:r=8": "gaussian:r=8",
             "gaussian:r=16": "gaussian:r=16", "gaussian:r=64": "gaussian:r=64",
             "box:r=4": "box:r=4", "box:r=32": "box:r=32"}
PEERS = ("opencv-ocl", "cupy", "torch")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("halo_bench")
    ap.add_argument("peers")
    ap.add_argument("--channels", type=int, default=1)
    a = ap.parse_args()
    halo = json.load(open(a.halo_bench))
    peers = json.load(open(a.peers))["results"]
    print(f"{halo['device']}, driver {halo['driver']}, copy {halo['copy_gbps']:.0f} GB/s, "
          f"{a.channels} channel(s), median of {halo['runs']} runs\n")
    print("| filter | halo ms | x floor | " + " | ".join(PEERS) + " | halo vs fastest peer |")
    print("|---|---|---|" + "---|" * len(PEERS) + "---|")
    for row in halo["results"]:
        if row.get("channels") == a.channels and row.get("filter") == "copy":
            print(f"| (the image copied, `clEnqueueCopyBuffer`) | {row['median_ms']:.3f} | "
                  f"{row['x_floor']:.2f} |" + " |" * len(PEERS) + " |")
            continue
        if row.get("channels") != a.channels or row.get("filter") not in SAME_WORK:
            continue
        work = SAME_WORK[row["filter"]]
        cells, fastest = [], None
        for peer in PEERS:
            calls = [c for c in peers if c.get("peer") == peer and c.get("filter") == work
                     and c.get("channels") == a.channels]
            device = [c for c in calls if c["path"] == "gpu"]
            if not device:
                slow = min(calls, key=lambda c: c["ms"]) if calls else None
                cells.append(f"CPU fallback only: {slow['ms']:.3f} `{slow['call']}`" if slow else "")
                continue
            best = min(device, key=lambda c: c["ms"])
            fastest = best["ms"] if fastest is None else min(fastest, best["ms"])
            fallbacks = [c["call"] for c in calls if c["path"] != "gpu"]
            cells.append(f"{best['ms']:.3f} `{best['call']}`" +
                         (f" (CPU: {', '.join(fallbacks)})" if fallbacks else ""))
        ratio = f"{fastest / row['median_ms']:.1f}x" if fastest else ""
        print(f"| {row['filter']} | {row['median_ms']:.3f} | {row['x_floor']:.1f} | " +
              " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
