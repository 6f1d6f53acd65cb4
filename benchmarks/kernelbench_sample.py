"""A fixed sample of KernelBench by a rule, not a hand pick: every K-th file of each level in name order, from
an offset, copied unchanged into DST/levelN/ (a suite `kerntailor bench` takes).

    python benchmarks/kernelbench_sample.py ../shared/kernelbench .kb-sample --every 4 --offset 0

The device machine does not get ../shared: copy the sample into an ignored folder of the checkout and carry it.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def sample(src: Path, every: int, offset: int) -> list[Path]:
    """The files of the sample: per level folder, sorted by name, those at index offset, offset + every, ..."""
    chosen = []
    for level in sorted(p for p in src.iterdir() if p.is_dir() and p.name.startswith("level")):
        files = sorted(level.glob("*.py"))
        chosen += files[offset % every::every]
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--levels", nargs="*", default=None, help="only these level folders (level1 level2)")
    args = parser.parse_args()
    for path in sample(args.src, args.every, args.offset):
        if args.levels and path.parent.name not in args.levels:
            continue
        (args.dst / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, args.dst / path.parent.name / path.name)
        print(path.parent.name + "/" + path.name)


if __name__ == "__main__":
    main()
