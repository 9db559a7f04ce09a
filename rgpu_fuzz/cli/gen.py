"""Generate random, well-defined cases from a seed (reproducible on every machine).

Writes one case file per seed (`<id>.toml`) into --out, or prints the cases to stdout (one
case file each, after a `# ---- seed N` comment line when there are several). `--stats`
prints feature coverage over the generated set instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rgpu_fuzz import casefile

EXAMPLE = "rgpu-fuzz gen --seed 100 --count 50 --profile floats --out cases/ --stats"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--count", type=int, default=1, help="number of consecutive seeds")
    p.add_argument("--profile", default="default",
                   help="profile name (generators/profiles) or path to a profile TOML file")
    p.add_argument("--out", type=Path, help="directory for the case files (default: stdout)")
    p.add_argument("--stats", action="store_true", help="print feature coverage of the set")


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.generators import ProfileError, SeededChoices, generate, load_profile
    from rgpu_fuzz.generators.stats import case_coverage

    if args.count < 1:
        raise UserError("--count must be >= 1")
    try:
        profile = load_profile(args.profile)
    except ProfileError as e:
        raise UserError(str(e)) from None
    cases = []
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out {args.out}: not a folder")
    try:
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
        for seed in range(args.seed, args.seed + args.count):
            case = generate(SeededChoices(seed), profile, seed=seed)
            if args.stats:
                cases.append(case)
            if args.out is not None:
                casefile.save(case, args.out / f"{case.id}.toml")
            elif not args.stats:
                if args.count > 1:  # several cases on stdout: a comment line before each
                    sys.stdout.write(f"{'' if seed == args.seed else chr(10)}"
                                     f"# ---- seed {seed} ({seed - args.seed + 1} of "
                                     f"{args.count})\n")
                sys.stdout.write(casefile.dumps(case))
    except OSError as e:
        raise UserError(f"--out {args.out}: cannot write: {e.strerror or e}") from None
    if args.stats:
        print(case_coverage(cases).render())
    if args.out is not None:
        print(f"wrote {args.count} case{'s' if args.count != 1 else ''} to {args.out}",
              file=sys.stderr)
    return 0
