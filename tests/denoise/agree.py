#!/usr/bin/env python3
"""halo's denoise filter against an independent implementation of OIDN (oidn_numpy.py beside
this file): crops of a repository render denoised by `halo run` on the reference and on the
default device, and by NumPy from the same weights, for OIDN's HDR networks with and without
guides, its clean-aux networks after the rt_alb/rt_nrm prefilters, and an LDR (8-bit) photo.
Every sample must agree within 1e-4 x max(1, |NumPy's|) (1e-2 where the device runs half or TF32
products on tensor cores). Exit status 1 on any disagreement.

  agree.py HALO WEIGHTS_DIR RENDER.exr
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oidn_numpy as oidn  # noqa: E402

LAYERS = {"colour": "ViewLayer.Combined", "albedo": "ViewLayer.DiffCol", "normal": "ViewLayer.Normal"}


def main():
    halo, weights, render = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="halo-agree-")
    path = lambda name: os.path.join(tmp, name)

    def run(*args):
        subprocess.run([halo, "-q", *args], check=True)

    # The render's layers as PFM, then crops of them: an odd size and one whose deepest level
    # is odd (96 x 80 -> 6 x 5).
    for name, layer in LAYERS.items():
        xyz = "X,Y,Z" if name == "normal" else "R,G,B"
        channels = ",".join(f"{layer}.{c}" for c in xyz.split(","))
        run("run", f"{render}[{channels}]", "-o", path(name + ".pfm"))
    full = {name: oidn.read_pfm(path(name + ".pfm")) for name in LAYERS}
    failures = 0
    # The default device runs half products on NVIDIA's tensor cores (precision=auto), held to
    # 1e-2.
    on_nvidia = "NVIDIA" in subprocess.run([halo, "devices"], capture_output=True, text=True).stdout
    devices = [("ref", 1e-4), ("auto", 1e-2 if on_nvidia else 1e-4)]

    def compare(label, mine, theirs, tolerance):
        nonlocal failures
        err = float(np.max(np.abs(mine - theirs) / np.maximum(1.0, np.abs(theirs))))
        ok = err <= tolerance
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {label}: largest error {err:.3g} x max(1, |ref|) "
              f"(tolerance {tolerance:g})")

    for (x, y, w, h) in [(150, 80, 45, 29), (100, 60, 96, 80)]:
        crop = {n: a[:, y:y + h, x:x + w] for n, a in full.items()}
        for n, a in crop.items():
            oidn.write_pfm(path(f"{n}-c.pfm"), a)
        guides = f":albedo={path('albedo-c.pfm')}:normal={path('normal-c.pfm')}"
        t = lambda name: oidn.read_tza(os.path.join(weights, name + ".tza"))
        hdr_scale = oidn.autoexposure(crop["colour"])
        albedo_clean = oidn.denoise(t("rt_alb"), crop["albedo"], transfer="srgb", hdr=False)
        normal_clean = oidn.denoise(t("rt_nrm"), crop["normal"], transfer="linear", hdr=False,
                                    snorm=True)
        cases = [
            ("rt_hdr_alb_nrm", "denoise" + guides,
             oidn.denoise(t("rt_hdr_alb_nrm"), crop["colour"], crop["albedo"], crop["normal"],
                          scale=hdr_scale)),
            ("rt_hdr", "denoise:albedo=off:normal=off",
             oidn.denoise(t("rt_hdr"), crop["colour"], scale=hdr_scale)),
            ("rt_alb, rt_nrm, rt_hdr_calb_cnrm", "denoise:aux=prefilter" + guides,
             oidn.denoise(t("rt_hdr_calb_cnrm"), crop["colour"], albedo_clean, normal_clean,
                          scale=hdr_scale)),
        ]
        for label, spec, expected in cases:
            for device, tolerance in devices:
                out = path("out.pfm")
                run("--device", device, "run", path("colour-c.pfm"), "-f", spec, "-o", out)
                compare(f"{w}x{h} {label} on {device}", oidn.read_pfm(out), expected, tolerance)
        # LDR: the crop tonemapped into an 8-bit PNG, denoised as display-encoded sRGB.
        ldr = np.clip(crop["colour"], 0, 1) ** (1 / 2.2)
        oidn.write_pfm(path("ldr.pfm"), ldr.astype(np.float32))
        run("run", path("ldr.pfm"), "--type", "u8", "-o", path("ldr.png"))
        run("run", path("ldr.png"), "-o", path("ldr-codes.pfm"))
        codes = oidn.read_pfm(path("ldr-codes.pfm"))
        expected = oidn.denoise(t("rt_ldr_alb_nrm"), codes, crop["albedo"], crop["normal"],
                                transfer="linear", hdr=False)
        for device, tolerance in devices:
            run("--device", device, "run", path("ldr.png"), "-f", "denoise" + guides,
                "--type", "float", "-o", path("ldr-out.pfm"))
            compare(f"{w}x{h} rt_ldr_alb_nrm (8-bit) on {device}", oidn.read_pfm(path("ldr-out.pfm")),
                    expected, tolerance)
    # Non-finite samples, sanitised as OIDN's input process does (+Inf to FLT_MAX, NaN to 0,
    # in its autoexposure too): a finite result equal to NumPy's, not NaN everywhere.
    crop = {n: a[:, 60:140, 100:197].copy() for n, a in full.items()}
    crop["colour"][1, 30, 40] = np.inf
    crop["colour"][0, 50, 10] = np.nan
    crop["albedo"][2, 5, 5] = np.inf
    crop["normal"][0, 7, 7] = np.nan
    for n, a in crop.items():
        oidn.write_pfm(path(f"{n}-s.pfm"), a)
    expected = oidn.denoise(oidn.read_tza(os.path.join(weights, "rt_hdr_alb_nrm.tza")),
                            crop["colour"], crop["albedo"], crop["normal"],
                            scale=oidn.autoexposure(crop["colour"]))
    for device, tolerance in devices:
        run("--device", device, "run", path("colour-s.pfm"), "-f",
            f"denoise:albedo={path('albedo-s.pfm')}:normal={path('normal-s.pfm')}", "-o",
            path("s-out.pfm"))
        got = oidn.read_pfm(path("s-out.pfm"))
        finite = bool(np.isfinite(got).all())
        failures += not finite
        print(f"{'ok  ' if finite else 'FAIL'} +Inf and NaN samples on {device}: "
              f"{'a finite result' if finite else 'non-finite samples in the result'}")
        compare(f"+Inf and NaN samples on {device}", got, expected, tolerance)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
