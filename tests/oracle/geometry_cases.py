"""Oracle cases of the stages that move pixels: OpenCV's flips and turns, oiiotool on every
channel of a multilayer EXR, Pillow's resampling, vipsthumbnail's sizes, vips autorot (the
EXIF spec's orientations)."""
import math
import os
import re
import subprocess

import cv2
import numpy as np
from PIL import Image

from oracle import (Mismatch, agree, agree_codes, case, photo, read_oiio, read_pfm, read_png,
                    to_codes, write_oiio, write_pfm, write_png)

RENDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "render",
                      "close_4spp.exr")
# Mirrors and turns: halo's spec, oiiotool's command, OpenCV's call.
MOVES = [("flop", "--flop", lambda a: cv2.flip(a, 1)),
         ("flip", "--flip", lambda a: cv2.flip(a, 0)),
         ("rotate", "--rotate180", lambda a: cv2.rotate(a, cv2.ROTATE_180)),
         ("rotate:angle=90", "--rotate90", lambda a: cv2.rotate(a, cv2.ROTATE_90_CLOCKWISE)),
         ("rotate:angle=-90", "--rotate270",
          lambda a: cv2.rotate(a, cv2.ROTATE_90_COUNTERCLOCKWISE)),
         ("crop:x=31:y=17:w=120:h=80", "--cut 120x80+31+17", lambda a: a[17:97, 31:151])]


def planes(image, fn):
    out = np.stack([fn(np.ascontiguousarray(image[..., c])) for c in range(image.shape[2])], -1)
    return out


def inputs(t, w, h):
    """A w x h float RGB photo in in.pfm and an RGBA 8-bit one in in.png, returned as written."""
    image = photo(w, h, 3, seed=w)
    write_pfm(t.path("in.pfm"), image)
    codes = to_codes(photo(w, h, 4, seed=h))
    write_png(t.path("in.png"), codes)
    return image, codes


@case(["flop", "flip", "rotate", "crop"], "OpenCV flip, rotate and NumPy slicing", "exact")
def moves(t):
    for (w, h) in [(1, 1), (7, 5), (203, 131)]:
        image, codes = inputs(t, w, h)
        for spec, _, fn in MOVES:
            if spec.startswith("crop") and w < 151:
                continue
            agree(read_pfm(t.run(t.path("in.pfm"), spec, "o.pfm")), planes(image, fn), 0,
                  f"{w}x{h} float {spec}")
            agree_codes(read_png(t.run(t.path("in.png"), spec, "o.png")), planes(codes, fn), 0,
                        f"{w}x{h} RGBA 8-bit {spec}")
    return "equal"


@case(["flop", "flip", "rotate", "crop", "resize"],
      "oiiotool on the whole file (every channel of a Blender multilayer EXR)", "exact",
      "resize: the layers go through halo's own resampling (Pillow's, below), not oiiotool's")
def multilayer_exr(t):
    """Every layer (colour, alpha, depth, albedo, normals) moved with the image."""
    # A part of the render with all its layers, uncompressed (quicker to read).
    render = t.path("render.exr")
    subprocess.run(["oiiotool", RENDER, "--cut", "160x120+150+60", "--compression", "none",
                    "-o", render], check=True)
    want_names = read_oiio(render)[1]
    # oiiotool's results of every move in one run (each start of it, and of halo on an EXR,
    # costs OpenImageIO's 0.4 s).
    command = ["oiiotool", "-i", render]
    for k, (_, moves, _) in enumerate(MOVES):
        command += ["--dup", *moves.split(), "-o", t.path(f"o{k}.exr"), "--pop"]
    subprocess.run(command, check=True)
    for k, (spec, _, _) in enumerate(MOVES):
        got, names, _ = read_oiio(t.run(render, spec, "h.exr"))
        if names != want_names:
            raise Mismatch(f"{spec}: channels {names}, the input's {want_names}")
        agree(got, read_oiio(t.path(f"o{k}.exr"))[0], 0, f"{spec} on every channel")
    # resize: every layer resampled as the colour is, each equal to Pillow's on that channel.
    source = read_oiio(render)[0]
    got = read_oiio(t.run(render, "resize:w=73", "r.exr"))[0]
    want = planes(source, lambda p: np.asarray(Image.fromarray(p, "F").resize(
        (73, got.shape[0]), Image.LANCZOS)))
    agree(got, want, 1e-5, "resize:w=73 on every channel")
    # A chain that makes grey from colour: its channels in the colour's layer, the others kept.
    grey, names, _ = read_oiio(t.run(render, "emboss", "e.exr"))
    alone = read_oiio(t.run(render, "emboss", "e1.exr", "--drop-layers"))[0]
    colour = [n for n in want_names if ".Combined." in n]
    want = [n for n in want_names if n not in colour]
    first = want_names.index(colour[0])
    want[first:first] = [colour[0].rsplit(".", 1)[0] + ".Y", colour[0].rsplit(".", 1)[0] + ".A"]
    if names != want:
        raise Mismatch(f"emboss on a multilayer EXR: channels {names}, expected {want}")
    agree(grey[..., first:first + 2], alone, 0, "emboss's channels beside the layers")
    others = [k for k, n in enumerate(names) if n in want_names]
    agree(grey[..., others], source[..., [want_names.index(names[k]) for k in others]], 0,
          "the layers beside emboss's channels")
    return f"{len(want_names)} channels each"


PILLOW = {"lanczos3": Image.LANCZOS, "catmull-rom": Image.BICUBIC, "triangle": Image.BILINEAR,
          "box": Image.BOX, "nearest": Image.NEAREST}


@case(["resize", "thumbnail"], "Pillow's resize on float images (mode F); ImageMagick's "
      "-resize (Mitchell, Lanczos, Catmull-Rom)",
      "2e-6 x max(1, |v|) (Pillow); 1 code of 16 bits (ImageMagick)",
      "exact ties (2 -> 3 pixels) in box and nearest go to the right and lower input, as in "
      "Pillow and ImageMagick; ImageMagick (Q16, not HDRI) clamps its first pass's overshoot "
      "to [0, 1], so it is compared on mid-range data, where nothing overshoots")
def resize(t):
    image = photo(83, 51, 3)
    write_pfm(t.path("in.pfm"), image)
    worst = 0
    for filt, pil in PILLOW.items():
        for size in [(20, 13), (31, 51), (130, 90), (249, 153), (1, 1)]:
            got = read_pfm(t.run(t.path("in.pfm"), f"resize:w={size[0]}:h={size[1]}:fit=fill:"
                                 f"filter={filt}", "o.pfm"))
            want = planes(image, lambda p: np.asarray(Image.fromarray(p, "F").resize(size, pil)))
            worst = max(worst, agree(got, want, 2e-6, f"resize to {size} filter={filt}"))
    # Exact ties: 2 -> 3 and 10 -> 15 pixels (Pillow's nearest breaks them by float noise, its
    # box filter exactly).
    for n, m in [(2, 3), (10, 15)]:
        ramp = np.arange(n, dtype=np.float32).reshape(1, n, 1).repeat(3, 0).repeat(3, 2)
        write_pfm(t.path("ramp.pfm"), ramp)
        want = planes(ramp, lambda p: np.asarray(Image.fromarray(p, "F").resize((m, 3),
                                                                               Image.BOX)))
        for filt in ["box", "nearest"]:
            got = read_pfm(t.run(t.path("ramp.pfm"), f"resize:w={m}:h=3:fit=fill:filter={filt}",
                                 "t.pfm"))
            agree(got, want, 0, f"{n} -> {m} pixels, filter={filt}")
    # Mitchell (B = C = 1/3, which Pillow lacks) and two more against ImageMagick, on 16-bit
    # data in [0.25, 0.75].
    write_png(t.path("in16.png"), to_codes(0.25 + 0.5 * image, 16))
    for im_filter, filt in [("Mitchell", "mitchell"), ("Lanczos", "lanczos3"),
                            ("Catrom", "catmull-rom")]:
        for size in ["41x25", "190x117"]:
            subprocess.run(["convert", t.path("in16.png"), "-filter", im_filter, "-resize",
                            size + "!", t.path("im.png")], check=True)
            w, h = size.split("x")
            got = read_png(t.run(t.path("in16.png"), f"resize:w={w}:h={h}:fit=fill:"
                                 f"filter={filt}", "m.png"))
            agree_codes(got, read_png(t.path("im.png")), 1, f"{filt} to {size}")
    return f"largest error {worst:.2g}"


def block_shrink(codes, f, alpha):
    """Pillow's reduce(f) (f x f blocks, the edge blocks as the image leaves them) of each
    plane of float codes, colour weighted by alpha when `alpha`, rounded to codes."""
    def reduce(plane):
        return np.asarray(Image.fromarray(plane.astype(np.float32), "F").reduce(f), np.float64)
    if not alpha:
        return np.round(np.stack([reduce(codes[..., c]) for c in range(codes.shape[2])], -1))
    a = codes[..., -1].astype(np.float64)
    mean_a = reduce(a)
    colour = [np.where(mean_a > 0, reduce(codes[..., c] * a) / np.maximum(mean_a, 1e-300),
                       reduce(codes[..., c])) for c in range(codes.shape[2] - 1)]
    return np.round(np.stack(colour + [mean_a], -1))


def shrink_of(done):
    """The factor halo's -v says it read the input at (1 when it says nothing)."""
    found = re.search(r"read at 1/(\d+) of its size, blocks of", done.stderr)
    return int(found.group(1)) if found else 1


@case("thumbnail", "vipsthumbnail's output sizes; Pillow's reduce (blocks averaged, vips's "
      "and Pillow's reducing gap of 2) then Pillow's Lanczos-3 to those sizes over the box "
      "size/factor (a partial last block spans less than a pixel)",
      "the same sizes; 2e-6 x max(1, |v|), 1e-5 with alpha (premultiplied, resampled, "
      "divided by alpha and put over black in float)",
      "halo rounds the block averages to the file's codes (as a file of that size would hold "
      "them), so the oracle does too; with alpha, colour is averaged weighted by alpha")
def thumbnail(t):
    """thumbnail:w=W:h=H fits inside W x H as vipsthumbnail -s WxH does, on many aspects; a
    PNG is read through averaged blocks down to at least twice the output, then resampled."""
    sizes, shrunk = [], 0
    # Sizes the block factor does not divide among them (a partial last block: Pillow's
    # thumbnail resizes over the box size/factor, which halo follows).
    for (w, h, channels) in [(300, 200, 3), (199, 301, 3), (640, 427, 3), (1000, 3, 3),
                             (97, 61, 3), (533, 411, 4), (1003, 603, 3)]:
        image = photo(w, h, channels, seed=w + h)
        if channels == 4:
            image[..., 3] = 0.25 + 0.75 * image[..., 3]  # divided by after resampling
        codes = to_codes(image, 16)
        write_png(t.path("in.png"), codes)
        for box in [(64, 64), (100, 50), (37, 80)]:
            subprocess.run(["vipsthumbnail", t.path("in.png"), "-s", f"{box[0]}x{box[1]}",
                            "-o", t.path("v.png")], check=True)
            want = read_png(t.path("v.png")).shape[:2]
            done = t.halo("run", t.path("in.png"), "-f", f"thumbnail:w={box[0]}:h={box[1]}",
                          "-o", t.path("t.pfm"), "--type", "float", "-v")
            got = read_pfm(t.path("t.pfm"))
            if got.shape[:2] != want:
                raise Mismatch(f"{w}x{h} into {box}: {got.shape[1]}x{got.shape[0]}, "
                               f"vipsthumbnail's {want[1]}x{want[0]}")
            f = shrink_of(done)
            # The largest factor that leaves twice the output's pixels each way and fits
            # inside the box at the same size.
            def fits(f):
                sw, sh = -(-w // f), -(-h // f)
                s = min(box[0] / sw, box[1] / sh)
                size = (max(1, math.floor(sh * s + 0.5)), max(1, math.floor(sw * s + 0.5)))
                return sh >= 2 * want[0] and sw >= 2 * want[1] and size == want
            if f > 1 and (not fits(f) or fits(f + 1)):
                raise Mismatch(f"{w}x{h} into {box}: read at 1/{f}")
            shrunk += f > 1
            read = block_shrink(codes.astype(np.float64), f, channels == 4) / 65535.0
            if channels == 4:  # halo filters associated colour (premultiply, unpremultiply)
                read[..., :3] *= read[..., 3:]
            pillow = planes(read.astype(np.float32), lambda p: np.asarray(
                Image.fromarray(p, "F").resize((want[1], want[0]), Image.LANCZOS,
                                               box=(0, 0, w / f, h / f))))
            if channels == 4:  # PFM holds no alpha: halo puts the colour over black
                pillow = pillow[..., :3]
            agree(got, pillow, 2e-6 if channels == 3 else 1e-5,
                  f"{w}x{h}x{channels} into {box} (read at 1/{f})")
            sizes.append(got.shape[:2])
    if not shrunk:
        raise Mismatch("no input was read through averaged blocks")
    return f"{len(sizes)} sizes equal, {shrunk} read through averaged blocks"


@case(["flop", "flip", "rotate", "resize"],
      "oiiotool --flop, --flip, --rotate180, --rotate90, --rotate270, --rotate (any angle, "
      "about the display window's centre; recompute_roi=1 for size=fit) and --resize on an "
      "EXR whose data window lies inside a larger display window (overscan, a crop)",
      "exact (windows and pixels; resize: windows only; other angles: windows exact, pixels "
      "2e-4 as rotate's own case)",
      "oiiotool --resize takes the display window's new size; halo's resize sizes the pixels, "
      "and the frame scales by the same factor (corners rounded down, as oiiotool)")
def exr_windows(t):
    exr = t.path("in.exr")
    subprocess.run(["oiiotool", "--create", "37x23", "3", "--fullsize", "101x80+0+0",
                    "--origin", "+10+21", "-o", exr], check=True)
    write_oiio(exr, photo(37, 23, 3, seed=8))
    subprocess.run(["oiiotool", "-i", exr, "--fullsize", "101x80+0+0", "--origin", "+10+21",
                    "-o", exr], check=True)
    windows = lambda s: (s.x, s.y, s.width, s.height, s.full_x, s.full_y, s.full_width,
                         s.full_height)
    cases = [("flop", ["--flop"]), ("flip", ["--flip"]), ("rotate:angle=180", ["--rotate180"]),
             ("rotate:angle=90", ["--rotate90"]), ("rotate:angle=-90", ["--rotate270"]),
             ("resize:scale=0.5", ["--resize", "51x40"]),
             ("rotate:angle=17.5", ["--rotate:filter=catmull-rom:recompute_roi=1", "17.5"]),
             ("rotate:angle=-115.5:size=same:filter=bilinear",
              ["--rotate:filter=triangle", "-115.5"])]
    for spec, op in cases:
        subprocess.run(["oiiotool", exr] + op + ["-o", t.path("o.exr")], check=True)
        got, _, got_spec = read_oiio(t.run(exr, spec, "h.exr"))
        want, _, want_spec = read_oiio(t.path("o.exr"))
        if windows(got_spec) != windows(want_spec):
            raise Mismatch(f"{spec}: EXR windows {windows(got_spec)}, oiiotool's "
                           f"{windows(want_spec)}")
        if not spec.startswith("resize"):
            resampled = op[0].startswith("--rotate:")  # any angle: positions in float32
            agree(got, want, 2e-4 if resampled else 0,
                  f"EXR {spec} against oiiotool {' '.join(op)}")
    return f"{len(cases)} operations"


@case("orient", "vips autorot (the EXIF spec's eight orientations), on TIFF and JPEG", "exact",
      "OpenImageIO 2.4's --reorient swaps orientations 5 and 7 (its issue 4661, fixed later); "
      "halo follows the spec")
def orient(t):
    picture = Image.fromarray(to_codes(photo(37, 23, 3)))
    # Every orientation in a JPEG's EXIF block; a TIFF's own Orientation tag (274) for a mirror,
    # the two diagonal ones and a turn (each TIFF costs halo OpenImageIO's start).
    files = [(o, "jpg") for o in range(1, 9)] + [(o, "tif") for o in (2, 5, 7, 8)]
    for o, ext in files:
        stored = t.path(f"o{o}.{ext}")
        if ext == "tif":
            picture.save(stored, tiffinfo={274: o})
        else:
            exif = Image.Exif()
            exif[0x0112] = o
            picture.save(stored, exif=exif.tobytes(), quality=95)
        subprocess.run(["vips", "autorot", stored, t.path("v.png")], check=True)
        want = read_png(t.path("v.png"))
        got = read_png(t.run(stored, "exposure:stops=0", "a.png", "--auto-orient"))
        agree_codes(got, want, 0, f"Orientation {o} ({ext}) through --auto-orient")
        if ext == "jpg":
            got = read_png(t.run(stored, "orient", "h.png"))
            agree_codes(got, want, 0, f"Orientation {o} ({ext}) through -f orient")
    return f"{len(files)} files equal"


def keys(t):
    """Catmull-Rom (Keys, a = -0.5) in float64."""
    t = np.abs(t)
    return np.where(t < 1, (1.5 * t - 2.5) * t * t + 1,
                    np.where(t < 2, ((-0.5 * t + 2.5) * t - 4) * t + 2, 0.0))


def rotate_float64(image, degrees, size, taps):
    """The turn as rotate's spec states it, in float64: each output pixel's centre turned back
    about the centres into the input, Catmull-Rom or bilinear taps there, 0 outside."""
    h, w, channels = image.shape
    out_h, out_w = size
    r = np.radians(degrees)
    y, x = np.mgrid[0:out_h, 0:out_w].astype(np.float64)
    dx, dy = x + 0.5 - out_w / 2, y + 0.5 - out_h / 2
    sx = np.cos(r) * dx + np.sin(r) * dy + w / 2 - 0.5
    sy = -np.sin(r) * dx + np.cos(r) * dy + h / 2 - 0.5
    ix, iy = np.floor(sx).astype(int), np.floor(sy).astype(int)
    u, v = sx - ix, sy - iy
    reach = range(-1, 3) if taps == "bicubic" else range(0, 2)
    weight = keys if taps == "bicubic" else (lambda t: np.maximum(0, 1 - np.abs(t)))
    out = np.zeros((out_h, out_w, channels))
    for j in reach:
        for i in reach:
            qx, qy = ix + i, iy + j
            inside = (qx >= 0) & (qx < w) & (qy >= 0) & (qy < h)
            taken = image[np.clip(qy, 0, h - 1), np.clip(qx, 0, w - 1)].astype(np.float64)
            out += np.where(inside[..., None], taken, 0) * (weight(u - i) * weight(v - j))[..., None]
    return out


@case("rotate", "the turn in float64 (NumPy, its spec's formula); oiiotool --rotate "
      "(OpenImageIO's catmull-rom and triangle filters) at the input's size; oiiotool "
      "--rotate:recompute_roi=1 for size=fit (its box and its pixels)",
      "1e-5 x max(1, |v|) against float64 at any distance from the centre; 2e-4 against "
      "oiiotool",
      "oiiotool places its samples in float32, up to 1e-4 px off 1000 px from the centre "
      "(its errors against float64 reach 2e-4 of a sharp edge's contrast on renders); halo "
      "keeps positions as float pairs and follows float64. Its box bounds the turned pixel "
      "centres (not their corners), which halo follows")
def rotate_any_angle(t):
    angles = [30, -115.5, 7, 200, 17.5, 1]
    count = 0
    for (w, h) in [(41, 29), (64, 48), (7, 5)]:
        image = photo(w, h, 3, seed=w)
        write_pfm(t.path("in.pfm"), image)
        command = ["oiiotool", "-i", t.path("in.pfm")]
        for k, angle in enumerate(angles):
            for filt in ["catmull-rom", "triangle"]:
                command += ["--dup", f"--rotate:filter={filt}", str(angle), "-o",
                            t.path(f"o-{k}-{filt}.exr"), "--pop"]
            command += ["--dup", f"--rotate:filter=catmull-rom:recompute_roi=1", str(angle),
                        "-o", t.path(f"fit-{k}.exr"), "--pop"]
        subprocess.run(command, check=True)
        for k, angle in enumerate(angles):
            for filt, ours in [("catmull-rom", "bicubic"), ("triangle", "bilinear")]:
                spec = f"rotate:angle={angle}:size=same:filter={ours}"
                got = read_pfm(t.run(t.path("in.pfm"), spec, "h.pfm"))
                agree(got, rotate_float64(image, angle, (h, w), ours), 1e-5,
                      f"{w}x{h} {spec} against float64")
                agree(got, read_oiio(t.path(f"o-{k}-{filt}.exr"))[0], 2e-4, f"{w}x{h} {spec}")
            # size=fit: oiiotool's box and the turned image in it.
            spec = f"rotate:angle={angle}:filter=bicubic"
            fit = read_pfm(t.run(t.path("in.pfm"), spec, "f.pfm"))
            want = read_oiio(t.path(f"fit-{k}.exr"))[0]
            if fit.shape[:2] != want.shape[:2]:
                raise Mismatch(f"{w}x{h} {spec}: {fit.shape[1]}x{fit.shape[0]}, oiiotool's box "
                               f"is {want.shape[1]}x{want.shape[0]}")
            agree(fit, want, 2e-4, f"{w}x{h} {spec}")
            agree(fit, rotate_float64(image, angle, fit.shape[:2], "bicubic"), 1e-5,
                  f"{w}x{h} {spec} against float64")
            count += 1
    # Far from the centre: a 2000x1500 turn, where float positions are 1e-4 px off.
    image = photo(2000, 1500, 1, seed=3)
    write_pfm(t.path("big.pfm"), image)
    got = read_pfm(t.run(t.path("big.pfm"), "rotate:angle=17.5:size=same", "big-out.pfm"))
    worst = agree(got, rotate_float64(image, 17.5, (1500, 2000), "bicubic"), 1e-5,
                  "2000x1500 rotate:angle=17.5 against float64")
    return f"{count} turns; 2000x1500 within {worst:.2g} of float64"


# pad's border rules and OpenCV's: zero is BORDER_CONSTANT (0), clamp BORDER_REPLICATE,
# reflect BORDER_REFLECT_101 (dcb|abcd|cba, the edge pixel not repeated), wrap BORDER_WRAP.
PADS = [("zero", cv2.BORDER_CONSTANT), ("clamp", cv2.BORDER_REPLICATE),
        ("reflect", cv2.BORDER_REFLECT_101), ("wrap", cv2.BORDER_WRAP)]


@case("pad", "OpenCV copyMakeBorder; oiiotool --crop past the data window (EXR windows)",
      "exact")
def pad(t):
    # Margins up to the image's size (OpenCV refuses reflect margins past it).
    for (w, h) in [(1, 1), (7, 5), (203, 131)]:
        image, codes = inputs(t, w, h)
        left, right, top, bottom = min(3, w - 1), min(5, w - 1), min(4, h - 1), min(2, h - 1)
        if w == 1:
            left, right, top, bottom = 2, 1, 3, 0  # one pixel: every rule repeats it
        for border, cv_border in PADS:
            if w == 1 and border == "reflect":
                continue  # OpenCV has no reflection of a single pixel; halo repeats it
            spec = f"pad:left={left}:right={right}:top={top}:bottom={bottom}:border={border}"
            fn = lambda a: cv2.copyMakeBorder(a, top, bottom, left, right, cv_border, value=0)
            agree(read_pfm(t.run(t.path("in.pfm"), spec, "o.pfm")), planes(image, fn), 0,
                  f"{w}x{h} float {spec}")
            agree_codes(read_png(t.run(t.path("in.png"), spec, "o.png")), planes(codes, fn), 0,
                        f"{w}x{h} RGBA 8-bit {spec}")
    # An EXR's data window grows past the display window, as oiiotool's --crop makes it.
    exr = t.path("in.exr")
    write_oiio(exr, photo(40, 30, 3, seed=5))
    subprocess.run(["oiiotool", exr, "--crop", "47x36-3-4", "-o", t.path("o.exr")], check=True)
    got, _, got_spec = read_oiio(t.run(exr, "pad:left=3:right=4:top=4:bottom=2", "h.exr"))
    want, _, want_spec = read_oiio(t.path("o.exr"))
    windows = lambda s: (s.x, s.y, s.width, s.height, s.full_x, s.full_y, s.full_width,
                         s.full_height)
    if windows(got_spec) != windows(want_spec):
        raise Mismatch(f"EXR windows {windows(got_spec)}, oiiotool's {windows(want_spec)}")
    agree(got, want, 0, "EXR pad:left=3:right=4:top=4:bottom=2 against oiiotool --crop")
    return "equal"
