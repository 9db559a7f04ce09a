"""Show what a kernel becomes on an AMD GPU: the LLVM IR (lowered and optimised), the
assembly, the linked code object, every kernel-descriptor field by its AMDGPUUsage name, the
NT_AMDGPU_METADATA note, the kernarg layout (with the case's own argument bytes) and the
loader checks (`codeobj-invalid:<rule>`).

CASE is a case file or a case id (prefix) from the corpus or the findings store. With
`--code-object FILE` an existing code object (`.o` or `.hsaco`, ours or anyone's) is read
instead. `--out DIR` writes `<entry>.ll`, `<entry>.opt.ll`, `<entry>.s`, `<entry>.o`,
`<entry>.hsaco` and `<entry>.json`.

Exit status: 0, or 1 when the case does not compile (the outcome is printed) or the code
object breaks a loader rule; 2 for a bad argument or an unreadable code object.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu_fuzz.targets import PIPELINE_TARGETS

EXAMPLE = "rgpu-fuzz inspect corpus/254dd5a67c19.toml --target gfx90a --opt O3 --out /tmp/k"
TARGETS = PIPELINE_TARGETS
_WIDTH = 78


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", nargs="?", help="case file or case id (prefix)")
    p.add_argument("--target", default="gfx942", choices=TARGETS, help="AMDGPU processor")
    p.add_argument("--opt", default="O2", choices=("O0", "O1", "O2", "O3"),
                   help="optimisation level")
    p.add_argument("--llc", metavar="PATH", help="code generation by this external llc")
    p.add_argument("--code-object", type=Path, metavar="FILE",
                   help="read this code object (.o or .hsaco) instead of compiling a case")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument("--out", type=Path, metavar="DIR", help="write .ll .s .o .hsaco .json here")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds for the compilation")


@dataclass(frozen=True)
class BuildJob:
    """The worker's job: compile `case_toml` for `cpu` at `opt_level`."""

    case_toml: str
    cpu: str
    opt_level: int
    llc: str | None


def build(job: BuildJob) -> Any:
    """In the worker: `gpu_build.build_gpu` (LLVM may abort; the worker absorbs it)."""
    from rgpu_fuzz import casefile
    from rgpu_fuzz.pipelines.gpu_build import build_gpu, gpu_target
    from rgpu_fuzz.pipelines.toolchain import Llc

    return build_gpu(casefile.loads(job.case_toml), gpu_target(job.cpu), job.opt_level,
                     llc=None if job.llc is None else Llc(job.llc))


def _locate(text: str) -> Any:
    from rgpu_fuzz import casefile
    from rgpu_fuzz.cli import UserError
    from triage.lookup import find_case
    from triage.store import IdLookupError, StoreError

    try:
        return find_case(text)[0]
    except (IdLookupError, StoreError, casefile.CaseError) as e:
        raise UserError(str(e)) from None


def _read_code_object(path: Path) -> tuple[bytes, Any]:
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.codeobj import CodeObjectError, read_code_object

    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserError(f"{path}: {e.strerror or e}") from None
    try:
        return data, read_code_object(data)
    except CodeObjectError as e:
        raise UserError(f"{path}: {e}") from None


def _case_arguments(case: Any, build_result: Any, kernel: Any) -> list[dict[str, Any]]:
    """The case's explicit kernarg bytes packed by the metadata, buffers at stand-in
    addresses 0x1000·(i+1) and the trap record at 0xF000 (a real executor puts its own);
    a signature that does not fit the metadata shows as `kernarg-mismatch`."""
    from rgpu_fuzz.codeobj import KernargSegment, kernel_arguments, pack_launch
    from rgpu_fuzz.model.kernel_abi import ArgumentValues

    values = ArgumentValues.of(case, build_result.params)
    names = sorted(values.buffers)
    words = values.words(lambda name: 0x1000 * (names.index(name) + 1))
    packed = pack_launch(kernel, kernel_arguments(build_result.flat_args, words, 0xF000),
                         case.launch)
    if not isinstance(packed, KernargSegment):
        return [{"error": packed.signature, "detail": packed.log}]
    return [{"offset": s.offset, "size": s.size, "value_kind": s.value_kind,
             "name": s.name, "bytes": s.data.hex()} for s in packed.slots]


def _section(title: str) -> str:
    return f"\n== {title} " + "=" * max(0, _WIDTH - len(title) - 4)


def render(doc: dict[str, Any]) -> str:
    """The text form of `inspect`'s document."""
    out: list[str] = []
    for key, title in (("llvm_ir", "LLVM IR (lowered)"), ("llvm_ir_opt", "LLVM IR (optimised)"),
                       ("assembly", "assembly")):
        if key in doc:
            out += [_section(title), doc[key].rstrip()]
    co = doc["code_object"]
    out.append(_section("code object"))
    out.append(f"target {co['target_id']}  code object v{co['code_object_version']}  "
               f"{co['elf_type']}  e_flags {co['e_flags']:#x}  amdhsa.target "
               f"{co['amdhsa_target']}  amdhsa.version {co['amdhsa_version']}")
    out.append(f"{'section':<22} {'type':<14} {'addr':>10} {'offset':>8} {'size':>8}")
    for s in co["sections"]:
        out.append(f"{s['name']:<22} {s['type'].removeprefix('SHT_'):<14} {s['addr']:>#10x} "
                   f"{s['offset']:>#8x} {s['size']:>8}")
    for s in co["dynamic_symbols"]:
        out.append(f"dynsym {s['name']:<30} {s['value']:#x} size {s['size']} {s['type']}")
    for r in co["relocations"]:
        out.append(f"reloc {r['section']} +{r['offset']:#x} {r['type']} {r['symbol']}"
                   f"{r['addend']:+d}")
    for k in co["kernels"]:
        out.append(_section(f"kernel descriptor {k['descriptor_symbol']['name']}"))
        for key, value in k["descriptor"].items():
            if isinstance(value, dict):
                out.append(f"{key}:")
                out += [f"  {name:<48} {v}" for name, v in value.items()]
            else:
                out.append(f"{key:<50} {value}")
        d = k["descriptor_derived"]
        out.append("derived: " + ", ".join(f"{n}={v}" for n, v in d.items()
                                           if n != "user_sgprs"))
        out.append("user SGPRs: " + ", ".join(
            f"s[{u['first']}:{u['first'] + u['count'] - 1}] {u['name']}"
            for u in d["user_sgprs"]))
        out.append(_section(f"metadata {k['name']}"))
        for key, value in k["metadata"].items():
            if key != "args":
                out.append(f".{key:<32} {value}")
        out.append(_section(f"kernarg layout {k['name']}"))
        out.append(f"{'offset':>6} {'size':>4}  {'value_kind':<28} name")
        for row in k["kernarg_layout"]:
            out.append(f"{row['offset']:>6} {row['size']:>4}  {row['value_kind']:<28} "
                       f"{row.get('name', '')}")
        for row in k.get("case_arguments", []):
            if "error" in row:
                out.append(f"case arguments: {row['error']}: {row['detail']}")
            else:
                out.append(f"  case {row['name'] or row['value_kind']:<24} @{row['offset']:<4} "
                           f"{row['bytes']}")
    out.append(_section("loader checks"))
    out += [f"codeobj-invalid:{v['rule']}: {v['kernel'] or ''} {v['detail']}"
            for v in co["violations"]] or ["ok"]
    return "\n".join(out).lstrip("\n") + "\n"


def _write(out_dir: Path, stem: str, files: dict[str, str | bytes], doc: dict[str, Any]) -> None:
    from rgpu_fuzz.cli import UserError

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for suffix, content in files.items():
            path = out_dir / f"{stem}{suffix}"
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        (out_dir / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    except OSError as e:
        raise UserError(f"{out_dir}: {e.strerror or e}") from None


def _emit(args: argparse.Namespace, doc: dict[str, Any]) -> None:
    text = json.dumps(doc, indent=1) + "\n" if args.json else render(doc)
    sys.stdout.write(text)


def _inspect_file(args: argparse.Namespace) -> int:
    from rgpu_fuzz.codeobj import describe_code_object

    data, co = _read_code_object(args.code_object)
    doc = {"code_object": describe_code_object(co)}
    if args.out is not None:
        suffix = ".o" if co.elf.is_relocatable else ".hsaco"
        _write(args.out, args.code_object.stem, {suffix: data}, doc)
    _emit(args, doc)
    return 1 if doc["code_object"]["violations"] else 0


def execute(args: argparse.Namespace) -> int:
    from rgpu_fuzz import casefile
    from rgpu_fuzz.cli import UserError
    from rgpu_fuzz.codeobj import LinkFailure, describe_code_object, link, read_code_object
    from rgpu_fuzz.model.outcome import detail
    from rgpu_fuzz.pipelines.gpu_build import GpuBuild
    from rgpu_fuzz.pipelines.stages import describe_failure
    from rgpu_fuzz.pipelines.workers import Done, call_in_worker

    if args.code_object is not None:
        if args.case is not None:
            raise UserError("give a CASE or --code-object FILE, not both")
        return _inspect_file(args)
    if args.case is None:
        raise UserError("give a CASE (file or id) or --code-object FILE")
    if args.llc is not None and not Path(args.llc).is_file():
        raise UserError(f"--llc {args.llc}: no such file")
    case = _locate(args.case)
    job = BuildJob(casefile.dumps(case), args.target, int(args.opt[1]), args.llc)
    result = call_in_worker("rgpu_fuzz.cli.inspect:build", job, timeout=args.timeout)
    if not isinstance(result, Done):
        print(f"inspect: {describe_failure(result, 'inspect')}", file=sys.stderr)
        return 1
    built = result.value
    if not isinstance(built, GpuBuild):
        print(f"inspect: {built.status}: {detail(built)}", file=sys.stderr)
        return 1
    linked = link(built.object)
    if isinstance(linked, LinkFailure):
        print(f"inspect: link failed ({linked.ended_by}): {linked.first_line}",
              file=sys.stderr)
        return 1
    co = read_code_object(linked)  # ours: a CodeObjectError here is a bug, not user input
    doc: dict[str, Any] = {"case": case.id, "entry": case.entry, "target": args.target,
                           "opt": args.opt, "llc": args.llc, "llvm_ir": built.ir,
                           "llvm_ir_opt": built.ir_opt, "assembly": built.asm,
                           "code_object": describe_code_object(co)}
    for k, kd in zip(doc["code_object"]["kernels"], co.kernels, strict=True):
        if kd.name == built.kernel:
            k["case_arguments"] = _case_arguments(case, built, kd)
    if args.out is not None:
        _write(args.out, case.entry, {".ll": built.ir, ".opt.ll": built.ir_opt,
                                      ".s": built.asm, ".o": built.object, ".hsaco": linked},
               doc)
    _emit(args, doc)
    return 1 if doc["code_object"]["violations"] else 0
