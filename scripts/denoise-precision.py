#!/usr/bin/env python3
"""The denoise network's precisions on renders: each NOISY render denoised by `halo run -f
denoise:precision=P` for every P (fp32 first), then compared with its converged REF and with
the fp32 output. Needs numpy only (the GPU machine has it), so it runs where halo runs.

  scripts/denoise-precision.py [--halo build/app/halo] [--precisions fp32,tf32,fp16]
      [--verify fp16] [--json OUT] NOISY REF [NOISY REF ...]

The beauty is the file's Combined (or R, G, B) colour; the network reads the file's albedo and
normal layers as `halo run` finds them. Printed per render and precision:
- PSNR against REF in display space: clip(x, 0, 1) ** (1 / 2.2) on RGB, peak 1 (the README's
  render table uses the same);
- PSNR against the fp32 output, in the same display space and in linear values with the peak
  the largest fp32 value (at least 1, as idiff);
- the largest |P - fp32| / max(1, |fp32|) (what --verify's tolerance bounds) and whether any
  sample is NaN or infinite.
--verify P also runs `halo run --verify` with precision P and reports its exit code (0: within
the tolerance the precision states).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np


def read_pfm(path):
    with open(path, "rb") as f:
        kind = f.readline().strip()
        width, height = map(int, f.readline().split())
        scale = float(f.readline())
        channels = 3 if kind == b"PF" else 1
        data = np.frombuffer(f.read(), "<f4" if scale < 0 else ">f4")
    return data.reshape(height, width, channels)[::-1].astype(np.float64)


def beauty(path):
    """The file's colour channels, as `halo run` names them."""
    for layer in ("ViewLayer.Combined.", ""):
        yield f"{path}[{layer}R,{layer}G,{layer}B]"


def run(halo, args):
    r = subprocess.run([halo] + args, capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


def to_pfm(halo, path, out, spec=None):
    """The beauty of `path` (denoised by `spec`) as a PFM, trying each channel naming."""
    errors = []
    for ref in beauty(path):
        code, err = run(halo, ["run", ref] + (["-f", spec] if spec else []) +
                        ["--drop-layers", "-o", out])
        if code == 0:
            return
        errors.append(err)
    sys.exit(f"denoise-precision: {path}: {errors[-1]}")


def psnr(a, b, peak=1.0):
    mse = float(np.mean((a - b) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(peak * peak / mse)


def display(x):
    return np.clip(x, 0, 1) ** (1 / 2.2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--halo", default="build/app/halo")
    ap.add_argument("--precisions", default="fp32,tf32,fp16")
    ap.add_argument("--verify", default="", help="precisions to run with --verify too")
    ap.add_argument("--json")
    ap.add_argument("pairs", nargs="+", metavar="NOISY REF")
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("give NOISY REF pairs")
    precisions = a.precisions.split(",")
    if precisions[0] != "fp32":
        precisions.insert(0, "fp32")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for noisy, ref in zip(a.pairs[::2], a.pairs[1::2]):
            name = os.path.basename(noisy)
            to_pfm(a.halo, ref, f"{tmp}/ref.pfm")
            reference = display(read_pfm(f"{tmp}/ref.pfm"))
            out = {}
            for p in precisions:
                to_pfm(a.halo, noisy, f"{tmp}/{p}.pfm", f"denoise:precision={p}")
                out[p] = read_pfm(f"{tmp}/{p}.pfm")
            fp32 = out["fp32"]
            peak = max(1.0, float(np.max(np.abs(fp32))))
            for p in precisions:
                x = out[p]
                r = {"render": name, "precision": p,
                     "psnr_ref_db": psnr(display(x), reference),
                     "psnr_fp32_display_db": psnr(display(x), display(fp32)),
                     "psnr_fp32_linear_db": psnr(x, fp32, peak),
                     "max_rel_error": float(np.max(np.abs(x - fp32) / np.maximum(1, np.abs(fp32)))),
                     "finite": bool(np.all(np.isfinite(x)))}
                if p in a.verify.split(","):
                    r["verify_exit"], _ = run(a.halo, ["run", noisy, "-f", f"denoise:precision={p}",
                                                        "--verify", "--drop-layers", "-o",
                                                        f"{tmp}/verify.exr"])
                results.append(r)
                print(f"{name:28} {p:5} ref {r['psnr_ref_db']:7.3f} dB   vs fp32 display "
                      f"{r['psnr_fp32_display_db']:6.1f} dB linear {r['psnr_fp32_linear_db']:6.1f} dB"
                      f"   max rel {r['max_rel_error']:.2e}   finite {r['finite']}"
                      + (f"   --verify exit {r['verify_exit']}" if "verify_exit" in r else ""),
                      flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
