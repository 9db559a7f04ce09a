"""Generate random, well-defined cases from a seed (reproducible on every machine).

Writes one case file per seed (`<id>.toml`) into --out, or prints the cases to stdout (one
case file each, after a `# ---- seed N` comment line when there are several). `--stats`
prints coverage over the generated set instead: the operator/method/cast/type features of
one profile, and for one or several profiles (`--profile memory,calls` or `all`) each
language construct's share of kernels and the constructs never produced
(`generators/constructs.py`).
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
                   help="profile name (generators/profiles) or path to a profile TOML file; "
                        "with --stats also a comma-separated list or 'all'")
    p.add_argument("--out", type=Path, help="directory for the case files (default: stdout)")
    p.add_argument("--stats", action="store_true",
                   help="print feature and construct coverage of the set")


def _profile_list(arg: str) -> list[str]:
    """`all` (the shipped profiles, default first), a comma-separated list, or one name or
    path (a path may hold a comma: it is taken whole when it names a file)."""
    from generators import profile_names

    if arg == "all":
        return sorted(profile_names(), key=lambda n: (n != "default", n))
    if Path(arg).is_file():
        return [arg]
    return [p.strip() for p in arg.split(",") if p.strip()]


def _stats_only(args: argparse.Namespace, names: list[str]) -> int:
    """`--stats` over several profiles: the construct table, one column per profile."""
    from generators import ProfileError, SeededChoices, generate, load_profile
    from generators.constructs import construct_coverage, render_table
    from rgpu_fuzz.cli import UserError

    if args.out is not None:
        raise UserError("--out takes one profile; several profiles only with --stats")
    by_profile = {}
    for name in names:
        try:
            profile = load_profile(name)
        except ProfileError as e:
            raise UserError(str(e)) from None
        seeds = range(args.seed, args.seed + args.count)
        by_profile[profile.name] = construct_coverage(
            generate(SeededChoices(s), profile, seed=s) for s in seeds)
    print(render_table(by_profile))
    return 0


def execute(args: argparse.Namespace) -> int:
    from generators import ProfileError, SeededChoices, generate, load_profile
    from generators.constructs import construct_coverage, render_table
    from generators.stats import case_coverage
    from rgpu_fuzz.cli import UserError

    if args.count < 1:
        raise UserError("--count must be >= 1")
    names = _profile_list(args.profile)
    if not names:
        raise UserError(f"--profile {args.profile!r}: no profile named")
    if len(names) > 1:
        if not args.stats:
            raise UserError("several profiles only with --stats")
        return _stats_only(args, names)
    try:
        profile = load_profile(names[0])
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
        print()
        print(render_table({profile.name: construct_coverage(cases)}))
    if args.out is not None:
        print(f"wrote {args.count} case{'s' if args.count != 1 else ''} to {args.out}",
              file=sys.stderr)
    return 0
