"""`triage.rerun`: the one way a case is rerun on named pipelines and judged.

Real pipelines (`ref`, the interpreter; `llvm-cpu-xor2or:O0`, real LLVM with the first `xor`
of the IR turned into `or`, `rgpu_fuzz/bench/seeded/miscompile.py`). Expected values are
worked out by hand from the kernel: `out[i] = a[i] ^ 5` with a = [1, 2, 3, 4] is
[4, 7, 6, 1]; with `|` instead it is [5, 7, 7, 5] (elements 0, 2, 3 differ)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from oracles import FindingKind, Signature, load_policy
from rgpu_fuzz.bench.seeded import plugin as seeded_plugin
from rgpu_fuzz.model.case import BufferArg, Case, Fill, Launch, Values
from rgpu_fuzz.model.outcome import Ok
from rgpu_fuzz.model.scalars import Scalar
from rgpu_fuzz.pipelines.registry import Registry
from triage.rerun import RerunError, make_pipelines, rerun

KERNEL = """use rgpu::*;

#[kernel]
pub fn k(a: &[u32], out: &mut [u32]) {
    let i: usize = thread_idx_x() as usize;
    out[i] = a[i] ^ 5u32;
}
"""
CASE = Case(entry="k", kernel=KERNEL, launch=Launch(grid=(1, 1, 1), block=(4, 1, 1)),
            args=(BufferArg(name="a", elem=Scalar.U32, len=4, init=Values((1, 2, 3, 4))),
                  BufferArg(name="out", elem=Scalar.U32, len=4, init=Fill(0))))
XOR2OR = "llvm-cpu-xor2or:O0"


def _recorded(path: Path) -> dict[str, tuple[Path, str]]:
    return {"llvm-cpu-xor2or": (path, hashlib.sha256(path.read_bytes()).hexdigest())}


def test_a_recorded_plugin_loads_when_its_content_is_the_recorded_one(tmp_path: Path) -> None:
    plugin = tmp_path / "miscompile.py"
    shutil.copy(seeded_plugin("miscompile.py"), plugin)
    pipelines = make_pipelines(Registry(), ["ref", XOR2OR], _recorded(plugin))
    got = rerun(CASE, pipelines, load_policy("default"))
    ref, bad = got.outcomes["ref"], got.outcomes[XOR2OR]
    assert isinstance(ref, Ok) and ref.outputs["out"].values.tolist() == [4, 7, 6, 1]
    assert isinstance(bad, Ok) and bad.outputs["out"].values.tolist() == [5, 7, 7, 5]
    (finding,) = got.verdict.findings
    assert finding.kind is FindingKind.WRONG_CODE and finding.differing_elements == 3
    assert got.finding(finding.signature) is finding and got.not_run == ""
    assert got.finding(Signature.parse(f"wrong-code|{XOR2OR}|ops=+")) is None


def test_a_plugin_changed_since_it_was_recorded_is_one_line_naming_the_option(
        tmp_path: Path) -> None:
    plugin = tmp_path / "miscompile.py"
    shutil.copy(seeded_plugin("miscompile.py"), plugin)
    recorded = _recorded(plugin)
    plugin.write_text(plugin.read_text() + "\n# edited\n")
    with pytest.raises(RerunError) as e:
        make_pipelines(Registry(), ["ref", XOR2OR], recorded)
    assert "\n" not in str(e.value) and f"--plugin {plugin}" in str(e.value)
    plugin.unlink()
    with pytest.raises(RerunError, match="gone: pass --plugin FILE"):
        make_pipelines(Registry(), ["ref", XOR2OR], recorded)


def test_an_unknown_pipeline_is_one_line() -> None:
    with pytest.raises(RerunError) as e:
        make_pipelines(Registry(), ["ref", "no-such-pipeline:O0"])
    assert "\n" not in str(e.value) and "no-such-pipeline" in str(e.value)


def test_given_outcomes_are_judged_and_not_run_again() -> None:
    """A probe hands the arbiter's outcome it already has: the pipeline of that label is not
    run again (the very object given is what is judged), and the verdict is the same as a
    full rerun's."""
    reg = Registry()
    reg.load_plugin(seeded_plugin("miscompile.py"))
    ref, bad = reg.create_all(["ref", XOR2OR])
    policy = load_policy("default")
    full = rerun(CASE, [ref, bad], policy)
    given = {"ref": full.outcomes["ref"]}
    again = rerun(CASE, [ref, bad], policy, given=given)
    assert again.outcomes["ref"] is given["ref"]
    assert [f.signature for f in again.verdict.findings] == \
        [f.signature for f in full.verdict.findings]
