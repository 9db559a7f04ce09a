"""Read, validate and write `rgpu-case/1` TOML files (README "Cases").

This is the one boundary where case files are parsed: everything past it sees a `Case`.
Every validation error names its file and field (`case.toml: args[2].len: must be > 0`);
a TOML syntax error gives `file:line:col`.
"""

from __future__ import annotations

import math
import re
import struct
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu_fuzz.lang.ast import Fn, Param, ScalarType, SliceType
from rgpu_fuzz.lang.checker import CheckedModule, check_source
from rgpu_fuzz.lang.limits import (
    MAX_BUFFER_BYTES,
    MAX_BUFFER_LEN,
    MAX_CASE_BYTES,
    MAX_LAUNCH_THREADS,
    MAX_THREADS_PER_BLOCK,
    MAX_TOML_NESTING,
)
from rgpu_fuzz.lang.source import DiagnosticError
from rgpu_fuzz.model.case import (
    FORMAT,
    Arg,
    BufferArg,
    Case,
    Dist,
    Expect,
    ExpectStatus,
    Fill,
    Init,
    Launch,
    Provenance,
    Random,
    ScalarArg,
    Values,
)
from rgpu_fuzz.model.errors import RgpuError
from rgpu_fuzz.model.scalars import Scalar

_LIMITS = 'docs/language.md "Limits"'


@dataclass(eq=False)
class CaseError(RgpuError):
    """A case file that is not a valid `rgpu-case/1` case. `str()` is the one line users see."""

    where: str
    message: str

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        # one line, whatever the file held (a field name or value can span lines)
        return text.replace("\r", "\\r").replace("\n", "\\n")


def _shown(value: object, limit: int = 40) -> str:
    """A value from the file as an error message quotes it: escaped, and cut at `limit`."""
    text = str(value)
    cut = text[:limit] + "..." if len(text) > limit else text
    return cut.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# ---------------------------------------------------------------- values <-> bit patterns


def _value_bits(raw: Any, ty: Scalar, where: str) -> int:
    """One TOML value as the bit pattern of `ty`. Bit-pattern strings (`"0x7fc00000"`) are
    accepted for every type; decimal floats for f32 and f16 are rounded through f64 (use a bit
    pattern when the exact value matters)."""
    if isinstance(raw, str):
        if not re.fullmatch(r"0[xX][0-9a-fA-F_]+|0[bB][01_]+", raw):
            raise CaseError(where, f"expected a {ty} value or a bit pattern like \"0x1f\", "
                                   f"found \"{_shown(raw)}\"")
        bits = int(raw.replace("_", ""), 0)
        width = 1 if ty is Scalar.BOOL else ty.bits
        if bits >= 1 << width:
            raise CaseError(where, f"bit pattern {raw} is wider than {ty}")
        return bits
    if ty is Scalar.BOOL:
        if isinstance(raw, bool) or raw in (0, 1):
            return int(raw)
        raise CaseError(where, f"expected a bool, found {raw!r}")
    if isinstance(raw, bool):
        raise CaseError(where, f"expected a {ty} value, found {str(raw).lower()}")
    if ty.is_int:
        if not isinstance(raw, int):
            raise CaseError(where, f"expected an integer for {ty}, found {raw!r}")
        if not ty.min_value <= raw <= ty.max_value:
            raise CaseError(where, f"{raw} is out of range for {ty} "
                                   f"({ty.min_value}..={ty.max_value})")
        return raw & ((1 << ty.bits) - 1)
    if not isinstance(raw, int | float):
        raise CaseError(where, f"expected a number for {ty}, found {raw!r}")
    value = float(raw)
    if ty is Scalar.F32:
        if math.isfinite(value) and abs(value) > 3.4028235677973366e38:
            raise CaseError(where, f"{raw} overflows f32 (write inf or a bit pattern)")
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if ty is Scalar.F16:
        if math.isfinite(value) and abs(value) >= 65520.0:
            raise CaseError(where, f"{raw} overflows f16 (write inf or a bit pattern)")
        return struct.unpack("<H", struct.pack("<e", value))[0]
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _bits_value(bits: int, ty: Scalar) -> Any:
    """The TOML spelling of a bit pattern: a plain number when it reads back to the same
    bits, otherwise a hex string (NaN payloads, and anything that would not round-trip)."""
    if ty is Scalar.BOOL:
        return bool(bits)
    if ty.is_int:
        return bits - (1 << ty.bits) if ty.is_signed and bits >> (ty.bits - 1) else bits
    width = ty.bits // 4
    if ty is Scalar.F32:
        value = float(struct.unpack("<f", struct.pack("<I", bits))[0])
    elif ty is Scalar.F16:
        value = float(struct.unpack("<e", struct.pack("<H", bits))[0])
    else:
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if math.isnan(value):
        return f"0x{bits:0{width}x}"
    if _value_bits(value, ty, "") == bits:
        return value
    return f"0x{bits:0{width}x}"


# ---------------------------------------------------------------- reading


def _get(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str,
         required: bool = True, default: Any = None) -> Any:
    if key not in table:
        if required:
            raise CaseError(where, f"missing field `{key}`")
        return default
    value = table[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise CaseError(f"{where}.{key}" if where else key,
                        f"expected {_toml_kind(names)}, found {type(value).__name__}")
    return value


def _toml_kind(py: str) -> str:
    return {"str": "a string", "int": "an integer", "list": "an array", "dict": "a table",
            "bool": "a boolean"}.get(py, py)


def _scalar(name: Any, where: str) -> Scalar:
    try:
        return Scalar(name)
    except ValueError:
        raise CaseError(where, f"unknown type \"{_shown(name)}\" (one of "
                               f"{', '.join(s.value for s in Scalar)})") from None


def _dims(raw: Any, where: str) -> tuple[int, int, int]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= 3 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in raw):
        raise CaseError(where, "expected 1 to 3 integers, e.g. [4, 1, 1]")
    if any(v < 1 for v in raw):
        raise CaseError(where, "every dimension must be >= 1")
    dims = [*raw, 1, 1][:3]
    return dims[0], dims[1], dims[2]


def _init(raw: Any, elem: Scalar, length: int, where: str) -> Init:
    if not isinstance(raw, dict):
        raise CaseError(where, "expected a table: { fill = 0 }, { values = [...] } or "
                               "{ random = SEED, dist = \"uniform\" | \"edges\" }")
    keys = set(raw) - {"dist"}
    if len(keys) != 1 or keys - {"fill", "values", "random"}:
        raise CaseError(where, "expected exactly one of `fill`, `values`, `random`")
    if "fill" in raw:
        return Fill(_value_bits(raw["fill"], elem, f"{where}.fill"))
    if "values" in raw:
        vals = raw["values"]
        if not isinstance(vals, list):
            raise CaseError(f"{where}.values", "expected an array")
        if len(vals) != length:
            raise CaseError(f"{where}.values", f"has {len(vals)} values but len is {length}")
        return Values(tuple(_value_bits(v, elem, f"{where}.values[{i}]")
                            for i, v in enumerate(vals)))
    seed = raw["random"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise CaseError(f"{where}.random", "expected a non-negative integer seed")
    dist_name = raw.get("dist", "uniform")
    try:
        dist = Dist(dist_name)
    except ValueError:
        raise CaseError(f"{where}.dist", f"unknown distribution \"{_shown(dist_name)}\" "
                                         "(uniform or edges)") from None
    return Random(seed, dist)


def _arg(raw: Any, i: int) -> Arg:
    where = f"args[{i}]"
    if not isinstance(raw, dict):
        raise CaseError(where, "expected a table")
    name = _get(raw, "name", str, where)
    if "buffer" in raw and "scalar" in raw:
        raise CaseError(where, "has both `buffer` and `scalar`")
    if "buffer" in raw:
        elem = _scalar(raw["buffer"], f"{where}.buffer")
        length = _get(raw, "len", int, where)
        if not 0 < length <= MAX_BUFFER_LEN:
            raise CaseError(f"{where}.len", f"must be > 0 and <= {MAX_BUFFER_LEN} ({_LIMITS})")
        init = _init(raw.get("init", {"fill": 0}), elem, length, f"{where}.init")
        return BufferArg(name=name, elem=elem, len=length, init=init)
    if "scalar" in raw:
        ty = _scalar(raw["scalar"], f"{where}.scalar")
        if "value" not in raw:
            raise CaseError(where, "missing field `value`")
        return ScalarArg(name=name, ty=ty, bits=_value_bits(raw["value"], ty, f"{where}.value"))
    raise CaseError(where, "needs `buffer = \"T\"` or `scalar = \"T\"`")


def case_from_dict(doc: Mapping[str, Any]) -> Case:
    """Validate a parsed TOML document and build the Case."""
    fmt = _get(doc, "format", str, "")
    if fmt != FORMAT:
        raise CaseError("format", f"expected \"{FORMAT}\", found \"{_shown(fmt)}\"")
    entry = _get(doc, "entry", str, "")
    kernel = _get(doc, "kernel", str, "")
    launch_raw = _get(doc, "launch", dict, "")
    launch = Launch(grid=_dims(launch_raw.get("grid", [1]), "launch.grid"),
                    block=_dims(launch_raw.get("block", [1]), "launch.block"))
    if launch.threads_per_block > MAX_THREADS_PER_BLOCK:
        raise CaseError("launch.block", f"{launch.threads_per_block} threads per block; "
                                        f"at most {MAX_THREADS_PER_BLOCK}")
    if (threads := launch.blocks * launch.threads_per_block) > MAX_LAUNCH_THREADS:
        raise CaseError("launch.grid", f"{threads} threads in the launch (grid x block); "
                                       f"at most {MAX_LAUNCH_THREADS} ({_LIMITS})")
    args_raw = _get(doc, "args", list, "", required=False, default=[])
    args = tuple(_arg(a, i) for i, a in enumerate(args_raw))
    buffer_bytes = sum(a.len * max(1, a.elem.bits // 8) for a in args
                       if isinstance(a, BufferArg))
    if buffer_bytes > MAX_BUFFER_BYTES:
        raise CaseError("args", f"buffers take {buffer_bytes} bytes together; at most "
                                f"{MAX_BUFFER_BYTES} ({_LIMITS})")
    seen: set[str] = set()
    for i, a in enumerate(args):
        if a.name in seen:
            raise CaseError(f"args[{i}].name", f"duplicate argument `{a.name}`")
        seen.add(a.name)
    expect = None
    if "expect" in doc:
        e = _get(doc, "expect", dict, "")
        try:
            status = ExpectStatus(e.get("status", "agree"))
        except ValueError:
            raise CaseError("expect.status", "expected \"agree\" or \"known-divergence\"") from None
        pipes = tuple(_get(e, "pipelines", list, "expect", required=False, default=[]))
        if status is ExpectStatus.KNOWN_DIVERGENCE and not pipes:
            raise CaseError("expect.pipelines", "a known divergence must name its pipelines")
        expect = Expect(status=status, pipelines=pipes,
                        issue=_get(e, "issue", str, "expect", required=False, default=""))
    prov_raw = _get(doc, "provenance", dict, "", required=False, default={})
    provenance = Provenance(
        generator=_get(prov_raw, "generator", str, "provenance", required=False, default=""),
        seed=_get(prov_raw, "seed", int, "provenance", required=False, default=None),
        profile=_get(prov_raw, "profile", str, "provenance", required=False, default=""),
        parent=_get(prov_raw, "parent", str, "provenance", required=False, default=""),
    )
    pipelines = tuple(_get(doc, "pipelines", list, "", required=False, default=[]))
    case = Case(entry=entry, kernel=kernel, launch=launch, args=args, expect=expect,
                provenance=provenance, pipelines=pipelines)
    if "id" in doc and doc["id"] != case.id:
        raise CaseError("id", f"\"{doc['id']}\" does not match the content (its id is "
                              f"\"{case.id}\"); fix or delete the field")
    return case


_TOML_POS = re.compile(r"^(?P<msg>.*) \(at line (?P<line>\d+), column (?P<col>\d+)\)$")


_TOML_TOKENS = re.compile("|".join((
    r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""',    # multi-line basic string
    r"'''[\s\S]*?'''",                        # multi-line literal string
    r'"(?:[^"\\\n]|\\.)*"',                   # basic string
    r"'[^'\n]*'",                             # literal string
    r"#[^\n]*",                               # comment
    r"[\[\]{}]",                              # what nests
)))
"""What matters for nesting in TOML text: strings and comments (skipped whole) and brackets."""


def _nesting_error(text: str, name: str) -> CaseError | None:
    """A `CaseError` at the first bracket nested deeper than `MAX_TOML_NESTING`, found in one
    linear scan before `tomllib` (which recurses per level) sees the text."""
    depth = 0
    for m in _TOML_TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_TOML_NESTING:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - text.rfind("\n", 0, m.start())
                return CaseError(f"{name}:{line}:{col}", f"arrays or tables nested more than "
                                                         f"{MAX_TOML_NESTING} deep ({_LIMITS})")
        elif c in "]}":
            depth = max(0, depth - 1)
    return None


def loads(text: str, name: str = "<case>") -> Case:
    """Parse and validate case text; errors carry `name`."""
    if len(text) > MAX_CASE_BYTES:
        raise CaseError(name, f"the case is {len(text)} characters; at most {MAX_CASE_BYTES} "
                              f"({_LIMITS})")
    if (nested := _nesting_error(text, name)) is not None:
        raise nested
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = _TOML_POS.match(str(e))
        if m:
            raise CaseError(f"{name}:{m['line']}:{m['col']}",
                            f"invalid TOML: {m['msg']}") from None
        raise CaseError(name, f"invalid TOML: {e}") from None
    except RecursionError:  # a nesting the scan above did not see; never expected
        raise CaseError(name, f"invalid TOML: nested too deeply ({_LIMITS})") from None
    try:
        return case_from_dict(doc)
    except CaseError as e:
        raise CaseError(f"{name}: {e.where}" if e.where else name, e.message) from None


def _read(path: str | Path) -> str:
    p = Path(path)
    try:
        if p.is_file() and p.stat().st_size > 4 * MAX_CASE_BYTES:
            raise CaseError(str(p), f"the case is {p.stat().st_size} bytes; at most "
                                    f"{MAX_CASE_BYTES} ({_LIMITS})")
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CaseError(str(p), f"cannot read: {getattr(e, 'strerror', None) or e}") from None


def load(path: str | Path) -> Case:
    """Read a case file. A missing or unreadable file is a `CaseError` too."""
    return loads(_read(path), str(path))


def load_checked(path: str | Path) -> Case:
    """Read a case file a user wrote and check it against its kernel (`check_kernel`), with
    kernel diagnostics placed at their line and column in the file."""
    text = _read(path)
    case = loads(text, str(path))
    check_kernel(case, str(path), text)
    return case


# ---------------------------------------------------------------- writing


def _toml_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"cannot write {v!r} as TOML")


def _toml_list(vs: list[Any] | tuple[Any, ...]) -> str:
    return "[" + ", ".join(_toml_scalar(v) for v in vs) + "]"


def _init_toml(init: Init, elem: Scalar) -> str:
    match init:
        case Fill(bits=b):
            return f"{{ fill = {_toml_scalar(_bits_value(b, elem))} }}"
        case Values(bits=bs):
            return f"{{ values = {_toml_list([_bits_value(b, elem) for b in bs])} }}"
        case Random(seed=s, dist=d):
            return f"{{ random = {s}, dist = \"{d}\" }}"


def dumps(case: Case) -> str:
    """The canonical text of a case: the same case always gives the same bytes."""
    out = [f'format = "{FORMAT}"', f'id = "{case.id}"', f'entry = "{case.entry}"']
    if case.pipelines:
        out.append(f"pipelines = {_toml_list(case.pipelines)}")
    kernel = case.kernel
    if "'''" in kernel:
        body = kernel.replace("\\", "\\\\").replace('"""', '\\"""')
        out.append(f'kernel = """\n{body}"""')
    else:
        out.append(f"kernel = '''\n{kernel}'''")
    out += ["", "[launch]", f"grid = {_toml_list(case.launch.grid)}",
            f"block = {_toml_list(case.launch.block)}"]
    for a in case.args:
        out += ["", "[[args]]", f"name = {_toml_scalar(a.name)}"]
        match a:
            case BufferArg(elem=e, len=n, init=init):
                out += [f'buffer = "{e}"', f"len = {n}", f"init = {_init_toml(init, e)}"]
            case ScalarArg(ty=t, bits=b):
                out += [f'scalar = "{t}"', f"value = {_toml_scalar(_bits_value(b, t))}"]
    if case.expect is not None:
        out += ["", "[expect]", f'status = "{case.expect.status}"']
        if case.expect.pipelines:
            out.append(f"pipelines = {_toml_list(case.expect.pipelines)}")
        if case.expect.issue:
            out.append(f"issue = {_toml_scalar(case.expect.issue)}")
    p = case.provenance
    prov = [(k, v) for k, v in (("generator", p.generator), ("seed", p.seed),
                                ("profile", p.profile), ("parent", p.parent))
            if v not in ("", None)]
    if prov:
        out += ["", "[provenance]"] + [f"{k} = {_toml_scalar(v)}" for k, v in prov]
    return "\n".join(out) + "\n"


def save(case: Case, path: str | Path) -> Path:
    """Write the canonical text; returns the path."""
    p = Path(path)
    p.write_text(dumps(case), encoding="utf-8")
    return p


# ---------------------------------------------------------------- against the kernel


def _param_text(p: Param) -> str:
    match p.ty:
        case SliceType(elem=e, mutable=m):
            return f"{p.name}: {'&mut ' if m else '&'}[{e}]"
        case ScalarType(scalar=s):
            return f"{p.name}: {s}"
        case _:
            return f"{p.name}: ?"


def _arg_text(a: Arg) -> str:
    match a:
        case BufferArg(name=n, elem=e, len=ln):
            return f"{n}: buffer {e}[{ln}]"
        case ScalarArg(name=n, ty=t):
            return f"{n}: scalar {t}"


def check_kernel(case: Case, name: str = "<case>",
                 text: str | None = None) -> tuple[CheckedModule, Fn]:
    """The checked kernel module and the entry function of `case`, or a `CaseError` saying
    why the case is not a test: the kernel does not check (its first diagnostic, placed in
    the case file `text` when given), the entry is not a kernel, or the arguments do not fit.

    A user's case failing here is the user's mistake (exit 2); the pipelines answer the same
    cases with `Rejected(invalid-case)`, a finding against the generator that made them."""
    try:
        checked = check_source(case.kernel, "kernel")
    except DiagnosticError as e:
        first = e.diagnostics[0]
        line, col = first.span.line, first.span.col
        start = -1 if text is None or not case.kernel else text.find(
            case.kernel, max(0, text.find("kernel")))
        if text is not None and start >= 0:
            col = col + start - text.rfind("\n", 0, start) - 1 if line == 1 else col
            line += text.count("\n", 0, start)
            where = f"{name}:{line}:{col}"
        else:
            where = f"{name}: kernel:{line}:{col}"
        more = len(e.diagnostics) - 1
        tail = f" (and {more} more error{'s' if more != 1 else ''})" if more else ""
        raise CaseError(where, first.message + tail) from None
    kernel = checked.fns.get(case.entry)
    if kernel is None or not kernel.kernel:
        raise CaseError(f"{name}: entry", f"no kernel named `{case.entry}` (kernels: "
                                          f"{', '.join(checked.kernels) or 'none'})")
    mismatch = signature_mismatch(case, kernel)
    if mismatch:
        raise CaseError(f"{name}: args", mismatch)
    return checked, kernel


def signature_mismatch(case: Case, kernel: Fn) -> str | None:
    """None when the case's arguments fit the kernel's parameters (same names, order and
    types, a buffer for each slice); otherwise one line showing both."""
    ok = len(kernel.params) == len(case.args)
    for p, a in zip(kernel.params, case.args, strict=False):
        if p.name != a.name:
            ok = False
        match p.ty, a:
            case SliceType(elem=e), BufferArg(elem=ae) if e is ae:
                pass
            case ScalarType(scalar=s), ScalarArg(ty=at) if s is at:
                pass
            case _:
                ok = False
    if ok:
        return None
    takes = ", ".join(_param_text(p) for p in kernel.params)
    gives = ", ".join(_arg_text(a) for a in case.args)
    return (f"arguments do not match kernel `{kernel.name}`: it takes ({takes}); "
            f"the case gives ({gives})")
