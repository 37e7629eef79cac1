#!/usr/bin/env python3
"""PSNR and SSIM of halo's denoisers and of classical peers on noisy renders against their
converged references: the README's per-scene table.

  /usr/bin/python3 scripts/render-psnr.py [--halo build/app/halo] [--scene NAME NOISY REF ...]
      [--spec SPEC ...] [--no-peers] [--json out.json] [--markdown out.md]

Without --scene: every pair in tests/data/render (scene_4spp/scene_1024spp as "wide", and
VIEW_4spp/VIEW_512spp for the other views of make_scene.py). Both images are tonemapped as
clip(x, 0, 1) ** (1 / 2.2) on RGB before comparing; SSIM is scikit-image's on that RGB.
Each spec runs `halo run NOISY -f SPEC`; "noisy" (no filter) is the first row.

Peers, each tuned per scene against the reference (so each is at its best, which a user
could not do without the reference): OpenCV's joint bilateral filter
(cv2.ximgproc.jointBilateralFilter) on albedo-demodulated radiance with the normals as guide,
remodulated; OpenCV's guided filter (cv2.ximgproc.guidedFilter) the same way; scikit-image's
NL-means on the demodulated radiance. Needs Debian's python3-numpy, python3-openimageio,
python3-opencv and python3-skimage.
"""
import argparse
import glob
import itertools
import json
import os
import re
import subprocess
import tempfile

import numpy as np
import OpenImageIO as oiio

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "render")
DEFAULT_SPECS = [
    "bilateral:albedo=off", "bilateral", "atrous:albedo=off", "atrous",
    "bilateral:normal=off:depth=off:albedo=off", "denoise",
]


def layer(path, name, count):
    """The first `count` channels of layer `name` (Combined, Normal, Depth, DiffCol)."""
    buf = oiio.ImageBuf(path)
    names = list(buf.spec().channelnames)
    picked = [i for i, n in enumerate(names) if n.split(".")[-2:-1] == [name]][:count]
    if len(picked) < count:
        raise SystemExit(f"{path}: no {name} layer with {count} channels (has {names})")
    return buf.get_pixels(oiio.FLOAT)[:, :, picked]


def rgb(path):
    buf = oiio.ImageBuf(path)
    names = list(buf.spec().channelnames)
    if any(".Combined." in n for n in names):
        return layer(path, "Combined", 3)
    pick = [n for n in names if n.split(".")[-1] in ("R", "G", "B")][:3]
    return buf.get_pixels(oiio.FLOAT)[:, :, [names.index(n) for n in pick]]


def tonemap(x):
    return np.clip(x, 0, 1) ** (1 / 2.2)


def psnr(a, b):
    mse = float(np.mean((tonemap(a) - tonemap(b)) ** 2))
    return 10 * np.log10(1 / mse) if mse > 0 else float("inf")


def ssim(a, b):
    from skimage.metrics import structural_similarity
    return float(structural_similarity(tonemap(a), tonemap(b), channel_axis=2, data_range=1.0))


def scenes_in_repo():
    found = [("wide", os.path.join(DATA, "scene_4spp.exr"), os.path.join(DATA, "scene_1024spp.exr"))]
    for noisy in sorted(glob.glob(os.path.join(DATA, "*_4spp.exr"))):
        view = re.sub(r"_4spp\.exr$", "", os.path.basename(noisy))
        refs = sorted(glob.glob(os.path.join(DATA, f"{view}_*spp.exr")))
        refs = [r for r in refs if r != noisy]
        if view != "scene" and refs:
            found.append((view, noisy, refs[-1]))
    return found


def demodulated(noisy_path):
    """Radiance divided by the albedo (where it is not black), the albedo, and the normals."""
    radiance = rgb(noisy_path)
    albedo = layer(noisy_path, "DiffCol", 3)
    normal = layer(noisy_path, "Normal", 3)
    safe = np.where(albedo > 1e-3, albedo, 1.0)
    return (radiance / safe).astype(np.float32), safe.astype(np.float32), normal.astype(np.float32)


def best_of(grid, run, ref):
    """The grid point with the highest PSNR: (psnr, params, image)."""
    best = None
    for params in grid:
        out = run(**params)
        score = psnr(out, ref)
        if best is None or score > best[0]:
            best = (score, params, out)
    return best


def peer_rows(noisy_path, ref):
    import cv2
    light, albedo, normal = demodulated(noisy_path)
    rows = []
    # Joint bilateral, guided by the normals (the call: d=11, sigmaColor 0.05,
    # sigmaSpace 5 is one of the grid points). Each grid reaches past the best values found
    # on these scenes, so no peer's best sits on an edge of its grid (but texture's, far
    # behind).
    grid = [dict(d=d, sc=sc, ss=ss) for d, sc, ss in
            itertools.product((3, 5, 7, 9, 11, 15), (0.02, 0.05, 0.1, 0.2, 0.4, 0.8),
                              (0.75, 1, 1.5, 2, 3, 5, 8))]
    score, p, out = best_of(grid, lambda d, sc, ss: cv2.ximgproc.jointBilateralFilter(
        normal, light, d, sc, ss) * albedo, ref)
    rows.append((f"OpenCV jointBilateralFilter (normals; d={p['d']}, sigmaColor={p['sc']}, "
                 f"sigmaSpace={p['ss']})", out))
    grid = [dict(r=r, eps=eps) for r, eps in
            itertools.product((1, 2, 3, 4, 8), (1e-3, 3e-3, 1e-2, 3e-2, 1e-1))]
    score, p, out = best_of(grid, lambda r, eps: cv2.ximgproc.guidedFilter(
        normal, light, r, eps) * albedo, ref)
    rows.append((f"OpenCV guidedFilter (normals; r={p['r']}, eps={p['eps']})", out))
    from skimage.restoration import denoise_nl_means
    grid = [dict(h=h) for h in (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)]
    score, p, out = best_of(grid, lambda h: denoise_nl_means(
        np.clip(light, 0, 4), h=h, patch_size=5, patch_distance=6, channel_axis=2,
        fast_mode=True).astype(np.float32) * albedo, ref)
    rows.append((f"scikit-image denoise_nl_means (h={p['h']})", out))
    return rows


def oidn_numpy(noisy_path, weights):
    """OIDN's network and processing by tests/denoise/oidn_numpy.py (independent of halo)."""
    import sys
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "denoise"))
    import oidn_numpy as on
    chw = lambda a: np.ascontiguousarray(a.transpose(2, 0, 1), dtype=np.float32)
    color = chw(rgb(noisy_path))
    out = on.denoise(on.read_tza(weights), color, chw(layer(noisy_path, "DiffCol", 3)),
                     chw(layer(noisy_path, "Normal", 3)), scale=on.autoexposure(color))
    return out.transpose(1, 2, 0)


def read_result(pattern, scene, noisy):
    """A result made elsewhere (e.g. on the GPU machine): PATTERN with {scene} replaced by the
    noisy file's view name (scene, close, ...)."""
    view = re.sub(r"_4spp\.exr$", "", os.path.basename(noisy))
    path = pattern.replace("{scene}", view)
    return rgb(path) if path.endswith(".exr") else read_pfm(path)


def read_pfm(path):
    with open(path, "rb") as f:
        channels = 3 if f.readline().strip() == b"PF" else 1
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), "<f4" if scale < 0 else ">f4")
    return data.reshape(h, w, channels)[::-1].astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", nargs=3, action="append", metavar=("NAME", "NOISY", "REF"))
    ap.add_argument("--spec", action="append")
    ap.add_argument("--halo", default="build/app/halo")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--oidn-numpy", metavar="WEIGHTS",
                    help="add OIDN's network with these weights (rt_hdr_alb_nrm.tza) run by "
                         "tests/denoise/oidn_numpy.py, independent of halo")
    ap.add_argument("--result", action="append", default=[], metavar="NAME=PATTERN",
                    help="a row of results made elsewhere: files PATTERN with {scene} for the "
                         "view (scene, close, ...), EXR or PFM")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    scenes = args.scene or scenes_in_repo()
    table = {}  # method -> scene -> (psnr, ssim)
    order = []

    def add(method, scene, image, ref):
        if method not in table:
            table[method] = {}
            order.append(method)
        table[method][scene] = (psnr(image, ref), ssim(image, ref))
        print(f"{scene:<8} {table[method][scene][0]:7.2f} dB  SSIM {table[method][scene][1]:.4f}  "
              f"{method}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        for scene, noisy, reference in scenes:
            ref = rgb(reference)
            add("noisy", scene, rgb(noisy), ref)
            for i, spec in enumerate(args.spec or DEFAULT_SPECS):
                out = os.path.join(tmp, f"{scene}-{i}.exr")  # one name each: OIIO caches by name
                subprocess.run([args.halo, "-q", "run", noisy, "-f", spec, "-o", out], check=True)
                add(f"halo {spec}", scene, rgb(out), ref)
            for spec in args.result:
                name, pattern = spec.rsplit("=", 1)
                add(name, scene, read_result(pattern, scene, noisy), ref)
            if args.oidn_numpy:
                add("OIDN rt_hdr_alb_nrm (independent NumPy)", scene,
                    oidn_numpy(noisy, args.oidn_numpy), ref)
            if not args.no_peers:
                for name, out in peer_rows(noisy, ref):
                    # Parameters differ per scene: the row is the call, the cell says its best.
                    method = name.split(" (")[0]
                    add(method, scene, out, ref)
                    table[method][scene] += (name,)
    names = [s[0] for s in scenes]
    lines = ["| method | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for method in order:
        cells = []
        for s in names:
            cell = table[method].get(s)
            cells.append(f"{cell[0]:.2f} dB / {cell[1]:.3f}" if cell else "")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    print("\n" + "\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.json:
        json.dump({"command": "scripts/render-psnr.py (tonemap clip(x,0,1)^(1/2.2); SSIM: "
                              "scikit-image on the tonemapped RGB)",
                   "scenes": {s: {"noisy": os.path.relpath(n), "reference": os.path.relpath(r)}
                              for s, n, r in scenes},
                   "rows": {m: {s: {"psnr_db": round(v[0], 3), "ssim": round(v[1], 4),
                                    **({"call": v[2]} if len(v) > 2 else {})}
                                for s, v in table[m].items()} for m in order}},
                  open(args.json, "w"), indent=2)


if __name__ == "__main__":
    main()
