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
import metric_cases  # noqa: E402,F401

FORMATS = ["format:png", "format:jpeg", "format:webp", "format:tiff", "format:exr", "format:pfm"]
METRICS = ["metric:ssim", "metric:flip", "metric:temporal"]  # halo compare --metrics


def listed_filters(halo):
    text = subprocess.run([halo, "filters"], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"^([a-z]\w*)\s{2,}", text, re.M)]


def order(subject):
    """Formats after filters, compare's metrics last, each in the order of the suite's files."""
    return 2 if subject.startswith("metric:") else 1 if subject.startswith("format:") else 0


DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "oracles.md")
BEGIN, END = "<!-- oracle table: tests/oracle/run.py --table -->", "<!-- end of the oracle table -->"


def table():
    """docs/oracles.md's table, from the cases themselves: a row for each filter or format and
    oracle (formats last)."""
    cell = lambda text: text.replace("|", "\\|")
    lines = ["| filter or format | oracle | tolerance | what differs, and why |", "|---|---|---|---|"]
    for subject, c in sorted(((s, c) for c in oracle.CASES for s in c.subjects),
                             key=lambda r: order(r[0])):
        line = f"| `{subject}` | {cell(c.oracle)} | {cell(c.tolerance)} | {cell(c.differs)} |"
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)


def documented_table():
    """The table as docs/oracles.md holds it, between its markers."""
    with open(DOCS, encoding="utf-8") as f:
        text = f.read()
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()


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
        print(table())
        return 0
    covered = {s for c in oracle.CASES for s in c.subjects}
    missing = [s for s in listed_filters(args.halo) + FORMATS + METRICS if s not in covered]
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
    if not args.only and documented_table() != table():
        print("FAIL docs/oracles.md's table is not the suite's: run tests/oracle/run.py HALO --table")
        failed += 1
    print(f"{len(oracle.CASES)} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
