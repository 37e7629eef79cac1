#!/usr/bin/env python3
"""halo's outputs against the outside world: every filter `halo filters` lists and every
format halo reads and writes, checked against an implementation halo does not own or against
a written spec, on inputs made here (tests/oracle/*_cases.py; docs/oracles.md has the table).

--verify proves that a device computes what halo's C++ reference computes; this suite proves
the reference (and, with --device, a device) computes what the rest of the world does.

  run.py HALO [--device ref|auto|...] [--only TEXT] [--table]

Exit status 1 when a case fails or a filter or format has no case.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402
import filter_cases  # noqa: E402,F401
import geometry_cases  # noqa: E402,F401
import colour_cases  # noqa: E402,F401
import format_cases  # noqa: E402,F401
import guided_cases  # noqa: E402,F401

FORMATS = ["format:png", "format:jpeg", "format:tiff", "format:exr", "format:pfm"]


def listed_filters(halo):
    text = subprocess.run([halo, "filters"], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"^([a-z]\w*)\s{2,}", text, re.M)]


def order(subject):
    """Formats after filters, each in the order of the suite's files."""
    return subject.startswith("format:")


def table():
    """docs/oracles.md's table, from the cases themselves."""
    rows = sorted(((s, c) for c in oracle.CASES for s in c.subjects), key=lambda r: order(r[0]))
    print("| filter or format | oracle | tolerance | what differs, and why |")
    print("|---|---|---|---|")
    for subject, c in rows:
        print(f"| `{subject}` | {c.oracle} | {c.tolerance} | {c.differs} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("halo")
    parser.add_argument("--device", default="ref",
                        help="where halo runs the filters (ref: the C++ reference, default)")
    parser.add_argument("--only", default="", help="cases whose subject or name has this text")
    parser.add_argument("--table", action="store_true", help="print docs/oracles.md's table")
    parser.add_argument("--keep", action="store_true", help="keep the files the cases made")
    args = parser.parse_args()
    if args.table:
        return table()
    covered = {s for c in oracle.CASES for s in c.subjects}
    missing = [s for s in listed_filters(args.halo) + FORMATS if s not in covered]
    folder = tempfile.mkdtemp(prefix="halo-oracle-")
    try:
        failed = oracle.run_cases(args.halo, args.device, args.only, folder)
    finally:
        if args.keep:
            print(f"files kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if missing and not args.only:
        print(f"FAIL no oracle case for: {', '.join(missing)}")
        failed += 1
    print(f"{len(oracle.CASES)} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
