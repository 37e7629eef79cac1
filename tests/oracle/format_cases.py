"""Oracle cases of the readers and writers: each format written by a library halo does not use
for it (or by the written spec) and read by halo, and halo's files read back by those
libraries: Pillow and OpenCV (PNG, JPEG), tifffile (TIFF), OpenImageIO's Python bindings
(EXR, through OpenEXR), NumPy after the Netpbm spec and OpenCV (PFM)."""
import subprocess

import cv2
import numpy as np
import tifffile
from PIL import Image

from oracle import (Mismatch, agree, agree_codes, case, hdr, photo, read_oiio, read_pfm,
                    read_png, to_codes, write_oiio, write_pfm)

SIZES = [(1, 1), (7, 5), (61, 37)]


def psnr(a, b, peak):
    mse = np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(peak * peak / mse)


@case("format:png", "Pillow writes and reads, OpenCV reads (libpng): 8 and 16 bits, grey, "
      "grey + alpha, RGB, RGBA, palette, interlaced; halo's PNGs of many deflate blocks at "
      "every level", "exact")
def png(t):
    modes = [("L", 1, 8), ("LA", 2, 8), ("RGB", 3, 8), ("RGBA", 4, 8), ("I;16", 1, 16)]
    count = 0
    for (w, h) in SIZES:
        for mode, channels, bits in modes:
            codes = to_codes(photo(w, h, channels, seed=channels + w), bits)
            if mode == "I;16":
                picture = Image.fromarray(codes[..., 0].astype(np.uint16), "I;16")
            else:
                picture = Image.fromarray(codes[..., 0] if channels == 1 else codes, mode)
            for interlace in [False, True]:
                src = t.path(f"in-{mode.replace(';', '')}.png")
                picture.save(src, interlace=interlace)
                out = t.run(src, [], "out.png")
                # Read back by Pillow, and by OpenCV (which makes grey + alpha BGRA): the same
                # codes, the same channels.
                back = np.asarray(Image.open(out))
                agree_codes(back.reshape(codes.shape), codes, 0,
                            f"{w}x{h} {mode} (interlaced {interlace}) by Pillow")
                if mode != "LA":
                    agree_codes(read_png(out), codes, 0, f"{w}x{h} {mode} by OpenCV")
                count += 1
    # 16-bit RGBA, written by OpenCV; to float: v / 65535.
    codes = to_codes(photo(9, 4, 4), 16)
    cv2.imwrite(t.path("rgba16.png"), codes[..., [2, 1, 0, 3]])
    agree_codes(read_png(t.run(t.path("rgba16.png"), [], "o16.png")), codes, 0, "16-bit RGBA")
    rgb = to_codes(photo(9, 4, 3), 16)
    cv2.imwrite(t.path("rgb16.png"), rgb[..., ::-1])
    agree(read_pfm(t.run(t.path("rgb16.png"), [], "f.pfm")), rgb / 65535.0, 1e-7,
          "16-bit codes as v / 65535")
    # Images of many deflate blocks (halo compresses blocks of rows on every core and joins
    # them into one stream): every level, read back by Pillow and by OpenCV.
    big = to_codes(photo(1023, 517, 4, seed=5))
    Image.fromarray(big, "RGBA").save(t.path("big.png"))
    big16 = to_codes(photo(700, 401, 3, seed=6), 16)
    cv2.imwrite(t.path("big16.png"), big16[..., ::-1])
    for level in ["0", "1", "6", "9"]:
        out = t.run(t.path("big.png"), [], f"big{level}.png", "--compression", level)
        agree_codes(np.asarray(Image.open(out)), big, 0, f"1023x517 RGBA, level {level}, by Pillow")
        agree_codes(read_png(out), big, 0, f"1023x517 RGBA, level {level}, by OpenCV")
        out = t.run(t.path("big16.png"), [], f"big16-{level}.png", "--compression", level)
        agree_codes(read_png(out), big16, 0, f"700x401 16-bit RGB, level {level}, by OpenCV")
    # A palette image reads as its colours.
    palette = Image.fromarray(to_codes(photo(13, 7, 3))).quantize(16)
    palette.save(t.path("palette.png"))
    agree_codes(read_png(t.run(t.path("palette.png"), [], "p.png"))[..., :3],
                np.asarray(palette.convert("RGB")), 0, "palette")
    return f"{count + 11} files"


@case("format:jpeg", "Pillow (libjpeg-turbo) decodes halo's JPEGs and halo decodes Pillow's, "
      "baseline and progressive; "
      "ImageMagick reads halo's quality", "the same decode; at quality 95 within 0.5 dB of "
      "Pillow's own JPEG of the same image",
      "halo decodes with libjpeg-turbo's accurate integer IDCT, as Pillow does")
def jpeg(t):
    for (w, h) in SIZES:
        codes = to_codes(photo(w, h, 3, seed=w))
        for progressive in [False, True]:  # a progressive file's coefficients: halo's memory
            Image.fromarray(codes).save(t.path("in.jpg"), quality=90, progressive=progressive)
            ours = read_png(t.run(t.path("in.jpg"), [], "decoded.png"))
            agree_codes(ours, np.asarray(Image.open(t.path("in.jpg")).convert("RGB")), 0,
                        f"{w}x{h} (progressive {progressive}) decoded")
        Image.fromarray(codes).save(t.path("src.png"))
        t.run(t.path("src.png"), [], "out.jpg")
        back = np.asarray(Image.open(t.path("out.jpg")).convert("RGB"))
        Image.fromarray(codes).save(t.path("pillow.jpg"), quality=95)
        pillow = np.asarray(Image.open(t.path("pillow.jpg")).convert("RGB"))
        if back.shape != codes.shape or psnr(back, codes, 255) < psnr(pillow, codes, 255) - 0.5:
            raise Mismatch(f"{w}x{h}: halo's JPEG reads back at {psnr(back, codes, 255):.1f} dB, "
                           f"Pillow's at {psnr(pillow, codes, 255):.1f}")
    quality = subprocess.run(["identify", "-format", "%Q", t.path("out.jpg")], capture_output=True,
                             text=True, check=True).stdout.strip()
    if quality != "95":
        raise Mismatch(f"halo's default JPEG quality reads as {quality}, not 95")
    # Grey JPEG.
    grey = to_codes(photo(17, 9, 1))[..., 0]
    Image.fromarray(grey, "L").save(t.path("grey.jpg"), quality=95)
    agree_codes(read_png(t.run(t.path("grey.jpg"), [], "g.png"))[..., 0],
                np.asarray(Image.open(t.path("grey.jpg"))), 0, "grey JPEG")
    return "decodes equal"


@case("format:webp", "Pillow (libwebp) writes lossy and lossless WebP, RGB and RGBA, with an ICC "
      "profile; halo's decode against Pillow's (the shrunk decode is checked in "
      "tests/io/webp_test.cpp against blocks of one colour)",
      "the same decode (where alpha is not 0: the colour under it is the encoder's); the "
      "profile kept",
      "halo reads WebP stills through libwebp, animations through OpenImageIO (their first "
      "frame)")
def webp(t):
    count = 0
    for (w, h) in SIZES + [(301, 77)]:
        for channels, mode in [(3, "RGB"), (4, "RGBA")]:
            codes = to_codes(photo(w, h, channels, seed=w + channels))
            for lossless in [False, True]:
                src = t.path(f"in-{mode}-{lossless}.webp")
                Image.fromarray(codes, mode).save(src, lossless=lossless, quality=90)
                ours = read_png(t.run(src, [], "decoded.png"))
                theirs = np.asarray(Image.open(src).convert(mode))
                if channels == 4:  # colour under alpha 0 is the encoder's choice, not the file's
                    ours = np.where(theirs[..., 3:] == 0, 0, ours)
                    theirs = np.where(theirs[..., 3:] == 0, 0, theirs)
                agree_codes(ours, theirs, 0, f"{w}x{h} {mode} lossless={lossless}")
                count += 1
    # The profile goes to the output.
    profile = open("/usr/share/color/icc/compatibleWithAdobeRGB1998.icc", "rb").read()
    Image.fromarray(to_codes(photo(9, 4, 3))).save(t.path("icc.webp"), icc_profile=profile,
                                                   lossless=True)
    kept = Image.open(t.run(t.path("icc.webp"), [], "icc.png")).info.get("icc_profile")
    if kept != profile:
        raise Mismatch("the WebP's ICC profile was not kept")
    return f"{count} files decode equal"


@case("format:tiff", "tifffile writes and reads (halo's uncompressed files: tifffile undoes "
      "no float predictor without imagecodecs), Pillow reads halo's compressed 8-bit files: "
      "8, 16 bits and float, 1/3/4 channels", "exact")
def tiff(t):
    # Every channel count and sample type at one size, the edge sizes for one of them: each
    # TIFF costs halo OpenImageIO's start (0.45 s on the 2-core machine).
    combos = [((7, 5), c, d) for c in [1, 3, 4] for d in [np.uint8, np.uint16, np.float32]]
    combos += [((1, 1), 3, np.uint16), ((61, 37), 4, np.float32)]
    for (w, h), channels, dtype in combos:
        image = photo(w, h, channels, seed=channels)
        data = image if dtype == np.float32 else to_codes(image, 8 if dtype == np.uint8 else 16)
        data = data.astype(dtype)
        extra = {"extrasamples": [2]} if channels == 4 else {}  # unassociated alpha
        tifffile.imwrite(t.path("in.tif"), data[..., 0] if channels == 1 else data,
                         photometric="minisblack" if channels == 1 else "rgb", **extra)
        out = t.run(t.path("in.tif"), [], "out.tif", "--compression", "none")
        back = tifffile.imread(out)
        back = back[..., None] if back.ndim == 2 else back
        what = f"{w}x{h}x{channels} {np.dtype(dtype).name}"
        if back.dtype != dtype:
            raise Mismatch(f"{what}: written back as {back.dtype}")
        agree(back.astype(np.float64), data.astype(np.float64), 0, what, relative=False)
        if dtype == np.uint8 and channels == 3:
            compressed = np.asarray(Image.open(t.run(t.path("in.tif"), [], "z.tif")))
            agree_codes(compressed, data, 0, what + " compressed (halo's default)")
    return f"{len(combos)} files"


@case("format:exr", "OpenImageIO's Python bindings (OpenEXR) write and read: half and float, "
      "named channels, NaN and infinities; multilayer copies (half beside float, a data "
      "window, scanline and tiled, each compression) against OpenImageIO's, OpenEXR's "
      "exrheader reading halo's files", "exact (half: as NumPy rounds to float16)")
def exr(t):
    for (w, h) in [(1, 1), (61, 37)]:
        image = hdr(w, h, 4, seed=w)
        names = ["R", "G", "B", "A"]
        write_oiio(t.path("f.exr"), image, names, "float")
        got, got_names, _ = read_oiio(t.run(t.path("f.exr"), [], "out.exr"))
        if got_names != names:
            raise Mismatch(f"channels {got_names}")
        agree(got, image, 0, f"{w}x{h} float EXR")
        write_oiio(t.path("h.exr"), image, names, "half")
        half = image.astype(np.float16).astype(np.float32)
        got, _, spec = read_oiio(t.run(t.path("h.exr"), [], "out-h.exr"))
        if str(spec.format) != "half":
            raise Mismatch(f"half EXR written back as {spec.format}")
        agree(got, half, 0, f"{w}x{h} half EXR")
        # --type half from float data: NumPy's rounding to float16.
        got, _, _ = read_oiio(t.run(t.path("f.exr"), [], "to-half.exr", "--type", "half"))
        agree(got, half, 0, f"{w}x{h} float to half")
    layers = exr_copies(t)
    return f"float and half; {layers}"


def exr_copies(t):
    """A multilayer render's layout (half colour beside float depth and normals, a data window
    inside a larger display window), scanline and tiled, in each compression: halo's copy (its
    own OpenEXRCore reader and writer) against OpenImageIO's (OpenEXR's C++ library) reading
    and writing the same file in its channel types and compression: every sample the same,
    each channel's type and the compression kept; OpenEXR's own exrheader reads halo's file."""
    import OpenImageIO as oiio
    names = ["R", "G", "B", "A", "Z", "N.X", "N.Y", "N.Z"]
    image = hdr(61, 37, len(names), seed=7)
    formats = ["half"] * 4 + ["float"] * 4
    count = 0
    for compression in ["none", "rle", "zips", "zip", "piz", "pxr24", "b44", "b44a", "dwaa"]:
        for tiled in [False, True]:
            what = f"{compression}{' tiled' if tiled else ''} multilayer EXR"
            spec = oiio.ImageSpec(61, 37, len(names), "float")
            spec.channelnames = tuple(names)
            spec.channelformats = tuple(oiio.TypeDesc(f) for f in formats)
            spec.x, spec.y = -3, 5
            spec.full_x, spec.full_y, spec.full_width, spec.full_height = 0, 0, 70, 50
            spec.attribute("compression", compression)
            if tiled:
                spec.tile_width, spec.tile_height = 16, 16
            src = t.path("layers.exr")
            out = oiio.ImageOutput.create(src)
            assert out and out.open(src, spec), oiio.geterror()
            assert out.write_image(np.ascontiguousarray(image, np.float32)), out.geterror()
            out.close()
            ours = t.run(src, [], "layers-halo.exr")
            # The peer: OpenImageIO writing what it reads of the file in the file's own
            # channel types, windows and compression (oiiotool 2.4 would widen the half
            # channels to float, as Blender does not).
            decoded, _, src_spec = read_oiio(src)
            peer = t.path("layers-peer.exr")
            out = oiio.ImageOutput.create(peer)
            assert out and out.open(peer, src_spec), oiio.geterror()
            assert out.write_image(np.ascontiguousarray(decoded, np.float32)), out.geterror()
            out.close()
            got, got_names, got_spec = read_oiio(ours)
            want, want_names, want_spec = read_oiio(peer)
            if got_names != want_names:
                raise Mismatch(f"{what}: channels {got_names}, OpenImageIO's {want_names}")
            got_formats = [str(f) for f in got_spec.channelformats]
            if got_formats != formats:
                raise Mismatch(f"{what}: channel types {got_formats}, the input's {formats}")
            if got_spec.getattribute("compression") != compression:
                raise Mismatch(f"{what}: compression {got_spec.getattribute('compression')}")
            if (got_spec.x, got_spec.y, got_spec.full_width) != (want_spec.x, want_spec.y,
                                                                 want_spec.full_width):
                raise Mismatch(f"{what}: data window at {got_spec.x}, {got_spec.y}")
            agree(got, want, 0, what)
            header = subprocess.run(["exrheader", ours], capture_output=True, text=True)
            if header.returncode != 0:
                raise Mismatch(f"{what}: OpenEXR's exrheader: {header.stderr.strip()}")
            count += 1
    return f"{count} multilayer copies equal to OpenImageIO's"


@case("format:pfm", "the Netpbm PFM spec in NumPy (bottom-up rows, the scale's sign is the byte "
      "order) and OpenCV's PFM reader", "exact")
def pfm(t):
    for (w, h) in SIZES:
        for channels in [1, 3]:
            image = hdr(w, h, channels, seed=w + channels)
            write_pfm(t.path("in.pfm"), image)
            out = t.run(t.path("in.pfm"), [], "out.pfm")
            agree(read_pfm(out), image, 0, f"{w}x{h}x{channels} by the spec")
            by_opencv = cv2.imread(out, cv2.IMREAD_UNCHANGED)
            by_opencv = by_opencv[..., None] if by_opencv.ndim == 2 else by_opencv[..., ::-1]
            agree(by_opencv, image, 0, f"{w}x{h}x{channels} by OpenCV")
    # Big-endian samples (a positive scale) read as the spec says.
    image = photo(6, 4, 3)
    with open(t.path("be.pfm"), "wb") as f:
        f.write(b"PF\n6 4\n1.0\n" + image[::-1].astype(">f4").tobytes())
    agree(read_pfm(t.run(t.path("be.pfm"), [], "le.pfm")), image, 0, "big-endian PFM")
    return "both byte orders"
