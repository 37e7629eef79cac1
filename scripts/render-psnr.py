#!/usr/bin/env python3
"""PSNR of halo's denoisers on a noisy render against its converged reference.

  /usr/bin/python3 scripts/render-psnr.py [--halo build/app/halo] NOISY.exr REFERENCE.exr \
      [--spec SPEC ...] [--json out.json]

Both images are tonemapped as clip(x, 0, 1) ** (1 / 2.2) on RGB before comparing. Each spec
runs `halo run NOISY -f SPEC`; "noisy" (no filter) is always the first row. Needs Debian's
python3-numpy and python3-openimageio.
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import OpenImageIO as oiio

DEFAULT_SPECS = [
    "bilateral:albedo=off", "bilateral", "atrous:albedo=off", "atrous",
    "bilateral:normal=off:depth=off:albedo=off",
]


def rgb(path):
    buf = oiio.ImageBuf(path)
    names = buf.spec().channelnames
    pick = [n for n in names if n.split(".")[-1] in ("R", "G", "B")][:3]
    return buf.get_pixels(oiio.FLOAT)[:, :, [names.index(n) for n in pick]]


def psnr(a, b):
    ta = np.clip(a, 0, 1) ** (1 / 2.2)
    tb = np.clip(b, 0, 1) ** (1 / 2.2)
    mse = float(np.mean((ta - tb) ** 2))
    return 10 * np.log10(1 / mse) if mse > 0 else float("inf")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("noisy")
    ap.add_argument("reference")
    ap.add_argument("--spec", action="append")
    ap.add_argument("--halo", default="build/app/halo")
    ap.add_argument("--json")
    args = ap.parse_args()
    ref = rgb(args.reference)
    rows = [{"spec": "noisy", "psnr_db": psnr(rgb(args.noisy), ref)}]
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate(args.spec or DEFAULT_SPECS):
            out = os.path.join(tmp, f"out{i}.exr")  # one name each: OIIO caches by name
            subprocess.run([args.halo, "-q", "run", args.noisy, "-f", spec, "-o", out], check=True)
            rows.append({"spec": spec, "psnr_db": psnr(rgb(out), ref)})
    for r in rows:
        print(f"{r['psnr_db']:7.2f} dB  {r['spec']}")
    if args.json:
        json.dump({"noisy": args.noisy, "reference": args.reference, "rows": rows},
                  open(args.json, "w"), indent=2)


if __name__ == "__main__":
    main()
