#!/usr/bin/env python3
"""halo against vips end to end, as users run them: decode, filter, encode, one file a call.

  scripts/bench-vips.py [--runs N] [--work DIR] [--only NAME,...] [--json FILE]
  scripts/bench-vips.py --photos [FILE...] [--runs N] [--json FILE]
  scripts/bench-vips.py --photos [FILE...] --batch [--runs N] [--json FILE]

Each case runs halo and vips alternately N times (default 5) and prints the median wall time of
each with its spread (min..max), the ratio halo/vips of the medians, and each tool's peak RSS
(the largest of its runs, from wait4). The inputs are made in WORK (default /tmp/halo-bench-vips)
the first time, untimed:
  altai.png     Plasma's Altai wallpaper, 5120x2880 RGB8 (plasma-workspace-wallpapers)
  big.png       16384x16384 RGB8: Altai resized by vips
  altai16.png   Altai as 16-bit
  altai.jpg     Altai as JPEG quality 95
  render.exr    tests/data/render/scene_4spp.exr (multilayer, with normal, depth and albedo)
Needs (not installed by scripts/setup: only this benchmark uses them):
  apt-get install libvips-tools plasma-workspace-wallpapers
halo is build/app/halo unless HALO is set; it runs with its defaults (--device auto).

--photos runs the photo tasks on each file given (default: the largest image of every Plasma
wallpaper, /usr/share/wallpapers/*/contents/images): gaussian sigma 4 to PNG against `vips
gaussblur`, a 512x512 and a 128x128 thumbnail to JPEG against `vipsthumbnail -s 512` and
`-s 128`, and a resize to 1600
wide to JPEG against `vips resize` at the same scale, then per task the ratios' median and
range and how many photos meet the targets (0.9x vips's wall time, 1.5x its peak RSS).
--batch instead times the photos as one folder to 512 thumbnails: `halo run FOLDER` against
`vipsthumbnail FOLDER/*`.
"""
import glob
import argparse, json, os, shutil, statistics, subprocess, sys, time

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
halo = os.environ.get('HALO', os.path.join(here, 'build', 'app', 'halo'))

# name, halo arguments, vips arguments (None: no vips equivalent), output extension
CASES = [
    ('altai gaussian sigma=4', 'run {w}/altai.png -f gaussian:sigma=4 -o {o}.png',
     'gaussblur {w}/altai.png {o}.png 4', ''),
    ('altai conv 3x3 emboss (float)', 'run {w}/altai.png -f conv:k=2,0,0,0,-1,0,0,0,-1 -o {o}.png',
     'conv {w}/altai.png {o}.png {w}/emboss.mat --precision float', ''),
    ('altai copy (no filter)', 'run {w}/altai.png -o {o}.png', 'copy {w}/altai.png {o}.png', ''),
    ('16384^2 gaussian r=8', 'run {w}/big.png -f gaussian:r=8 -o {o}.png',
     'gaussblur {w}/big.png {o}.png 2.67', ''),
    ('altai 16-bit gaussian sigma=4', 'run {w}/altai16.png -f gaussian:sigma=4 -o {o}.png',
     'gaussblur {w}/altai16.png {o}.png 4', ''),
    ('altai JPEG gaussian sigma=4 (Q95)',
     'run {w}/altai.jpg -f gaussian:sigma=4 -o {o}.jpg --quality 95',
     'gaussblur {w}/altai.jpg {o}.jpg[Q=95] 4', ''),
    ('render EXR bilateral (N, Z, albedo)', 'run {w}/render.exr -f bilateral -o {o}.exr', None, ''),
]


def make_inputs(work):
    os.makedirs(work, exist_ok=True)
    def have(name):
        return os.path.exists(os.path.join(work, name))
    if not have('altai.png'):
        src = '/usr/share/wallpapers/Altai/contents/images/5120x2880.png'
        if not os.path.exists(src):
            sys.exit('bench-vips: ' + src + ' is missing (apt-get install plasma-workspace-wallpapers)')
        shutil.copy(src, os.path.join(work, 'altai.png'))
    steps = [('big.png', 'vips resize {w}/altai.png {w}/big.v 3.2 --vscale 5.688889 && '
                         'vips copy {w}/big.v {w}/big.png && rm {w}/big.v'),
             ('altai16.png', 'vips colourspace {w}/altai.png {w}/altai16.png rgb16'),
             ('altai.jpg', 'vips copy {w}/altai.png {w}/altai.jpg[Q=95]')]
    for name, command in steps:
        if not have(name):
            subprocess.run(command.format(w=work), shell=True, check=True)
    if not have('render.exr'):
        shutil.copy(os.path.join(here, 'tests', 'data', 'render', 'scene_4spp.exr'),
                    os.path.join(work, 'render.exr'))
    with open(os.path.join(work, 'emboss.mat'), 'w') as f:
        f.write('3 3 1 0\n2 0 0\n0 -1 0\n0 0 -1\n')


def timed(argv):
    """Wall seconds and peak RSS (MiB) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors='replace')
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit('bench-vips: failed: ' + ' '.join(argv) + '\n' + err)
    return wall, usage.ru_maxrss / 1024.0


def alternate(o, h_cmd, v_cmd, run=None):
    """Both commands once untimed (caches warm), then o.runs times alternately: the summaries
    of halo's runs and vips's."""
    run = run or timed
    run(h_cmd), run(v_cmd)
    h_runs, v_runs = [], []
    for _ in range(o.runs):
        h_runs.append(run(h_cmd))
        v_runs.append(run(v_cmd))
    return summary(h_runs), summary(v_runs)


def summary(runs):
    walls = [w for w, _ in runs]
    return statistics.median(walls), min(walls), max(walls), max(r for _, r in runs)


PHOTO_TASKS = [
    ('gaussian sigma=4 -> PNG', 'run {f} -f gaussian:sigma=4 -o {o}.png',
     ['vips', 'gaussblur', '{f}', '{o}.png', '4']),
    ('thumbnail 512 -> JPEG', 'run {f} -f thumbnail:w=512:h=512 -o {o}.jpg',
     ['vipsthumbnail', '{f}', '-s', '512', '-o', '{o}.jpg']),
    ('thumbnail 128 -> JPEG', 'run {f} -f thumbnail:w=128:h=128 -o {o}.jpg',
     ['vipsthumbnail', '{f}', '-s', '128', '-o', '{o}.jpg']),
    ('resize w=1600 -> JPEG', 'run {f} -f resize:w=1600 -o {o}.jpg',
     ['vips', 'resize', '{f}', '{o}.jpg', '{scale}']),
]


def wallpapers():
    """The largest image of each Plasma wallpaper (plasma-workspace-wallpapers)."""
    files = []
    for folder in sorted(glob.glob('/usr/share/wallpapers/*/contents/images')):
        images = [os.path.join(folder, n) for n in os.listdir(folder)]
        if images:
            files.append(max(images, key=os.path.getsize))
    return files


def photo_rows(o, files, out):
    rows = []
    for f in files:
        width = int(subprocess.run(['vipsheader', '-f', 'width', f], stdout=subprocess.PIPE,
                                   text=True, check=True).stdout)
        for task, h_args, v_args in PHOTO_TASKS:
            if o.only and not any(part in task for part in o.only.split(',')):
                continue
            fill = dict(f=f, o=out, scale=f'{1600 / width:.6f}')
            h_cmd = [halo] + h_args.format(**fill).split()
            v_cmd = [a.format(**fill) for a in v_args]
            h, v = alternate(o, h_cmd, v_cmd)
            name = f'{os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(f))))}/' \
                   f'{os.path.basename(f)}'
            print(f'| {name} | {task} | {h[0]:.2f} ({h[1]:.2f}..{h[2]:.2f}) | '
                  f'{v[0]:.2f} ({v[1]:.2f}..{v[2]:.2f}) | {h[0] / v[0]:.2f} | {h[3]:.0f} | '
                  f'{v[3]:.0f} | {h[3] / v[3]:.2f} |')
            sys.stdout.flush()
            rows.append({'photo': f, 'task': task, 'halo': h_cmd[1:], 'vips': v_cmd,
                         'halo_s': h[0], 'vips_s': v[0], 'ratio': h[0] / v[0],
                         'halo_rss_mib': h[3], 'vips_rss_mib': v[3], 'rss_ratio': h[3] / v[3]})
    return rows


def photo_batch(o, files):
    """The photos as one folder to 512 thumbnails: `halo run FOLDER` (its default jobs) against
    `vipsthumbnail FOLDER/*`, alternately; the photos are copied into the folder first, untimed,
    each name prefixed with its index so that no two outputs collide."""
    folder, out = os.path.join(o.work, 'batch-in'), os.path.join(o.work, 'batch-out')
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for i, f in enumerate(files):
        shutil.copy(f, os.path.join(folder, f'{i:03d}-{os.path.basename(f)}'))
    inputs = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    h_cmd = [halo, 'run', folder, '-f', 'thumbnail:w=512:h=512', '-o', out + '/{stem}.jpg']
    v_cmd = ['vipsthumbnail', *inputs, '-s', '512', '-o', out + '/%s.jpg']
    def fresh(cmd):
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        result = timed(cmd)
        if len(os.listdir(out)) != len(inputs):
            sys.exit(f'bench-vips: {cmd[0]} wrote {len(os.listdir(out))} of {len(inputs)} outputs')
        return result
    h, v = alternate(o, h_cmd, v_cmd, fresh)
    print(f'\n{len(inputs)} photos as one folder to 512 thumbnails\n')
    print('| tool | s: median (min..max) | peak RSS MiB |')
    print('|---|---|---|')
    print(f'| halo run FOLDER -f thumbnail:w=512:h=512 | {h[0]:.2f} ({h[1]:.2f}..{h[2]:.2f}) | '
          f'{h[3]:.0f} |')
    print(f'| vipsthumbnail FOLDER/* -s 512 | {v[0]:.2f} ({v[1]:.2f}..{v[2]:.2f}) | {v[3]:.0f} |')
    print(f'| halo / vips | {h[0] / v[0]:.2f} | {h[3] / v[3]:.2f} |')
    return {'photos': len(inputs), 'halo': h_cmd[1:], 'vips': v_cmd[:1] + ['FOLDER/*'] + v_cmd[-4:],
            'halo_s': h[0], 'vips_s': v[0], 'ratio': h[0] / v[0], 'halo_rss_mib': h[3],
            'vips_rss_mib': v[3], 'rss_ratio': h[3] / v[3]}


def print_photo_summary(rows):
    """Per task, over the photos: the ratios' median and range, and how many meet the targets
    (at or below 0.9x vips's wall time, at or below 1.5x its peak RSS)."""
    print(f'\n{len({r["photo"] for r in rows})} photos; halo / vips per task\n')
    print('| task | wall: median (min..max) | at or below 0.9x | peak RSS: median (max) '
          '| at or below 1.5x |')
    print('|---|---|---|---|---|')
    for task, _, _ in PHOTO_TASKS:
        mine = [r for r in rows if r['task'] == task]
        if not mine:
            continue
        wall = [r['ratio'] for r in mine]
        rss = [r['rss_ratio'] for r in mine]
        print(f'| {task} | {statistics.median(wall):.2f} ({min(wall):.2f}..{max(wall):.2f}) | '
              f'{sum(w <= 0.9 for w in wall)} of {len(mine)} | {statistics.median(rss):.2f} '
              f'({max(rss):.2f}) | {sum(m <= 1.5 for m in rss)} of {len(mine)} |')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--work', default='/tmp/halo-bench-vips')
    ap.add_argument('--only', default='', help='comma-separated case names (substrings)')
    ap.add_argument('--json', default='')
    ap.add_argument('--photos', nargs='*', default=None,
                    help='the photo tasks on these files (none given: the Plasma wallpapers)')
    ap.add_argument('--batch', action='store_true',
                    help='with --photos: the photos as one folder to thumbnails instead')
    o = ap.parse_args()
    version = subprocess.run(['vips', '--version'], stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f'halo: {halo}\nvips: {version}\nruns: {o.runs}, alternating; medians (min..max)\n')
    if o.photos is not None:
        os.makedirs(o.work, exist_ok=True)
        files = o.photos or wallpapers()
        if o.batch:
            batch = photo_batch(o, files)
            if o.json:
                with open(o.json, 'w') as f:
                    json.dump({'vips': version, 'runs': o.runs, 'batch': batch}, f, indent=2)
            return
        print('| photo | task | halo s | vips s | halo / vips | halo MiB | vips MiB | RSS ratio |')
        print('|---|---|---|---|---|---|---|---|')
        rows = photo_rows(o, files, os.path.join(o.work, 'out'))
        print_photo_summary(rows)
        if o.json:
            with open(o.json, 'w') as f:
                json.dump({'vips': version, 'runs': o.runs, 'results': rows}, f, indent=2)
        return
    make_inputs(o.work)
    out = os.path.join(o.work, 'out')
    print('| case | halo s | vips s | halo / vips | halo MiB | vips MiB | RSS ratio |')
    print('|---|---|---|---|---|---|---|')
    results = []
    for name, h_args, v_args, _ in CASES:
        if o.only and not any(part in name for part in o.only.split(',')):
            continue
        h_cmd = [halo] + h_args.format(w=o.work, o=out + '-halo').split()
        v_cmd = ['vips'] + v_args.format(w=o.work, o=out + '-vips').split() if v_args else None
        timed(h_cmd)  # warm the caches (files, kernels) once, untimed
        if v_cmd: timed(v_cmd)
        h_runs, v_runs = [], []
        for _ in range(o.runs):
            h_runs.append(timed(h_cmd))
            if v_cmd: v_runs.append(timed(v_cmd))
        h = summary(h_runs)
        row = {'case': name, 'halo': h_cmd[1:], 'halo_s': h[0], 'halo_min_s': h[1],
               'halo_max_s': h[2], 'halo_rss_mib': h[3]}
        if v_cmd:
            v = summary(v_runs)
            row.update({'vips': v_cmd[1:], 'vips_s': v[0], 'vips_min_s': v[1], 'vips_max_s': v[2],
                        'vips_rss_mib': v[3], 'ratio': h[0] / v[0], 'rss_ratio': h[3] / v[3]})
            print(f'| {name} | {h[0]:.2f} ({h[1]:.2f}..{h[2]:.2f}) | {v[0]:.2f} ({v[1]:.2f}..{v[2]:.2f}) '
                  f'| {h[0] / v[0]:.2f} | {h[3]:.0f} | {v[3]:.0f} | {h[3] / v[3]:.2f} |')
        else:
            print(f'| {name} | {h[0]:.2f} ({h[1]:.2f}..{h[2]:.2f}) | - | - | {h[3]:.0f} | - | - |')
        results.append(row)
        sys.stdout.flush()
    if o.json:
        with open(o.json, 'w') as f:
            json.dump({'vips': version, 'runs': o.runs, 'results': results}, f, indent=2)


if __name__ == '__main__':
    main()
