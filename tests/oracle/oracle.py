"""The oracle suite's frame: cases, halo's command line, images in and out through libraries
halo does not own, and the comparison every case states its tolerance for.

A case checks one filter or one format against an implementation outside halo (OpenCV, libvips,
OpenImageIO, OpenColorIO, LittleCMS through Pillow, Pillow, ImageMagick, tifffile) or against
the NumPy form of a written formula, on inputs the case makes itself.
"""
import dataclasses
import os
import subprocess
import sys
import time

import numpy as np

CASES = []


@dataclasses.dataclass
class Case:
    subjects: list  # filters' names as `halo filters` lists them, or "format:png", ...
    name: str
    oracle: str     # what halo is checked against
    tolerance: str  # as stated in docs/oracles.md
    differs: str    # where the peers and halo differ, and which one halo follows
    run: object


def case(subject, oracle, tolerance, differs=""):
    """Registers the decorated function as a case of `subject` (one filter or format, or a
    list of them)."""
    def register(fn):
        subjects = [subject] if isinstance(subject, str) else list(subject)
        CASES.append(Case(subjects, fn.__name__, oracle, tolerance, differs, fn))
        return fn
    return register


class Mismatch(AssertionError):
    pass


class Context:
    """What a case gets: a folder of its own and halo's command line."""

    def __init__(self, halo, folder, device):
        self.halo_binary, self.folder, self.device = halo, folder, device

    def path(self, name):
        return os.path.join(self.folder, name)

    def halo(self, *args, expect=0, device=None):
        """Runs `halo --device D ARGS`; a Mismatch when the exit code is not `expect`."""
        command = [self.halo_binary, "--device", device or self.device, *map(str, args)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != expect:
            raise Mismatch(f"{' '.join(command)}: exit {done.returncode} (wanted {expect}): "
                           f"{done.stderr.strip()[-600:]}")
        return done

    def run(self, source, spec, out_name, *extra, device=None):
        """halo run SOURCE -f SPEC... -o OUT: the output's path."""
        specs = [spec] if isinstance(spec, str) else spec
        out = self.path(out_name)
        args = ["run", source]
        for s in specs:
            args += ["-f", s]
        self.halo(*args, "-o", out, *extra, device=device)
        return out


def agree(got, want, tolerance, what, relative=True, bound=None):
    """Every sample of `got` within `tolerance` of `want`: |got - want| / max(1, |want|) (or
    the plain difference when not relative); NaN where want is NaN, the same infinities.
    `bound`: per-sample absolute errors also allowed (kernel_bound: float32 sums of large
    inputs)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        raise Mismatch(f"{what}: shape {got.shape}, the oracle's {want.shape}")
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if (nan_g != nan_w).any():
        at = np.argwhere(nan_g != nan_w)[0]
        raise Mismatch(f"{what}: NaN differs at {tuple(at)}: halo {got[tuple(at)]}, "
                       f"oracle {want[tuple(at)]}")
    inf = np.isinf(want) | np.isinf(got)
    if (got[inf] != want[inf]).any():
        at = np.argwhere(inf & (got != want))[0]
        raise Mismatch(f"{what}: infinity differs at {tuple(at)}: halo {got[tuple(at)]}, "
                       f"oracle {want[tuple(at)]}")
    finite = ~(nan_w | inf)
    with np.errstate(invalid="ignore"):
        diff = np.where(finite, np.abs(got - want), 0)
    if relative:
        diff = diff / np.maximum(1.0, np.abs(np.where(finite, want, 0)))
    if bound is not None:  # within the sums' own rounding: counted as no error
        with np.errstate(invalid="ignore"):
            raw = np.where(finite, np.abs(got - want), 0)
        diff = np.where(raw <= np.broadcast_to(bound, raw.shape), 0, diff)
    worst = float(diff.max()) if diff.size else 0.0
    if worst > tolerance:
        at = tuple(np.unravel_index(np.argmax(diff), diff.shape))
        raise Mismatch(f"{what}: largest error {worst:.3g} > {tolerance:g} at {at} "
                       f"(y, x, channel): halo {got[at]!r}, oracle {want[at]!r}")
    return worst


def agree_codes(got, want, codes, what):
    """Integer images: every sample within `codes` codes."""
    diff = np.abs(np.asarray(got, np.int64) - np.asarray(want, np.int64))
    if np.asarray(got).shape != np.asarray(want).shape:
        raise Mismatch(f"{what}: shape {np.asarray(got).shape}, the oracle's "
                       f"{np.asarray(want).shape}")
    if diff.size and diff.max() > codes:
        at = tuple(np.unravel_index(np.argmax(diff), diff.shape))
        raise Mismatch(f"{what}: {int(diff.max())} codes apart at {at} (y, x, channel), "
                       f"{int((diff > codes).sum())} samples beyond {codes}: halo "
                       f"{np.asarray(got)[at]}, oracle {np.asarray(want)[at]}")
    return int(diff.max()) if diff.size else 0


# --- Test images -------------------------------------------------------------------------

def photo(width, height, channels=3, seed=1):
    """Float32 [0, 1] with what filters meet in photos: gradients, a hard-edged disc, texture
    and noise; every channel different."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    planes = []
    for c in range(channels):
        g = (x / max(1, width - 1)) * (0.3 + 0.2 * c) + (y / max(1, height - 1)) * 0.3
        disc = ((x - width * (0.3 + 0.1 * c)) ** 2 + (y - height * 0.6) ** 2
                < (0.3 * min(width, height)) ** 2)
        texture = 0.1 * np.sin(x * (0.7 + c) + y * 0.45)
        planes.append(np.clip(g + 0.25 * disc + texture + rng.normal(0, 0.04, x.shape), 0, 1))
    return np.stack(planes, axis=-1).astype(np.float32)


def hdr(width, height, channels=3, seed=2, specials=True):
    """Float32 render-like values: mostly 0..4, highlights up to 200, a few negatives, and
    (specials) NaN, +Inf and -Inf samples."""
    rng = np.random.default_rng(seed)
    image = photo(width, height, channels, seed) * 4
    image *= np.exp(rng.normal(0, 0.8, image.shape)).astype(np.float32)
    image[rng.random(image.shape) < 0.01] = 200
    image[rng.random(image.shape) < 0.02] *= -0.1
    if specials and width * height >= 16:
        flat = image.reshape(-1)
        picks = rng.choice(flat.size, 3, replace=False)
        flat[picks[0]], flat[picks[1]], flat[picks[2]] = np.nan, np.inf, -np.inf
    return image.astype(np.float32)


def kernel_bound(image, abs_sum, ry, rx):
    """What float32 sums may lose on inputs far above 1: 2^-23 x sum |k| x the largest |input|
    under the kernel's (2ry+1) x (2rx+1) window, per sample (a rounding of each partial sum, at
    most a few of which matter). A render's highlights of 29 under a Laplacian (sum |k| 16)
    allow 5.5e-5, where 1e-5 x max(1, |v|) of a small output would not hold."""
    import cv2
    magnitude = np.abs(np.nan_to_num(image.astype(np.float32), nan=0, posinf=0, neginf=0))
    window = np.ones((2 * ry + 1, 2 * rx + 1), np.uint8)
    largest = np.stack([cv2.dilate(magnitude[..., c], window, borderType=cv2.BORDER_REPLICATE)
                        for c in range(magnitude.shape[-1])], axis=-1)
    return 2.0 ** -23 * abs_sum * largest


def to_codes(image, bits=8):
    top = (1 << bits) - 1
    return np.round(np.clip(image, 0, 1) * top).astype(np.uint8 if bits == 8 else np.uint16)


# --- Files, through libraries halo does not own ----------------------------------------------

def write_pfm(path, image):
    """PFM as the Netpbm spec has it: "PF"/"Pf", size, a negative scale for little-endian
    floats, rows from the bottom up."""
    image = np.asarray(image, np.float32)
    if image.ndim == 2:
        image = image[..., None]
    h, w, c = image.shape
    assert c in (1, 3), "PFM holds 1 or 3 channels"
    with open(path, "wb") as f:
        f.write(f"{'PF' if c == 3 else 'Pf'}\n{w} {h}\n-1.0\n".encode())
        f.write(image[::-1].astype("<f4").tobytes())


def read_pfm(path):
    with open(path, "rb") as f:
        magic = f.readline().strip()
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), "<f4" if scale < 0 else ">f4")
    c = 3 if magic == b"PF" else 1
    return data.reshape(h, w, c)[::-1].astype(np.float32)


def write_png(path, codes):
    """8/16-bit codes, 1-4 channels in RGB(A) order, through OpenCV's libpng."""
    import cv2
    codes = np.asarray(codes)
    if codes.ndim == 3 and codes.shape[2] >= 3:
        codes = codes[..., [2, 1, 0, 3][:codes.shape[2]]]
    assert cv2.imwrite(path, codes)


def read_png(path):
    import cv2
    codes = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    assert codes is not None, path
    if codes.ndim == 2:
        return codes[..., None]
    return codes[..., [2, 1, 0, 3][:codes.shape[2]]]


def write_oiio(path, image, channel_names=None, fmt="float", attribs=()):
    """Any format OpenImageIO writes (EXR, TIFF): float or code samples, named channels."""
    import OpenImageIO as oiio
    image = np.asarray(image)
    if image.ndim == 2:
        image = image[..., None]
    h, w, c = image.shape
    spec = oiio.ImageSpec(w, h, c, fmt)
    if channel_names:
        spec.channelnames = tuple(channel_names)
    for name, value in attribs:
        spec.attribute(name, value)
    out = oiio.ImageOutput.create(path)
    assert out and out.open(path, spec), oiio.geterror()
    assert out.write_image(np.ascontiguousarray(image)), out.geterror()
    out.close()


def read_oiio(path, fmt="float"):
    """Every channel of the file's first part, with their names and its header. Through
    ImageInput, not ImageBuf: an ImageBuf comes from OpenImageIO's cache, which would give a
    file's old pixels when a case writes it again."""
    import OpenImageIO as oiio
    image = oiio.ImageInput.open(path)
    if not image:
        raise Mismatch(f"{path}: OpenImageIO: {oiio.geterror()}")
    spec = image.spec()
    pixels = image.read_image(fmt)
    image.close()
    if pixels is None:
        raise Mismatch(f"{path}: OpenImageIO could not read its pixels")
    pixels = np.asarray(pixels)
    if pixels.ndim == 2:
        pixels = pixels[..., None]
    return pixels, list(spec.channelnames), spec


def read_any(path):
    """An output as float samples: PFM by its spec, 8/16-bit codes scaled to [0, 1] as halo
    does (v / 255, v / 65535), other formats through OpenImageIO."""
    if path.endswith(".pfm"):
        return read_pfm(path)
    if path.endswith(".png"):
        codes = read_png(path)
        return codes.astype(np.float32) / (255 if codes.dtype == np.uint8 else 65535)
    return read_oiio(path)[0].astype(np.float32)


def run_cases(halo, device, only, folder):
    """Runs every case (or those whose subject or name contains `only`); prints one line
    each and returns the number that failed."""
    failed = 0
    for c in CASES:
        subjects = ",".join(c.subjects)
        if only and only not in subjects and only not in c.name:
            continue
        where = os.path.join(folder, c.name)
        os.makedirs(where, exist_ok=True)
        start = time.monotonic()
        try:
            note = c.run(Context(halo, where, device))
            print(f"ok   {c.name} [{subjects}] ({time.monotonic() - start:.1f} s): {note or ''}"
                  .rstrip(": "))
        except Exception as e:  # a peer's own failure is the case's failure too
            failed += 1
            print(f"FAIL {c.name} [{subjects}]: {type(e).__name__}: {e}")
        sys.stdout.flush()
    return failed
