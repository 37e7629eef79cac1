#!/usr/bin/env python3
"""Candidate forms of temporal denoising, measured on rendered frame sequences before one is
built into halo: halo's per-frame `denoise` outputs, then each candidate, against references.

  /usr/bin/python3 scripts/temporal-lab.py NOISY REF DENOISED [--frames 1-8]
      [--form outputs|inputs|both|weighted-inputs|weighted-both|guides|guides+outputs|none]
      [--n 2] [--sigma 0.065] [--patch 5] [--zero] [--pointwise]

NOISY, REF and DENOISED are sequence patterns (dolly_4spp_####.exr): the noisy frames as
tests/data/render/make_sequence.py renders them (colour with Vector, Depth, Normal and DiffCol
passes), the references (more samples, denoised), and halo's per-frame denoise of NOISY
(`halo run NOISY -f denoise -o DENOISED`). Forms:
  outputs  each denoised frame averaged with its neighbours t-n..t+n followed through the
           motion vectors (bilinear), each weighted exp(-d / sigma^2), d the patch x patch mean
           of the squared difference of (v / (1 + v))^(1/2.2) from frame t, and 0 where depth
           (5%), normals (cos 0.9) or albedo (0.1) say the surface was not seen there, against
           frame t's 3x3 neighbourhood (--pointwise: its pixel alone, which rejects antialiased
           edges): the form halo builds as denoise:temporal=n;
  inputs   the noisy colour accumulated the same way (nearest samples, guides deciding),
           then denoised by halo again;
  both     inputs, then outputs; weighted-inputs, weighted-both: the same with each
           neighbour's samples weighted as the output averaging weighs it;
  guides   the albedo and normals followed and averaged the same way (no colour weights),
           then each frame denoised by halo with them; guides+outputs: then outputs;
  none     DENOISED measured as it is (halo's own denoise:temporal outputs, say).
--zero takes every motion as 0 (a still camera and scene). Measures, in display space
clip(x, 0, 1)^(1/2.2): PSNR against the references, the temporal error (the figure `halo
compare --metrics temporal` gives), the frame-to-frame difference, PSNR over pixels not
seen in the previous frame (ghosting shows there first), and the temporal error on the pixels
seen in both frames split into the error's change along the motion (`along_motion`) and the
previous error field moved by it (`moved_field`; measure() says why it bounds what averaging
along the motion can remove). Needs Debian's python3-numpy,
python3-openimageio and python3-opencv.
"""
import argparse
import os
import subprocess
import tempfile

import cv2
import numpy as np
import OpenImageIO as oiio

PASSES = {"rgb": ["Combined.R", "Combined.G", "Combined.B"],
          "alb": ["DiffCol.R", "DiffCol.G", "DiffCol.B"],
          "nrm": ["Normal.X", "Normal.Y", "Normal.Z"], "z": ["Depth.Z"],
          "vec": ["Vector.X", "Vector.Y", "Vector.Z", "Vector.W"]}


def read(path):
    image = oiio.ImageInput.open(path)
    if not image:
        raise SystemExit(f"{path}: {oiio.geterror()}")
    names, pixels = list(image.spec().channelnames), image.read_image("float")
    image.close()
    frame = {}
    for key, channels in PASSES.items():
        found = [names.index("ViewLayer." + c) for c in channels if "ViewLayer." + c in names]
        if len(found) == len(channels):
            frame[key] = pixels[..., found]
    if "rgb" not in frame:
        frame["rgb"] = pixels[..., :3]
    return frame


def display(x):
    return np.clip(x, 0, 1) ** (1 / 2.2)


def tone(x):
    """The weights' display space: HDR compressed, (v / (1 + v))^(1/2.2)."""
    x = np.maximum(x, 0)
    return (x / (1 + x)) ** (1 / 2.2)


def psnr(a, b, mask=None):
    d = (display(a) - display(b)) ** 2
    return 10 * np.log10(1 / (d[mask] if mask is not None else d).mean())


def remap(image, mx, my, interpolation=cv2.INTER_LINEAR):
    return cv2.remap(image.astype(np.float32), mx.astype(np.float32), my.astype(np.float32),
                     interpolation, borderMode=cv2.BORDER_REPLICATE)


class Sequence:
    def __init__(self, frames, zero, pointwise=False):
        self.frames, self.zero, self.pointwise = frames, zero, pointwise
        h, w = frames[0]["rgb"].shape[:2]
        self.ys, self.xs = np.mgrid[0:h, 0:w].astype(np.float32)

    def step(self, t, back):
        """Where frame t's pixels lie in frame t - 1 (back) or t + 1 (Blender's vectors)."""
        if self.zero:
            return self.xs, self.ys
        v = self.frames[t]["vec"]
        return (self.xs + v[..., 0], self.ys - v[..., 1]) if back else \
            (self.xs - v[..., 2], self.ys + v[..., 3])

    def seen(self, t, s, mx, my):
        g, h = self.frames[t], self.frames[s]
        rows, cols = mx.shape
        ok = (mx >= 0) & (mx <= cols - 1) & (my >= 0) & (my <= rows - 1)
        z = remap(h["z"][..., 0], mx, my, cv2.INTER_NEAREST)
        n = remap(h["nrm"], mx, my, cv2.INTER_NEAREST)
        a = remap(h["alb"], mx, my, cv2.INTER_NEAREST)
        if self.pointwise:
            gz = g["z"][..., 0]
            ok &= np.abs(z - gz) <= 0.05 * np.minimum(np.abs(z), np.abs(gz))
            ok &= (n * g["nrm"]).sum(-1) >= 0.9 * np.linalg.norm(n, axis=-1) * np.linalg.norm(
                g["nrm"], axis=-1) - 1e-6
            return ok & (np.abs(a - g["alb"]).max(-1) <= 0.1)
        box = np.ones((3, 3), np.uint8)
        gz = g["z"][..., 0]
        ok &= (z >= 0.95 * cv2.erode(gz, box)) & (z <= 1.05 * cv2.dilate(gz, box))
        unit = lambda v: v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-30)
        padded = np.pad(g["nrm"], ((1, 1), (1, 1), (0, 0)), mode="edge")
        ls, best = np.linalg.norm(n, axis=-1), np.full(mx.shape, -2.0)
        for dy in range(3):
            for dx in range(3):
                m = padded[dy:dy + rows, dx:dx + cols]
                lt = np.linalg.norm(m, axis=-1)
                cosine = np.where((ls > 0) & (lt > 0), (unit(n) * unit(m)).sum(-1), -1.0)
                best = np.maximum(best, np.where((ls == 0) & (lt == 0), 1.0, cosine))
        ok &= best >= 0.9
        low = np.stack([cv2.erode(g["alb"][..., c], box) for c in range(3)], -1)
        high = np.stack([cv2.dilate(g["alb"][..., c], box) for c in range(3)], -1)
        return ok & ((a >= low - 0.1) & (a <= high + 0.1)).all(-1)

    def follow(self, t, s):
        """Frame t's pixels' positions in frame s, the steps between composed; where seen."""
        mx, my, cur = self.xs.copy(), self.ys.copy(), t
        while cur != s:
            fx, fy = self.step(cur, s < cur)
            mx, my = mx + remap(fx - self.xs, mx, my), my + remap(fy - self.ys, mx, my)
            cur += -1 if s < cur else 1
        return mx, my, self.seen(t, s, mx, my)


def weighted(seq, images, t, n, sigma, patch, interpolation=cv2.INTER_LINEAR, guide=None):
    """Image t averaged with its followed neighbours; weights from `guide` (the images)."""
    guide = images if guide is None else guide
    total, weights = images[t].astype(np.float64).copy(), np.ones(images[t].shape[:2])
    for s in range(max(0, t - n), min(len(images), t + n + 1)):
        if s == t:
            continue
        mx, my, ok = seq.follow(t, s)
        w = ok.astype(np.float64)
        if sigma:
            d = ((tone(remap(guide[s], mx, my)) - tone(guide[t])) ** 2).mean(-1)
            w *= np.exp(-cv2.blur(d, (patch, patch)) / sigma ** 2)
        total += remap(images[s], mx, my, interpolation) * w[..., None]
        weights += w
    return (total / weights[..., None]).astype(np.float32)


def measure(seq, outputs, refs):
    steps = range(1, len(outputs))
    temporal = [np.abs((display(outputs[t]) - display(outputs[t - 1])) -
                       (display(refs[t]) - display(refs[t - 1]))).mean() for t in steps]
    f2f = [np.abs(display(outputs[t]) - display(outputs[t - 1])).mean() for t in steps]
    uncovered = [psnr(outputs[t], refs[t], ~seq.follow(t, t - 1)[2]) for t in steps
                 if (~seq.follow(t, t - 1)[2]).sum() > 50]
    # The temporal error split on the pixels seen in both frames: e = display(O) - display(R)
    # and e' the previous frame's followed into this one. |e_t - e_t-1| at a pixel is at most
    # |e_t - e'| (the error changing along the motion: what averaging along it removes) plus
    # |e' - e_t-1| (the previous error field moved by the motion: an error that stays on its
    # surface still changes at a fixed pixel when the surface moves; only a smaller error
    # lowers it).
    along, moved, seen_te, seen_share = [], [], [], []
    for t in steps:
        mx, my, ok = seq.follow(t, t - 1)
        e_t = display(outputs[t]) - display(refs[t])
        e_p = display(outputs[t - 1]) - display(refs[t - 1])
        followed = remap(e_p, mx, my)
        along.append(np.abs(e_t - followed)[ok].mean())
        moved.append(np.abs(followed - e_p)[ok].mean())
        seen_te.append(np.abs(e_t - e_p)[ok].mean())
        seen_share.append(ok.mean())
    return {"psnr": np.mean([psnr(o, r) for o, r in zip(outputs, refs)]),
            "temporal": np.mean(temporal), "f2f": np.mean(f2f),
            "uncovered_psnr": np.mean(uncovered) if uncovered else float("nan"),
            "temporal_seen": np.mean(seen_te), "along_motion": np.mean(along),
            "moved_field": np.mean(moved), "seen_share": np.mean(seen_share)}


def denoise_inputs(noisy_paths, colours, halo, passes="rgb"):
    """halo's denoise of each noisy frame with `passes` (its colour, or guides) replaced."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (path, replaced) in enumerate(zip(noisy_paths, colours)):
            image = oiio.ImageInput.open(path)
            spec, pixels = image.spec(), image.read_image("float").copy()
            image.close()
            names = list(spec.channelnames)
            for key, values in ([(passes, replaced)] if passes == "rgb" else replaced.items()):
                for c, name in enumerate(PASSES[key]):
                    pixels[..., names.index("ViewLayer." + name)] = values[..., c]
            given, made = os.path.join(tmp, f"in{k}.exr"), os.path.join(tmp, f"out{k}.exr")
            buf = oiio.ImageBuf(oiio.ImageSpec(spec.width, spec.height, spec.nchannels, "float"))
            buf.specmod().channelnames = names
            buf.set_pixels(oiio.ROI(), pixels)
            buf.write(given)
            subprocess.run([halo, "run", given, "-f", "denoise", "-o", made, "-q"], check=True)
            out.append(read(made)["rgb"])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("noisy")
    parser.add_argument("ref")
    parser.add_argument("denoised")
    parser.add_argument("--frames", default="1-8")
    parser.add_argument("--form", choices=["outputs", "inputs", "both", "weighted-inputs",
                                           "weighted-both", "guides", "guides+outputs", "none"],
                        default="outputs")
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--sigma", type=float, default=0.065)
    parser.add_argument("--patch", type=int, default=5)
    parser.add_argument("--zero", action="store_true")
    parser.add_argument("--pointwise", action="store_true")
    parser.add_argument("--halo", default="build/app/halo")
    args = parser.parse_args()
    first, last = (int(x) for x in args.frames.split("-"))
    name = lambda pattern, f: pattern.replace("####", f"{f:04d}")
    noisy_paths = [name(args.noisy, f) for f in range(first, last + 1)]
    frames = [read(p) for p in noisy_paths]
    refs = [read(name(args.ref, f))["rgb"] for f in range(first, last + 1)]
    outputs = [read(name(args.denoised, f))["rgb"] for f in range(first, last + 1)]
    seq = Sequence(frames, args.zero, args.pointwise)
    print("per frame      ", {k: round(float(v), 4) for k, v in measure(seq, outputs, refs).items()})
    if args.form in ("inputs", "both", "weighted-inputs", "weighted-both"):
        # weighted-: each neighbour's samples weighted as the output averaging weighs it (the
        # denoised frames' distance), not by the seen tests alone.
        weigh = args.form.startswith("weighted")
        colours = [weighted(seq, [f["rgb"] for f in frames], t, args.n,
                            args.sigma if weigh else 0, args.patch if weigh else 1,
                            cv2.INTER_NEAREST, guide=outputs if weigh else None)
                   for t in range(len(frames))]
        outputs = denoise_inputs(noisy_paths, colours, args.halo)
        print("inputs         ", {k: round(float(v), 4) for k, v in measure(seq, outputs, refs).items()})
    if args.form in ("guides", "guides+outputs"):
        # The albedo and normal followed and averaged over the window (the seen tests only),
        # then each frame denoised alone with them: steadier edges for the network.
        guides = [{key: weighted(seq, [f[key] for f in frames], t, args.n, 0, 1)
                   for key in ("alb", "nrm")} for t in range(len(frames))]
        outputs = denoise_inputs(noisy_paths, guides, args.halo, passes="guides")
        print("guides         ", {k: round(float(v), 4) for k, v in measure(seq, outputs, refs).items()})
    if args.form in ("outputs", "both", "weighted-both", "guides+outputs"):
        outputs = [weighted(seq, outputs, t, args.n, args.sigma, args.patch)
                   for t in range(len(outputs))]
        print(f"{args.form:15s}", {k: round(float(v), 4) for k, v in measure(seq, outputs, refs).items()})


if __name__ == "__main__":
    main()
