"""Input past a documented limit (docs/language.md "Limits") is refused up front with one
line and exit 2, before any stage spends its time or memory on it.

Before these limits, each input here was a traceback (MemoryError, RecursionError, "worker
raised") or ran for minutes; the sizes are the ones the issue reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu_fuzz import casefile
from rgpu_fuzz.casefile import CaseError
from rgpu_fuzz.cli import main
from rgpu_fuzz.lang import limits
from rgpu_fuzz.lang.checker import check_source
from rgpu_fuzz.lang.source import DiagnosticError

KERNEL = """use rgpu::*;
{items}
#[kernel]
pub fn k(out: &mut [u32]) {{
{body}
    out[0] = 1u32;
}}
"""


def case_text(items: str = "", body: str = "", grid: str = "[1, 1, 1]",
              block: str = "[1, 1, 1]", args: str = 'name = "out"\nbuffer = "u32"\nlen = 4\n'
              ) -> str:
    kernel = KERNEL.format(items=items, body=body)
    return (f'format = "rgpu-case/1"\nentry = "k"\nkernel = \'\'\'\n{kernel}\'\'\'\n'
            f"[launch]\ngrid = {grid}\nblock = {block}\n[[args]]\n{args}")


def run_cli(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> str:
    """`run` on `text` as a case file: exit 2 and exactly one line on stderr, returned."""
    path = tmp_path / "c.toml"
    path.write_text(text)
    assert main(["run", str(path), "--pipelines", "ref"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def diagnostics(text: str) -> list[str]:
    with pytest.raises(DiagnosticError) as e:
        check_source(text, "k.rs")
    return [d.headline() for d in e.value.diagnostics]


def test_local_array_of_a_billion_elements(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    body = "    let a: [u32; 1000000000] = [0u32; 1000000000];\n    out[1] = a[7];"
    heads = diagnostics(KERNEL.format(items="", body=body))
    assert heads == [
        'k.rs:5:18: error: local array of 1000000000 elements; the limit is 4096 '
        '(docs/language.md "Limits")',
        'k.rs:5:39: error: local array of 1000000000 elements; the limit is 4096 '
        '(docs/language.md "Limits")']
    err = run_cli(tmp_path, case_text(body=body), capsys)
    # the kernel text starts on line 4 of the case file: its line 5 is the file's line 8
    assert "c.toml:8:18: local array of 1000000000 elements" in err
    assert "(and 1 more error)" in err


def test_local_array_at_the_limit_is_accepted() -> None:
    n = limits.MAX_LOCAL_ARRAY_LEN
    check_source(KERNEL.format(items="", body=f"    let a: [u8; {n}] = [0u8; {n}];"), "k.rs")


def test_huge_shared_array(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = "#[shared]\nstatic mut T: [u64; 100000000] = [0u64; 100000000];"
    assert diagnostics(KERNEL.format(items=items, body="")) == [
        'k.rs:2:1: error: `#[shared]` statics take 800000000 bytes up to here; the limit is '
        '65536 (docs/language.md "Limits")']
    run_cli(tmp_path, case_text(items=items), capsys)


def test_shared_statics_are_limited_together() -> None:
    # 65536 bytes is the LDS of one work-group on gfx942 (AMDGPUUsage, "Memory Spaces"):
    # 8192 u32 (32768 bytes) fit twice, not three times
    one = "#[shared]\nstatic mut {n}: [u32; 8192] = [0u32; 8192];\n"
    check_source(KERNEL.format(items=one.format(n="A") + one.format(n="B"), body=""), "k.rs")
    heads = diagnostics(KERNEL.format(items="".join(one.format(n=n) for n in "ABC"), body=""))
    assert heads == ['k.rs:6:1: error: `#[shared]` statics take 98304 bytes up to here; '
                     'the limit is 65536 (docs/language.md "Limits")']


def test_a_billion_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = run_cli(tmp_path, case_text(grid="[1000000000, 1, 1]"), capsys)
    assert err.endswith("c.toml: launch.grid: 1000000000 threads in the launch (grid x block); "
                        f"at most {1 << 22} (docs/language.md \"Limits\")\n")


def test_launch_threads_count_grid_times_block() -> None:
    # 2048 x 2 blocks of 512 x 2 threads are 1 << 22 threads, at the limit; one more is past
    casefile.loads(case_text(grid="[2048, 2, 1]", block="[512, 2, 1]"))
    with pytest.raises(CaseError, match="4196352 threads in the launch"):
        casefile.loads(case_text(grid="[2049, 2, 1]", block="[512, 1, 2]"))


def test_buffers_are_limited_together() -> None:
    big = 'name = "{n}"\nbuffer = "u64"\nlen = 16777216\n'
    text = case_text(args=big.format(n="out") + "[[args]]\n" + big.format(n="b")
                     + "[[args]]\n" + big.format(n="c"))
    with pytest.raises(CaseError) as e:
        casefile.loads(text, "c.toml")
    assert str(e.value) == ('c.toml: args: buffers take 402653184 bytes together; at most '
                            '268435456 (docs/language.md "Limits")')


def test_toml_nested_100000_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = case_text() + "[extra]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n"
    err = run_cli(tmp_path, text, capsys)
    line = text[:text.index("x = [")].count("\n") + 1
    assert err.endswith(f"c.toml:{line}:{5 + limits.MAX_TOML_NESTING}: arrays or tables "
                        "nested more than 32 deep (docs/language.md \"Limits\")\n")


def test_brackets_inside_toml_strings_do_not_count() -> None:
    deep = "a[" * 40 + "0" + "]" * 40
    for quoted in (f'"{deep}"', f"'{deep}'", f'"""\n{deep}\n"""', f"'''\n{deep}\n'''",
                   f'"\\"{deep}"'):
        casefile.loads(case_text() + f"[extra]\nx = {quoted} # [[[[\n")


def test_50_megabyte_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = KERNEL.format(items="", body="    out[0] = out[0] + 1u32;\n" * 2_000_000)
    assert len(text) > 50_000_000
    assert diagnostics(text) == [f'k.rs:1:1: error: kernel source is {len(text)} bytes; the '
                                 f'limit is 262144 (docs/language.md "Limits")']
    rs = tmp_path / "k.rs"
    rs.write_text(text)
    assert main(["check", str(rs)]) == 1
    capsys.readouterr()
    # as a case the file itself is past its limit, refused before TOML parsing
    err = run_cli(tmp_path, case_text(body="    out[0] = out[0] + 1u32;\n" * 2_000_000), capsys)
    assert "at most 16777216" in err


def test_kernel_past_the_source_limit_inside_a_case(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    body = "    out[0] = out[0] + 1u32;\n" * 20_000  # 560 kB: under the case limit
    err = run_cli(tmp_path, case_text(body=body), capsys)
    assert "kernel source is" in err and "the limit is 262144" in err


def test_diagnostics_of_a_large_file_render_each_with_its_own_line() -> None:
    """Rendering finds each diagnostic's line from its offset (it used to split the whole
    text per diagnostic: quadratic in the number of errors)."""
    text = "use rgpu::*;\n" + "".join(f"@{i}\n" for i in range(3000))
    with pytest.raises(DiagnosticError) as e:
        check_source(text, "k.rs")
    ds = e.value.diagnostics
    assert len(ds) == 3000
    assert ds[2999].render().split("\n")[2] == "3001 | @2999"


def test_deep_nesting_in_a_case_is_a_user_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    body = "    out[1] = " + "(" * 500 + "1u32" + ")" * 500 + ";"
    err = run_cli(tmp_path, case_text(body=body), capsys)
    assert "nested too deeply (more than 128 levels)" in err
