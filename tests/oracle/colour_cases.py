"""Oracle cases of the colour stages: OpenColorIO's CPU processor through its own Python
bindings (halo's built-in config and Blender's studio config with LUT files), LittleCMS through
Pillow's ImageCms with the free ICC profiles Debian ships; each on the reference and on the
first OpenCL device, in 8-bit output as users view it, and the stated rule for NaN and
infinities."""
import os
import subprocess

import numpy as np
import PyOpenColorIO as OCIO
from PIL import Image, ImageCms

from oracle import (Mismatch, agree, agree_codes, case, hdr, photo, read_pfm, read_png,
                    to_codes, write_pfm, write_png)

HERE = os.path.dirname(os.path.abspath(__file__))
BUILTIN = os.path.join(HERE, "..", "..", "presets", "ocio", "config.ocio")
BLENDER = "/usr/share/blender/datafiles/colormanagement/config.ocio"  # blender-data
PROFILES = "/usr/share/color/icc"  # icc-profiles-free


def devices(t):
    """The reference, and the first OpenCL device when this machine has one."""
    listed = subprocess.run([t.halo_binary, "devices"], capture_output=True, text=True).stdout
    return ["ref"] + (["0"] if listed.lstrip().startswith("0:") else [])


def render_values(width, height, seed=4):
    """Every hue over 2^-14..2^14, zeros, small negatives, and greys: a render's range."""
    rng = np.random.default_rng(seed)
    v = np.exp2(rng.uniform(-14, 14, (height, width, 3)))
    v[rng.random(v.shape) < 0.05] = 0
    v[rng.random(v.shape) < 0.03] *= -0.01
    v[::5] = v[::5, :, :1]  # greys
    return v.astype(np.float32)


def ocio_apply(config, image, transform):
    processor = config.getProcessor(transform).getDefaultCPUProcessor()
    out = np.ascontiguousarray(image, np.float32).copy()
    processor.applyRGB(out)
    return out


def display_transform(source, display, view):
    t = OCIO.DisplayViewTransform()
    t.setSrc(source)
    t.setDisplay(display)
    t.setView(view)
    return t


def check_colour(t, image, spec, want, what):
    """halo's spec against `want` (OpenColorIO's float result): on the reference within 1e-4 x
    max(1, |v|) as floats, on the device within 1 code as 8-bit output."""
    write_pfm(t.path("in.pfm"), image)
    got = read_pfm(t.run(t.path("in.pfm"), spec, "out.pfm", device="ref"))
    agree(got, want, 1e-4, f"{what} on the reference")
    want_codes = to_codes(np.nan_to_num(want, nan=0.0))
    for device in devices(t):
        codes = read_png(t.run(t.path("in.pfm"), spec, "out.png", "--type", "u8",
                               device=device))
        agree_codes(codes, want_codes, 1, f"{what} on --device {device}, 8-bit")


@case(["ocio", "display"], "OpenColorIO's CPU processor (PyOpenColorIO 2.1), built-in and "
      "Blender's configs; its LegacyViewingPipeline for looks", "1e-4 x max(1, |v|); 1 code in 8-bit output, on the reference and "
      "the device",
      "OpenColorIO gives NaN or 5.8e-10 for +-Inf and values past 2^32 in the ACES view, which "
      "halo clamps to +-2^32 first; a NaN sample makes the pixel NaN in halo, as OpenColorIO's "
      "ACES view does (its Standard view keeps the other channels)")
def opencolorio(t):
    builtin = OCIO.Config.CreateFromFile(BUILTIN)
    image = render_values(97, 61)
    for view in ["ACES 1.0 - SDR Video", "Standard"]:
        want = ocio_apply(builtin, image, display_transform("scene_linear", "sRGB", view))
        check_colour(t, image, f"display:view={view}", want, f"display view {view}")
    for src, dst in [("ACEScg", "linear"), ("linear", "ACEScct")]:
        transform = OCIO.ColorSpaceTransform(src=src, dst=dst)
        check_colour(t, image, f"ocio:from={src}:to={dst}", ocio_apply(builtin, image, transform),
                     f"ocio {src} -> {dst}")
    # A studio config whose views read LUT files.
    blender = OCIO.Config.CreateFromFile(BLENDER)
    for view in ["Filmic", "False Color"]:
        want = ocio_apply(blender, image, display_transform("Linear", "sRGB", view))
        check_colour(t, image, f"display:config={BLENDER}:view={view}", want,
                     f"Blender's {view}")
    # Blender's looks (Filmic's contrasts) through OpenColorIO's viewing pipeline, one and two;
    # a view outside the config's active_views (XYZ's DCI), which OpenColorIO processes.
    for look in ["Medium High Contrast", "Very Low Contrast,High Contrast"]:
        pipeline = OCIO.LegacyViewingPipeline()
        pipeline.setDisplayViewTransform(display_transform("Linear", "sRGB", "Filmic"))
        pipeline.setLooksOverrideEnabled(True)
        pipeline.setLooksOverride(look)
        want = image.copy()
        pipeline.getProcessor(blender).getDefaultCPUProcessor().applyRGB(want)
        check_colour(t, image, f"display:config={BLENDER}:view=Filmic:look={look}:from=Linear",
                     want, f"Blender's Filmic with look {look}")
    want = ocio_apply(blender, image, display_transform("Linear", "XYZ", "DCI"))
    check_colour(t, image, f"display:config={BLENDER}:display=XYZ:view=DCI:from=Linear", want,
                 "Blender's XYZ display, view DCI (not among the active views)")
    # NaN and infinities: the stated rule on both sides (the device equals the reference).
    specials = hdr(41, 23, 3)
    specials[3, 3] = [np.inf, 1, 1]
    specials[4, 4] = [np.nan, 0, 1]
    write_pfm(t.path("specials.pfm"), specials)
    ref = read_pfm(t.run(t.path("specials.pfm"), "display", "s.pfm", device="ref"))
    nan_pixel = np.isnan(specials).any(axis=2)
    if not (np.isnan(ref).all(axis=2) == nan_pixel).all():
        raise Mismatch("display: a pixel with a NaN sample is not NaN in all three")
    clamped = np.where(np.isinf(specials), np.sign(specials) * 2.0 ** 32, specials)
    want = ocio_apply(builtin, np.where(nan_pixel[..., None], 0, clamped),
                      display_transform("scene_linear", "sRGB", "ACES 1.0 - SDR Video"))
    agree(ref, np.where(nan_pixel[..., None], np.nan, want), 1e-4, "display on NaN and Inf")
    for device in devices(t)[1:]:
        t.halo("run", t.path("specials.pfm"), "-f", "display", "-o", t.path("v.pfm"), "--verify",
               device=device)
    return "built-in and Blender's views"


def littlecms(codes, source, target, intent=0, bpc=False):
    """LittleCMS's own float results (its transicc calculator), as 0..1 values."""
    lines = "\n".join(" ".join(map(str, px)) for px in codes.reshape(-1, 3)) + "\n"
    done = subprocess.run(["transicc", "-n", f"-t{intent}", f"-i{source}", f"-o{target}"] +
                          (["-b"] if bpc else []), input=lines, capture_output=True, text=True,
                          check=True)
    values = [list(map(float, line.split())) for line in done.stdout.splitlines()
              if line[:1].isdigit() or line[:1] == "-"]
    return np.array(values, np.float32).reshape(codes.shape) / 255


def pillow_icc(codes, source, target, intent=0, bpc=False):
    """LittleCMS through Pillow, on 8-bit codes."""
    flags = ImageCms.FLAGS["BLACKPOINTCOMPENSATION"] if bpc else 0
    transform = ImageCms.buildTransform(ImageCms.getOpenProfile(source) if source != "*sRGB" else
                                        ImageCms.createProfile("sRGB"),
                                        ImageCms.getOpenProfile(target) if target != "*sRGB" else
                                        ImageCms.createProfile("sRGB"),
                                        "RGB", "RGB", ImageCms.Intent(intent), flags)
    return np.asarray(ImageCms.applyTransform(Image.fromarray(codes, "RGB"), transform))


@case("icc", "LittleCMS 2.14's own calculator (transicc, float), and through Pillow's ImageCms "
      "(8-bit), with icc-profiles-free's profiles",
      "against transicc 1e-4 (reference) and 2e-3 (device: a table) as floats, 1 code in 8-bit "
      "output; 2 codes against Pillow",
      "Pillow's 8-bit transforms go through LittleCMS's 8-bit tables, up to 2 codes off its float "
      "results near black; halo follows the float results")
def icc(t):
    codes = to_codes(photo(83, 57, 3))
    adobe = os.path.join(PROFILES, "compatibleWithAdobeRGB1998.icc")
    lstar = os.path.join(PROFILES, "LStar-RGB.icc")
    write_png(t.path("in.png"), codes)
    cases = [(f"icc:from={adobe}", adobe, "*sRGB", 0, False),
             (f"icc:from={lstar}:intent=relative", lstar, "*sRGB", 1, False),
             (f"icc:from=srgb:to={adobe}", "*sRGB", adobe, 0, False),
             (f"icc:from={adobe}:bpc=1", adobe, "*sRGB", 0, True),
             (f"icc:from={adobe}:intent=absolute", adobe, "*sRGB", 3, False)]
    for spec, source, target, intent, bpc in cases:
        want = littlecms(codes, source, target, intent, bpc)
        pillow = pillow_icc(codes, source, target, intent, bpc)
        for device in devices(t):
            got = read_pfm(t.run(t.path("in.png"), spec, "out.pfm", "--type", "float",
                                 device=device))
            # The device runs a table, held to half an 8-bit code (halo filters icc).
            agree(got, want, 1e-4 if device == "ref" else 2e-3, f"{spec} on --device {device}")
            got = read_png(t.run(t.path("in.png"), spec, "out.png", device=device))
            agree_codes(got, to_codes(want), 1, f"{spec} on --device {device}, 8-bit")
            agree_codes(got, pillow, 2, f"{spec} on --device {device} against Pillow")
    # from=auto: the file's embedded profile.
    Image.fromarray(codes, "RGB").save(t.path("tagged.png"), icc_profile=open(adobe, "rb").read())
    agree_codes(read_png(t.run(t.path("tagged.png"), "icc", "auto.png")),
                to_codes(littlecms(codes, adobe, "*sRGB")), 1,
                "icc from the file's embedded profile")
    return f"{len(cases) + 1} conversions"
