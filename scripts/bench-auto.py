#!/usr/bin/env python3
"""--device auto against every device, end to end as a user runs it: wall time of `halo run` for
a 64x64 PNG, each photo given and a batch of photos, on the reference, each OpenCL device and
auto, alternating, with auto's choice as -v says it. Median (min..max) of --runs calls.

  scripts/bench-auto.py --halo BIN --photo PNG [--photo PNG ...] [--runs N] [--batch N]
                        [--devices "ref cpu gpu"] [--work DIR]

Before timing, each device runs once so its kernels are compiled and its start cost recorded
(what auto weighs); auto's first choice, with nothing recorded, is printed too. The batch is N
copies of the first photo, flipped and brightened so the files differ (made with OpenCV where
it is, as on the GPU machine, else oiiotool), run with -j <cores>.
"""
import argparse, os, re, shutil, statistics, subprocess, sys, time

CHOICE = re.compile(r'--device auto: (.*)')


def run(halo, args, env):
    start = time.perf_counter()
    p = subprocess.run([halo] + args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f'halo {" ".join(args)} failed ({p.returncode}): {p.stderr.strip()}')
    m = CHOICE.search(p.stderr)
    return wall, m.group(1) if m else ''


def make_batch(photo, work, count):
    folder = os.path.join(work, 'batch')
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        path = os.path.join(folder, f'p{i:02d}.png')
        try:
            import cv2
            import numpy as np
            img = cv2.imread(photo, cv2.IMREAD_UNCHANGED)
            img = img if i % 2 == 0 else img[:, ::-1]
            img = np.clip(img.astype(np.float32) * (0.8 + 0.02 * i), 0, 255).astype(np.uint8)
            cv2.imwrite(path, img)
        except ImportError:  # the development machine: OpenImageIO's tool instead
            flop = ['--flop'] if i % 2 else []
            subprocess.run(['oiiotool', photo] + flop + ['--mulc', str(0.8 + 0.02 * i), '-o', path],
                           check=True)
    return folder


def make_small(photo, work):
    path = os.path.join(work, 'small64.png')
    try:
        import cv2
        cv2.imwrite(path, cv2.resize(cv2.imread(photo, cv2.IMREAD_UNCHANGED), (64, 64),
                                     interpolation=cv2.INTER_AREA))
    except ImportError:
        subprocess.run(['oiiotool', photo, '--resize', '64x64', '-o', path], check=True)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--halo', required=True)
    ap.add_argument('--photo', action='append', required=True)
    ap.add_argument('--filter', default='gaussian:sigma=4')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--devices', default='ref cpu gpu')
    ap.add_argument('--work', default='/tmp/halo-bench-auto')
    o = ap.parse_args()
    shutil.rmtree(o.work, ignore_errors=True)
    os.makedirs(o.work)
    env = dict(os.environ, HALO_CACHE_DIR=os.path.join(o.work, 'cache'))
    cores = os.cpu_count()
    cases = [('64x64 PNG', make_small(o.photo[0], o.work), 'png', [])]
    cases += [(os.path.basename(p), p, 'jpg', []) for p in o.photo]
    if o.batch:
        folder = make_batch(o.photo[0], o.work, o.batch)
        cases.append((f'{o.batch} photos -j {cores}', folder, 'jpg', ['-j', str(cores)]))

    def args(device, case):
        name, path, ext, extra = case
        out = os.path.join(o.work, 'out', '{stem}.' + ext) if os.path.isdir(path) else \
            os.path.join(o.work, 'o.' + ext)
        return ['-v', '--device', device, 'run', path, '-f', o.filter, '-o', out, '--mkdir'] + extra

    for case in cases:
        print(f'auto with nothing recorded, {case[0]}: {run(o.halo, args("auto", case), env)[1]}')
    for device in o.devices.split():
        if device != 'ref':
            run(o.halo, args(device, cases[1]), env)  # compile, record the start cost
    print(f'\n{o.filter}, median (min..max) of {o.runs} calls, seconds')
    print('| case | ' + ' | '.join(o.devices.split() + ['auto']) + ' | auto chose |')
    print('|---' * (len(o.devices.split()) + 3) + '|')
    for case in cases:
        walls = {d: [] for d in o.devices.split() + ['auto']}
        chose = ''
        for _ in range(o.runs):
            for d in walls:
                wall, why = run(o.halo, args(d, case), env)
                walls[d].append(wall)
                chose = why if d == 'auto' else chose
        cells = [f'{statistics.median(w):.3f} ({min(w):.3f}..{max(w):.3f})' for w in walls.values()]
        print(f'| {case[0]} | ' + ' | '.join(cells) + f' | {chose.split(",")[0].split(":")[0]} |')
        print(f'  auto: {chose}', file=sys.stderr)


if __name__ == '__main__':
    main()
