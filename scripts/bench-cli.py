#!/usr/bin/env python3
"""The real halo CLI end to end, as a user runs it: wall time, peak RSS and the decode / device /
encode split (`--timings`), for one photo, a 16K frame and a batch of photos.

  scripts/bench-cli.py --halo BIN --photo PNG [--work DIR] [--runs N] [--devices LIST] [--json F]

The 16K frame (16384x16384, the photo resized) and the batch (48 variants of the photo: flips,
crops, brightness; 5120x2880 PNG) are made in WORK with OpenCV the first time, untimed. Meant
for the GPU machine (scripts/bench-gpu.sh cli), where OpenCV is installed; runs anywhere it is.
--devices: the --device values to run the batch with, e.g. "0 all" on a machine with two GPUs.
"""
import argparse, json, os, re, statistics, subprocess, sys, time

PHASES = re.compile(r'time decode ([\d.]+) s, (.+?) ([\d.]+) s, encode ([\d.]+) s over (\d+) '
                    r'strips?; wall ([\d.]+) s \(([\d.]+)x overlap\)')


def make_inputs(photo, work, count=48):
    os.makedirs(os.path.join(work, 'photos'), exist_ok=True)
    big = os.path.join(work, 'big.png')
    paths = [os.path.join(work, 'photos', f'photo{i:02d}.png') for i in range(count)]
    if os.path.exists(big) and all(os.path.exists(p) for p in paths):
        return big, os.path.join(work, 'photos')
    import cv2
    import numpy as np
    src = cv2.imread(photo, cv2.IMREAD_UNCHANGED)
    if not os.path.exists(big):
        cv2.imwrite(big, cv2.resize(src, (16384, 16384), interpolation=cv2.INTER_LINEAR))
    for i, path in enumerate(paths):
        if os.path.exists(path):
            continue
        img = src if i % 2 == 0 else src[:, ::-1]
        if i % 3 == 1:
            img = img[::-1]
        scale = 0.75 + 0.02 * i  # brightness differs, so files differ
        img = np.clip(img.astype(np.float32) * scale, 0, 255).astype(np.uint8)
        cv2.imwrite(path, img)
    return big, os.path.join(work, 'photos')


def timed(argv):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit('bench-cli: failed: ' + ' '.join(argv) + '\n' + err.decode(errors='replace'))
    return wall, out.decode(errors='replace')


def peak_rss(argv):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024.0


def single(halo, name, args, runs, results):
    walls, splits = [], []
    timed([halo] + args)  # kernels compiled and cached, files in the page cache
    for _ in range(runs):
        wall, out = timed([halo] + args + ['--timings'])
        walls.append(wall)
        m = PHASES.search(out)
        if m:
            splits.append({'decode_s': float(m.group(1)), 'device': m.group(2),
                           'device_s': float(m.group(3)), 'encode_s': float(m.group(4)),
                           'strips': int(m.group(5)), 'stream_wall_s': float(m.group(6)),
                           'overlap': float(m.group(7))})
    kernel_ms = sum(float(x) for x in re.findall(r'device total\s+([\d.]+) ms', out))
    rss = peak_rss([halo] + args)
    med = statistics.median(walls)
    s = splits[len(splits) // 2] if splits else {}
    print(f'| {name} | {med:.3f} ({min(walls):.3f}..{max(walls):.3f}) | '
          f'{s.get("decode_s", 0):.3f} | {s.get("device_s", 0):.3f} | {kernel_ms:.1f} | '
          f'{s.get("encode_s", 0):.3f} | {s.get("strips", 0)} | {s.get("overlap", 0):.2f} | '
          f'{rss:.0f} |')
    results.append({'case': name, 'args': args, 'wall_s': walls, 'median_s': med,
                    'splits': splits, 'device_kernels_ms': kernel_ms, 'peak_rss_mib': rss})


def batch(halo, photos, work, device, jobs, runs, results):
    out_dir = os.path.join(work, 'out')
    rates = []
    count = len(os.listdir(photos))
    for _ in range(runs):
        subprocess.run(['rm', '-rf', out_dir])
        wall, _ = timed([halo, '--device', device, 'run', photos, '-f', 'gaussian:r=8', '-o',
                         out_dir + '/{stem}.jpg', '--mkdir', '-j', str(jobs)])
        rates.append(count / wall)
    med = statistics.median(rates)
    print(f'| batch {count} photos -> JPEG, --device {device}, -j {jobs} | {med:.1f} images/s '
          f'({min(rates):.1f}..{max(rates):.1f}) |')
    results.append({'case': 'batch', 'device': device, 'jobs': jobs, 'images': count,
                    'images_per_s': rates})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--halo', required=True)
    ap.add_argument('--photo', required=True)
    ap.add_argument('--work', default='/tmp/halo-bench-cli')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--devices', default='0')
    ap.add_argument('--jobs', type=int, default=os.cpu_count())
    ap.add_argument('--json', default='')
    ap.add_argument('--make-inputs', action='store_true', help=argparse.SUPPRESS)
    o = ap.parse_args()
    if o.make_inputs:
        make_inputs(o.photo, o.work)
        return
    # In a process of its own: a child's peak RSS (wait4) starts at its parent's, and making
    # the 16K frame takes ~1 GB.
    subprocess.run([sys.executable, __file__, '--halo', o.halo, '--photo', o.photo, '--work',
                    o.work, '--make-inputs'], check=True)
    big, photos = os.path.join(o.work, 'big.png'), os.path.join(o.work, 'photos')
    results = []
    print('| case | wall s (min..max) | decode s | device s | kernels ms | encode s | strips | '
          'overlap | RSS MiB |')
    print('|---|---|---|---|---|---|---|---|---|')
    single(o.halo, 'photo 5120x2880 PNG, gaussian:sigma=4 -> PNG',
           ['run', o.photo, '-f', 'gaussian:sigma=4', '-o', os.path.join(o.work, 'p.png')],
           o.runs, results)
    single(o.halo, '16384x16384 PNG, gaussian:r=8 -> PNG',
           ['run', big, '-f', 'gaussian:r=8', '-o', os.path.join(o.work, 'b.png')],
           max(2, o.runs // 2), results)
    print()
    for device in o.devices.split():
        batch(o.halo, photos, o.work, device, o.jobs, 2, results)
    if o.json:
        with open(o.json, 'w') as f:
            json.dump(results, f, indent=2)


if __name__ == '__main__':
    main()
