"""Snapshot of everything the decoder produces for a set of code objects, to show a change
of the decoder's internals changes nothing it outputs: `python -m tests.sim.decode_snapshot
OUT_DIR [--seeds N]` writes, per target (gfx942, gfx90a, gfx1100), one line per instruction
of the conformance and corpus cases at O0 and O3 (plus generated seeds 0..N-1, even seeds
at O0, odd at O3): the LLVM-syntax rendering, the decoder's full `Instruction` (operands,
modifiers, raw fields, words) and the executor's `Inst` (`rgpu_fuzz.sim.isa.code.scan`, memo
on), and prints the count and a sha256 per target. The files hold one sha256 per code object
(`--full` writes the lines themselves: ~2 GB per target with 1,000 seeds); two trees
compare by `diff -r`.

Code objects come from `case_objects.build` (compiled once, cached on disk), so the
before and after trees decode the same bytes."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from generators import from_seed
from rgpu_fuzz import casefile
from rgpu_fuzz.codeobj import read_code_object
from rgpu_fuzz.sim.isa import decode_code_object, render
from rgpu_fuzz.sim.isa.code import clear_memo, scan
from tests.sim.case_objects import build

ROOT = Path(__file__).parents[2]
TARGETS = ("gfx942", "gfx90a", "gfx1100")


def _plan(target: str, seeds: int) -> list[tuple[str, str, int]]:
    files = sorted((ROOT / "tests" / "semantics" / "cases").glob("*.toml")) + sorted(
        (ROOT / "corpus").glob("*.toml"))
    plan = [(p.read_text(), target, opt) for opt in (0, 3) for p in files
            if not _llvm_crash(p.stem, target, opt)]
    plan += [(casefile.dumps(from_seed(s)), target, 3 * (s % 2)) for s in range(seeds)]
    return plan


def _llvm_crash(name: str, target: str, opt: int) -> bool:
    """A case LLVM cannot compile there (known.py): it would abort the build process."""
    from tests.conformance.known import known_failure

    known = known_failure(name, f"amdgpu-sim:{target}:O{opt}")
    return known is not None and known.observed.startswith("CompileCrash")


def _inst_line(i: object) -> str:
    fields = ("address", "size", "opcode", "encoding", "mnemonic", "operands", "mods",
              "halves", "share_key")
    return " ".join(f"{f}={getattr(i, f)!r}" for f in fields)


def snapshot(target: str, seeds: int, out: Path, full: bool = False) -> tuple[int, str]:
    paths = [p for p in build(_plan(target, seeds)) if isinstance(p, Path)]
    clear_memo()
    h = hashlib.sha256()
    n = 0
    with open(out / f"{target}.txt", "w", encoding="utf-8") as f:
        for path in paths:
            co = read_code_object(path.read_bytes())
            one = hashlib.sha256()
            decoded = decode_code_object(co)
            section = co.text
            base = section.addr if section is not None else 0
            executor = scan(co.text_bytes, target, base)
            for k, inst in enumerate(decoded):
                ex = executor[k]
                line = f"{render(inst)}\n  {inst!r}\n  {_inst_line(ex)} text={ex.text}\n"
                if full:
                    f.write(line)
                one.update(line.encode())
                n += 1
            assert len(executor) == len(decoded), path
            f.write(f"## {path.name} {len(decoded)} {one.hexdigest()}\n")
            h.update(one.digest())
    return n, h.hexdigest()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seeds", type=int, default=0)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for target in args.targets.split(","):
        n, digest = snapshot(target, args.seeds, args.out, args.full)
        print(f"{target}: {n} instructions sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
