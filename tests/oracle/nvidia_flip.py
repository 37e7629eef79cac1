"""FLIP pairs and NVIDIA's own figures for them.

The pairs are made here from NumPy's seeded generators and the repository's renders, so they
are the same on every machine. Their figures (mean, weighted median and quartiles, min, max,
HDR exposures) and, for the smaller pairs, NVIDIA's heat and exposure maps (as colour-map
indices, 8-bit PNG) sit in
tests/oracle/nvidia-flip/, produced by NVIDIA's FLIP v1.6 C++ code, not halo's:

    /usr/bin/python3 tests/oracle/nvidia_flip.py --produce TOOL

TOOL is a build of FLIP.h's `FLIP::evaluate()` (github.com/NVlabs/flip,
flip_evaluator/cpp/FLIP.h at c9d0dd1; the committed figures came from its CPU path transcribed
statement for statement, CUDA left out, outside this repository) with the FLIP tool's own pooling
(FLIPToolHelpers.h: float sums, `getPercentile(p, true)`) and colour mapping
(`int(e * 255 + 0.5) % 256`), called as

    TOOL ref.raw test.raw WIDTH HEIGHT ldr|hdr PPD START STOP TONEMAPPER OUT

on float32 RGB rows top to bottom (LDR: code / 255, linearised by the tool as its PNG loader's
images are; START/STOP `auto` for its own exposures). It prints the figures as one JSON object
and writes OUT.magma.rgb / OUT.viridis.rgb (8-bit RGB) and OUT.err.raw (float32). The
environment's NVFLIP_BUILD (how TOOL was built) goes into figures.json as produced_by.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.fft

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from oracle import photo, hdr, read_oiio, to_codes  # noqa: E402

FIGURES = os.path.join(HERE, "nvidia-flip")
PPD = 67.0206  # FLIP's default: 0.7 m from a 0.7 m wide 3840-pixel screen
RENDERS = os.path.join(HERE, "..", "data", "render")
MAPPED_PIXELS = 80_000  # pairs up to this size keep NVIDIA's maps too; larger ones figures


def dct_blocks(image, step):
    """JPEG's artefacts without an encoder: each 8x8 block's DCT coefficients quantised."""
    h, w, c = image.shape
    out = image.copy()
    for y in range(0, h - h % 8, 8):
        for x in range(0, w - w % 8, 8):
            block = scipy.fft.dctn(image[y:y + 8, x:x + 8], axes=(0, 1), norm="ortho")
            out[y:y + 8, x:x + 8] = scipy.fft.idctn(np.round(block / step) * step,
                                                     axes=(0, 1), norm="ortho")
    return np.clip(out, 0, 1)


def box_blur(image, r):
    padded = np.pad(image, ((r, r), (r, r), (0, 0)), mode="edge")
    out = np.zeros_like(image)
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            out += padded[dy:dy + image.shape[0], dx:dx + image.shape[1]]
    return out / (2 * r + 1) ** 2


def ldr_pairs():
    """(name, reference codes, test codes): 8-bit RGB, as the FLIP tool reads PNGs."""
    rng = np.random.default_rng(5)
    ref = photo(97, 61, 3, seed=3)
    yield "noise", ref, np.clip(ref + rng.normal(0, 0.05, ref.shape), 0, 1)
    yield "blur", ref, box_blur(ref, 1)
    yield "dct-blocks", ref, dct_blocks(ref, 0.12)
    yield "shifted-edge", ref, np.roll(ref, 1, axis=1)
    big = photo(320, 241, 3, seed=11)
    yield "darker", big, big * 0.8
    yield "faint-noise", big, np.clip(big + rng.normal(0, 0.02, big.shape), 0, 1)
    black = np.zeros((16, 16, 3), np.float32)
    yield "black-white", black, black + 1


def hdr_pairs():
    """(name, reference, test): linear float RGB renders against noisier ones."""
    rng = np.random.default_rng(8)
    ref = np.abs(hdr(73, 145, 3, seed=9, specials=False))
    yield "render", ref, (ref * np.exp(rng.normal(0, 0.3, ref.shape))).astype(np.float32)
    for scene, spp in [("scene", 1024), ("close", 512), ("dim", 512), ("metal", 512)]:
        high = read_oiio(os.path.join(RENDERS, f"{scene}_{spp}spp.exr"))[0][..., :3]
        low = read_oiio(os.path.join(RENDERS, f"{scene}_4spp.exr"))[0][..., :3]
        yield f"{scene}-4spp", np.ascontiguousarray(high), np.ascontiguousarray(low)


def pairs():
    """Every pair as (name, mode, reference, test) with the samples both tools read: LDR as
    8-bit codes, HDR as float32."""
    for name, a, b in ldr_pairs():
        yield name, "ldr", to_codes(a), to_codes(b)
    for name, a, b in hdr_pairs():
        yield name, "hdr", a.astype(np.float32), b.astype(np.float32)


def figures():
    with open(os.path.join(FIGURES, "figures.json")) as f:
        return json.load(f)


def indices(rgb, colour_map):
    """The colour-map index of each pixel of an 8-bit map (the nearest entry)."""
    table = np.rint(colour_map * 255).astype(int)
    flat = rgb.reshape(-1, 1, 3).astype(int)
    return np.abs(flat - table[None]).sum(-1).argmin(-1).reshape(rgb.shape[:2]).astype(np.uint8)


def produce(tool):
    import cv2
    from matplotlib import cm
    magma, viridis = cm.magma(np.arange(256))[:, :3], cm.viridis(np.arange(256))[:, :3]
    os.makedirs(FIGURES, exist_ok=True)
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, mode, a, b in pairs():
            h, w = a.shape[:2]
            for part, image in (("a", a), ("b", b)):
                samples = image.astype(np.float32) / 255 if mode == "ldr" else image
                np.ascontiguousarray(samples, np.float32).tofile(os.path.join(tmp, part + ".raw"))
            done = subprocess.run([tool, os.path.join(tmp, "a.raw"), os.path.join(tmp, "b.raw"),
                                   str(w), str(h), mode, str(PPD), "auto", "auto", "aces",
                                   os.path.join(tmp, "out")],
                                  capture_output=True, text=True, check=True)
            result = json.loads(done.stdout)
            result.pop("seconds", None)
            table[name] = result
            if h * w > MAPPED_PIXELS:
                continue
            heat = np.fromfile(os.path.join(tmp, "out.magma.rgb"), np.uint8).reshape(h, w, 3)
            cv2.imwrite(os.path.join(FIGURES, f"{name}.heat.png"), indices(heat, magma))
            if mode == "hdr":
                exposure = np.fromfile(os.path.join(tmp, "out.viridis.rgb"),
                                       np.uint8).reshape(h, w, 3)
                cv2.imwrite(os.path.join(FIGURES, f"{name}.exposure.png"),
                            indices(exposure, viridis))
    with open(os.path.join(FIGURES, "figures.json"), "w") as f:
        json.dump({"produced_by": os.environ.get("NVFLIP_BUILD", tool), "ppd": PPD,
                   "pairs": table}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--produce":
        sys.exit(__doc__)
    produce(sys.argv[2])
