"""`rgpu-fuzz inspect`: a corpus case through our amdgcn lowering, shown whole; an existing
code object read as it is; bad input as one line and exit 2. Independent expectations: the
`.amdhsa_*` directives LLVM's own assembly printer writes for the kernel (the assembly
`inspect` shows) against the descriptor decoded from the linked object's bytes."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from rgpu_fuzz.cli import main
from rgpu_fuzz.codeobj import FIELDS, read_code_object
from tests.amdgcn_objects import Built, build_all

ROOT = Path(__file__).resolve().parents[2]
CASE = sorted((ROOT / "corpus").glob("*.toml"))[0]


@pytest.fixture(scope="module")
def inspected(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("inspect")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["inspect", str(CASE), "--target", "gfx90a", "--opt", "O3", "--json",
                   "--out", str(out)])
    assert rc == 0
    return json.loads(buf.getvalue()), out


def test_json_document(inspected: tuple[dict, Path]) -> None:
    doc, _ = inspected
    co = doc["code_object"]
    assert co["target"] == "gfx90a" and co["amdhsa_target"] == "amdgcn-amd-amdhsa--gfx90a"
    assert co["code_object_version"] == 5 and co["violations"] == []
    (kernel,) = co["kernels"]
    assert kernel["name"] == doc["entry"]
    names = {(reg, n) for reg, fields in kernel["descriptor"].items()
             if isinstance(fields, dict) for n in fields}
    assert names == {(f.register.value, f.name) for f in FIELDS if "gfx90a" in
                     {g.value for g in f.generations}}
    layout = kernel["kernarg_layout"]
    assert layout[0]["offset"] == 0
    assert all(a["offset"] + a["size"] == b["offset"] for a, b in itertools.pairwise(layout))
    assert layout[-1]["offset"] + layout[-1]["size"] == \
        kernel["metadata"]["kernarg_segment_size"]
    assert [a["name"] for a in kernel["case_arguments"] if a["value_kind"] in
            ("global_buffer", "by_value")][-1] == "rgpu.trap"


def test_descriptor_equals_llvm_assembly_directives(inspected: tuple[dict, Path]) -> None:
    doc, _ = inspected
    block = doc["assembly"].split(f".amdhsa_kernel {doc['entry']}", 1)[1]
    block = block.split(".end_amdhsa_kernel", 1)[0]
    printed = {m.group(1): int(m.group(2))
               for m in re.finditer(r"(\.amdhsa_\w+) (\d+)", block)}
    kernel = doc["code_object"]["kernels"][0]
    kd = kernel["descriptor"]
    by_directive = {d: kd[f.register.value][f.name] for f in FIELDS
                    for d in f.directives if f.name in kd.get(f.register.value, {})}
    by_directive[".amdhsa_group_segment_fixed_size"] = kd["GROUP_SEGMENT_FIXED_SIZE"]
    by_directive[".amdhsa_private_segment_fixed_size"] = kd["PRIVATE_SEGMENT_FIXED_SIZE"]
    by_directive[".amdhsa_kernarg_size"] = kd["KERNARG_SIZE"]
    by_directive[".amdhsa_accum_offset"] = kernel["descriptor_derived"]["accum_offset"]
    compared = set(printed) & set(by_directive)
    assert len(compared) >= 25
    assert {d: printed[d] for d in compared} == {d: by_directive[d] for d in compared}


def test_out_dir_files(inspected: tuple[dict, Path]) -> None:
    doc, out = inspected
    stem = doc["entry"]
    files = {p.name for p in out.iterdir()}
    assert files == {f"{stem}{s}" for s in (".ll", ".opt.ll", ".s", ".o", ".hsaco", ".json")}
    assert (out / f"{stem}.ll").read_text() == doc["llvm_ir"]
    obj = read_code_object((out / f"{stem}.o").read_bytes())
    hsaco = read_code_object((out / f"{stem}.hsaco").read_bytes())
    assert obj.elf.is_relocatable and not hsaco.elf.is_relocatable
    assert json.loads((out / f"{stem}.json").read_text()) == doc


def test_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(CASE), "--target", "gfx1100", "--opt", "O0"]) == 0
    text = capsys.readouterr().out
    for heading in ("LLVM IR (lowered)", "LLVM IR (optimised)", "assembly", "code object",
                    "kernel descriptor", "metadata", "kernarg layout", "loader checks"):
        assert f"== {heading}" in text
    assert "ENABLE_WAVEFRONT_SIZE32" in text and "WGP_MODE" in text


def test_code_object_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    built = next(b for b in build_all() if isinstance(b, Built) and b.name == "multi")
    path = tmp_path / "multi.hsaco"
    path.write_bytes(built.hsaco)
    assert main(["inspect", "--code-object", str(path)]) == 0
    text = capsys.readouterr().out
    assert "kernel descriptor first.kd" in text and "kernel descriptor second.kd" in text


@pytest.mark.parametrize(("argv", "fragment"), [
    (["inspect", "--code-object", "{bad}"], "not an ELF file"),
    (["inspect", "--code-object", "{trunc}"], "multi.hsaco"),
    (["inspect", "--code-object", "{missing}"], "No such file"),
    (["inspect", "ffffffffffff"], "ffffffffffff"),
    (["inspect"], "give a CASE"),
    (["inspect", str(CASE), "--code-object", "{bad}"], "not both"),
])
def test_bad_input_is_one_line(argv: list[str], fragment: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.hsaco"
    bad.write_bytes(b"\0" * 100)
    trunc = tmp_path / "multi.hsaco"
    built = next(b for b in build_all() if isinstance(b, Built) and b.name == "multi")
    trunc.write_bytes(built.hsaco[:700])
    argv = [a.format(bad=bad, trunc=trunc, missing=tmp_path / "nope.o") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and fragment in err
