"""Scalar ALU semantics as data: AMD opcode name → operand widths and a function over
Python integers (scalar values are single numbers; numpy would only add overhead).

`fn(*sources)` returns `(result, scc)`: `result` None when the instruction writes no
register, `scc` None when it leaves SCC alone (CDNA3 ISA, "Scalar ALU instructions").
Sources are unsigned bit patterns of the operand width; `_s32`/`_s64` reinterpret.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import cast

from rgpu_fuzz.sim.semantics.rdna4 import RDNA4_SALU
from rgpu_fuzz.sim.semantics.rdna4_salu16 import RDNA4_SALU16
from rgpu_fuzz.sim.semantics.salu_lanes import LANE_SALU

M32 = 0xFFFF_FFFF
M64 = 0xFFFF_FFFF_FFFF_FFFF

WriteFn = Callable[..., tuple[int, int | None]]
"""`SOp.fn` of a shape that writes a register: (result, SCC or None where SCC is kept)."""
ResultSccFn = Callable[..., tuple[int, int]]
"""`SOp.fn` of an operation that always writes both: (result, SCC)."""
CompareFn = Callable[..., tuple[None, int]]
"""`SOp.fn` of the `cmp` and `cmpk` shapes: (no result, SCC)."""


@dataclass(frozen=True, slots=True)
class SOp:
    shape: str
    """plain | cmp | saveexec | cselect | addc (reads SCC) | movk | cmpk | getpc | setpc |
    swappc | getreg."""
    dst_bits: int
    src_bits: tuple[int, ...]
    fn: Callable[..., tuple[int | None, int | None]]
    bitdef: Callable[..., int] | None = None
    """Defined bits of the result from each source's value and defined bits, for bitwise
    operations (an AND with a defined 0 is defined whatever the other bit); None: the
    result is defined only if every source is."""
    raw: Callable[[int, int], int] | None = None
    """For two-source operations whose SCC is result != 0: `fn`'s result alone, as one call
    (a C function where there is one), for the bound steps of `rgpu_fuzz.sim.bound.scalar_steps`;
    tests/sim/test_scalar_steps checks it against `fn`."""
    expr: str | None = None
    """`fn`'s result as a Python expression over the sources `{0}`, `{1}` (unsigned ints of
    their widths, each a name or a literal; `{m}` the result's mask), for the generated code
    of fused runs (`rgpu_fuzz.sim.fused.salu`), where a call per instruction cost more than
    the operation; tests/sim/test_fuse_salu checks it against `fn`."""
    lowdef: Callable[..., int] | None = None
    """Defined bits of the result of an arithmetic operation from each source's value and
    defined bits, used only when some source bit is undefined (`bitdef` is for bitwise
    operations, whose SCC is result != 0); SCC, where the operation writes it, is defined
    only when every source bit is. None: the result is defined only if every source is."""

    # `fn` as its shape calls it (the binders pick the view once, at bind time): which half
    # of `(result, scc)` can be None is fixed by the shape, as the table above builds it
    @property
    def write_fn(self) -> WriteFn:
        """`fn` of a shape that writes a register: every shape but cmp, cmpk, setpc, swappc."""
        return cast(WriteFn, self.fn)

    @property
    def result_scc_fn(self) -> ResultSccFn:
        """`fn` of an operation that always writes a register and SCC: S_ADD_U32, S_SUB_U32
        (carry), the `addc` shape, the two-source bitwise operations (`_bitop`: result != 0)."""
        return cast(ResultSccFn, self.fn)

    @property
    def compare_fn(self) -> CompareFn:
        """`fn` of the `cmp` and `cmpk` shapes, which write SCC and no register."""
        return cast(CompareFn, self.fn)


def _and_def(a: int, da: int, b: int, db: int) -> int:
    return (da & db) | (da & ~a) | (db & ~b)


def _or_def(a: int, da: int, b: int, db: int) -> int:
    return (da & db) | (da & a) | (db & b)


def _xor_def(a: int, da: int, b: int, db: int) -> int:
    return da & db


def _shift_def(bits: int, kind: str) -> Callable[[int, int, int, int], int]:
    """Defined bits of a shift by a defined amount: the source's defined bits move with its
    bits, the bits shifted in are defined (zeros; for `ashr` copies of the sign bit, as
    defined as it is). Bits shifted out cannot reach the result — LLVM's O0 64-bit
    expansions build `{lo, IMPLICIT_DEF} << 32` and rely on exactly that. Only the amount's
    low log2(bits) bits are read (CDNA3 ISA "S_LSHL_B64": S1[5:0]); if any of them is
    undefined, nothing is."""
    m = (1 << bits) - 1
    amount = bits - 1

    def bitdef(a: int, da: int, b: int, db: int) -> int:
        if db & amount != amount:
            return 0
        s = b & amount
        if kind == "lshl":
            return ((da << s) | ((1 << s) - 1)) & m
        if kind == "lshr":
            return (da >> s) | (m & ~(m >> s))
        sign_defined = da >> (bits - 1) & 1
        return (da >> s) | ((m & ~(m >> s)) if sign_defined else 0)
    return bitdef


def _low_def(a: int, da: int, b: int, db: int) -> int:
    """Addition, subtraction: bit k of the result depends only on bits 0..k of the sources
    (the carry or borrow runs upwards), so the bits below the lowest undefined source bit
    are defined and every bit from it up is not. The same rule as the VALU's
    (`state.bitdef32`) and S_ADD_U32's carry chain (`bound.salu._carry_chain`)."""
    undef = (~da | ~db) & M32
    return ((undef & -undef) - 1) & M32


def _mul_def(a: int, da: int, b: int, db: int) -> int:
    """S_MUL_I32 (the low 32 bits of the product): bit k depends only on bits 0..k of each
    source, as for addition; a defined zero source makes the whole product a defined 0."""
    if (da == M32 and a == 0) or (db == M32 and b == 0):
        return M32
    return _low_def(a, da, b, db)


def _sext_def(bits: int) -> Callable[[int, int], int]:
    """S_SEXT_I32_I8/I16 (`D = signext(S0[bits-1:0])`): the low `bits` bits are as defined
    as the source's, the bits above copy bit `bits - 1` and are as defined as it is; the
    source's bits above are never read. LLVM sign-extends a uniform i8/i16 that a D16 load
    and `v_readfirstlane_b32` brought into an SGPR with its high half undefined."""
    low = (1 << bits) - 1

    def lowdef(a: int, da: int) -> int:
        return (da & low) | ((M32 & ~low) if da >> (bits - 1) & 1 else 0)
    return lowdef


def _lshl_add_def(k: int) -> Callable[[int, int, int, int], int]:
    """S_LSHL<k>_ADD_U32 (`D = (S0 << k) + S1`): the k bits shifted in are defined zeros,
    then `_low_def` of the sum."""
    return lambda a, da, b, db: _low_def(a << k, ((da << k) | ((1 << k) - 1)) & M32, b, db)


def _s32(x: int) -> int:
    return x - (1 << 32) if x & 0x8000_0000 else x


def _s64(x: int) -> int:
    return x - (1 << 64) if x >> 63 else x


def _nz(x: int) -> int:
    return int(x != 0)


def _bitop(bits: int, f: Callable[[int, int], int],
           bitdef: Callable[[int, int, int, int], int], expr: str,
           closed: bool = False) -> SOp:
    """`closed`: f(a, b) is within `bits` for sources within it (no mask needed)."""
    m = (1 << bits) - 1

    def fn(a: int, b: int) -> tuple[int, int]:
        r = f(a, b) & m
        return r, _nz(r)
    return SOp("plain", bits, (bits, bits), fn, bitdef,
               f if closed else (lambda a, b: f(a, b) & m), expr)


def _unop(bits: int, f: Callable[[int], int], scc: bool = True, dbits: int = 0) -> SOp:
    m = (1 << (dbits or bits)) - 1

    def fn(a: int) -> tuple[int, int | None]:
        r = f(a) & m
        return r, (_nz(r) if scc else None)
    return SOp("plain", dbits or bits, (bits,), fn)


def _bfe(bits: int, signed: bool) -> SOp:
    """S_BFE_{U,I}{32,64} (CDNA3 ISA "SOP2": D = (S0 >> S1[4:0] / S1[5:0]) & ((1 <<
    S1[22:16]) - 1), sign-extended from the field's top bit for I). Per-bit definedness: the
    field's bits are as defined as the source bits they come from, the bits above it are
    defined zeros (U) or copies of the field's top bit (I). LLVM extracts an i8 kernarg
    sign-extended to 64 bits with `s_bfe_i64 s[0:1], s[18:19], 0x80000` after a 32-bit
    load into s18 alone: s19 is never written and cannot reach the result."""
    m = (1 << bits) - 1
    reads = (bits - 1) | (0x7F << 16)

    def fn(a: int, b: int) -> tuple[int, int]:
        off = b & (bits - 1)
        width = (b >> 16) & 0x7F
        v = (a >> off) & ((1 << width) - 1) if width else 0
        if signed and width and v >> (width - 1):
            v -= 1 << width
        r = v & m
        return r, _nz(r)

    def bitdef(a: int, da: int, b: int, db: int) -> int:
        if db & reads != reads:
            return 0
        off = b & (bits - 1)
        width = (b >> 16) & 0x7F
        if not width:
            return m
        field = (1 << width) - 1
        moved = (da >> off) | ~(m >> off)  # bits shifted in from above S0 are zeros
        if signed and not (moved >> (width - 1)) & 1:
            return moved & field & m
        return ((moved & field) | ~field) & m
    return SOp("plain", bits, (bits, 32), fn, bitdef, lambda a, b: fn(a, b)[0])


def _ff1(bits: int) -> Callable[[int], int]:
    return lambda a: (a & -a).bit_length() - 1 if a else M32


def _bcnt0(bits: int) -> Callable[[int], int]:
    return lambda a: bits - a.bit_count()


def _flbit(bits: int) -> Callable[[int], int]:
    return lambda a: bits - a.bit_length() if a else M32


def _flbit_i32(a: int) -> int:
    v = a ^ M32 if a >> 31 else a
    return 32 - v.bit_length() if v else M32


def _brev(bits: int) -> Callable[[int], int]:
    return lambda a: int(f"{a:0{bits}b}"[::-1], 2)


def _sext(bits: int) -> Callable[[int], int]:
    return lambda a: (a & ((1 << bits) - 1)) - ((a >> (bits - 1) & 1) << bits)


def _cmp(bits: int, signed: bool, f: Callable[[int, int], bool]) -> SOp:
    conv = (_s32 if bits == 32 else _s64) if signed else (lambda x: x)
    return SOp("cmp", 0, (bits, bits), lambda a, b: (None, int(f(conv(a), conv(b)))))


def _cmpk(signed: bool, f: Callable[[int, int], bool]) -> SOp:
    """S_CMPK_*: S0 against SIMM16, sign-extended for the I32 forms and zero-extended for the
    U32 forms (CDNA3 ISA "SOPK": S_CMPK_LT_I32 `SCC = S0.i32 < 32'I(signext(SIMM16))`,
    S_CMPK_LT_U32 `SCC = S0.u32 < 32'U(SIMM16)`)."""
    cmp = _cmp(32, signed, f).fn
    ext = _sext(16) if signed else (lambda k: k & 0xFFFF)
    return SOp("cmpk", 0, (32, 32), lambda a, k: cmp(a, ext(k) & M32))


def _bitwise_ops() -> dict[str, SOp]:
    """Logical operations, moves, selects, bit counts and the EXEC save-and-modify forms, for
    32 and 64 bits."""
    t: dict[str, SOp] = {}
    for bits, sfx in ((32, "B32"), (64, "B64")):
        t[f"S_AND_{sfx}"] = _bitop(bits, operator.and_, _and_def, "{0} & {1}", closed=True)
        t[f"S_OR_{sfx}"] = _bitop(bits, operator.or_, _or_def, "{0} | {1}", closed=True)
        t[f"S_XOR_{sfx}"] = _bitop(bits, operator.xor, _xor_def, "{0} ^ {1}", closed=True)
        t[f"S_ANDN2_{sfx}"] = _bitop(bits, lambda a, b: a & ~b,
                                     lambda a, da, b, db: _and_def(a, da, ~b, db),
                                     "{0} & ~{1}", closed=True)
        t[f"S_ORN2_{sfx}"] = _bitop(bits, lambda a, b: a | ~b,
                                    lambda a, da, b, db: _or_def(a, da, ~b, db),
                                    "({0} | ~{1}) & {m}")
        t[f"S_NAND_{sfx}"] = _bitop(bits, lambda a, b: ~(a & b), _and_def, "~({0} & {1}) & {m}")
        t[f"S_NOR_{sfx}"] = _bitop(bits, lambda a, b: ~(a | b), _or_def, "~({0} | {1}) & {m}")
        t[f"S_XNOR_{sfx}"] = _bitop(bits, lambda a, b: ~(a ^ b), _xor_def, "~({0} ^ {1}) & {m}")
        t[f"S_MOV_{sfx}"] = SOp("plain", bits, (bits,), lambda a: (a, None),
                                lambda a, da: da, expr="{0}")
        t[f"S_CMOV_{sfx}"] = SOp("cmov", bits, (bits,), lambda a: (a, None))
        t[f"S_NOT_{sfx}"] = SOp("plain", bits, (bits,), (
            lambda mk: lambda a: (~a & mk, _nz(~a & mk)))((1 << bits) - 1), lambda a, da: da,
            expr="~{0} & {m}")
        t[f"S_BREV_{sfx}"] = _unop(bits, _brev(bits), scc=False)
        t[f"S_CSELECT_{sfx}"] = SOp("cselect", bits, (bits, bits), lambda a, b: (a, None))
        t[f"S_BCNT1_I32_{sfx}"] = _unop(bits, lambda a: a.bit_count(), dbits=32)
        t[f"S_BCNT0_I32_{sfx}"] = _unop(bits, _bcnt0(bits), dbits=32)
        t[f"S_FF1_I32_{sfx}"] = _unop(bits, _ff1(bits), scc=False, dbits=32)
        t[f"S_FLBIT_I32_{sfx}"] = _unop(bits, _flbit(bits), scc=False, dbits=32)
        full = (1 << bits) - 1
        for kind, f, fd, ex in (
                ("AND", lambda e, s: s & e, lambda e, s, ds, f=full: _and_def(s, ds, e, f),
                 "{1} & {0}"),
                ("OR", lambda e, s: s | e, lambda e, s, ds, f=full: _or_def(s, ds, e, f),
                 "{1} | {0}"),
                ("XOR", lambda e, s: s ^ e, lambda e, s, ds: ds, "{1} ^ {0}"),
                ("ANDN2", lambda e, s: s & ~e,
                 lambda e, s, ds, f=full: _and_def(s, ds, ~e, f), "{1} & ~{0}"),
                ("ORN2", lambda e, s: s | ~e, lambda e, s, ds, f=full: _or_def(s, ds, ~e, f),
                 "({1} | ~{0}) & {m}"),
                ("NAND", lambda e, s: ~(s & e), lambda e, s, ds, f=full: _and_def(s, ds, e, f),
                 "~({1} & {0}) & {m}"),
                ("NOR", lambda e, s: ~(s | e), lambda e, s, ds, f=full: _or_def(s, ds, e, f),
                 "~({1} | {0}) & {m}"),
                ("XNOR", lambda e, s: ~(s ^ e), lambda e, s, ds: ds, "~({1} ^ {0}) & {m}"),
                ("ANDN1", lambda e, s: ~s & e,
                 lambda e, s, ds, f=full: _and_def(~s, ds, e, f), "~{1} & {0}"),
                ("ORN1", lambda e, s: ~s | e, lambda e, s, ds, f=full: _or_def(~s, ds, e, f),
                 "(~{1} | {0}) & {m}")):
            t[f"S_{kind}_SAVEEXEC_{sfx}"] = SOp("saveexec", bits, (bits,),
                                                (lambda g, mk: lambda e, s: (g(e, s) & mk, None))
                                                (f, full), fd, expr=ex)
    return t


def _add_u32(a: int, b: int) -> tuple[int, int]:
    s = a + b
    return s & M32, s >> 32


def _sub_u32(a: int, b: int) -> tuple[int, int]:
    return (a - b) & M32, int(b > a)


def _add_i32(a: int, b: int) -> tuple[int, int]:
    s = _s32(a) + _s32(b)
    return s & M32, int(not -(1 << 31) <= s < (1 << 31))


def _sub_i32(a: int, b: int) -> tuple[int, int]:
    s = _s32(a) - _s32(b)
    return s & M32, int(not -(1 << 31) <= s < (1 << 31))


def _arith_ops() -> dict[str, SOp]:
    """Integer arithmetic: sign extension, absolute value, bit set, add/subtract with and
    without carry, multiply, min/max."""
    t: dict[str, SOp] = {}
    t["S_FLBIT_I32"] = _unop(32, _flbit_i32, scc=False)
    t["S_SEXT_I32_I8"] = replace(_unop(32, _sext(8), scc=False), lowdef=_sext_def(8))
    t["S_SEXT_I32_I16"] = replace(_unop(32, _sext(16), scc=False), lowdef=_sext_def(16))
    t["S_ABS_I32"] = _unop(32, lambda a: abs(_s32(a)))
    t["S_BITSET0_B32"] = SOp("bitset", 32, (32,), lambda a, d: (d & ~(1 << (a & 31)), None))
    t["S_BITSET1_B32"] = SOp("bitset", 32, (32,), lambda a, d: (d | (1 << (a & 31)), None))

    t["S_ADD_U32"] = SOp("plain", 32, (32, 32), _add_u32)
    t["S_SUB_U32"] = SOp("plain", 32, (32, 32), _sub_u32)
    t["S_ADD_I32"] = SOp("plain", 32, (32, 32), _add_i32, lowdef=_low_def)
    t["S_SUB_I32"] = SOp("plain", 32, (32, 32), _sub_i32, lowdef=_low_def)
    t["S_ADDC_U32"] = SOp("addc", 32, (32, 32),
                          lambda a, b, c: ((a + b + c) & M32, (a + b + c) >> 32))
    t["S_SUBB_U32"] = SOp("addc", 32, (32, 32),
                          lambda a, b, c: ((a - b - c) & M32, int(b + c > a)))
    t["S_MUL_I32"] = SOp("plain", 32, (32, 32), lambda a, b: ((a * b) & M32, None),
                         lowdef=_mul_def)
    t["S_MUL_HI_U32"] = SOp("plain", 32, (32, 32), lambda a, b: ((a * b) >> 32, None))
    t["S_MUL_HI_I32"] = SOp("plain", 32, (32, 32),
                            lambda a, b: (((_s32(a) * _s32(b)) >> 32) & M32, None))
    t["S_MIN_I32"] = SOp("plain", 32, (32, 32),
                         lambda a, b: (a if _s32(a) < _s32(b) else b, int(_s32(a) < _s32(b))))
    t["S_MAX_I32"] = SOp("plain", 32, (32, 32),
                         lambda a, b: (a if _s32(a) > _s32(b) else b, int(_s32(a) > _s32(b))))
    t["S_MIN_U32"] = SOp("plain", 32, (32, 32), lambda a, b: (min(a, b), int(a < b)))
    t["S_MAX_U32"] = SOp("plain", 32, (32, 32), lambda a, b: (max(a, b), int(a > b)))
    t["S_ABSDIFF_I32"] = SOp("plain", 32, (32, 32), lambda a, b: (
        abs(_s32(a) - _s32(b)) & M32, _nz(abs(_s32(a) - _s32(b)) & M32)))
    return t


def _shift_ops() -> dict[str, SOp]:
    """Shifts, bit-field extract/mask and 16-bit packing."""
    t: dict[str, SOp] = {}
    for bits in (32, 64):
        m = (1 << bits) - 1
        sfx = f"B{bits}"
        t[f"S_LSHL_{sfx}"] = SOp("plain", bits, (bits, 32), (
            lambda mk, n: lambda a, b: ((a << (b & (n - 1))) & mk,
                                        _nz((a << (b & (n - 1))) & mk))
        )(m, bits), _shift_def(bits, "lshl"), (
            lambda mk, n: lambda a, b: (a << (b & (n - 1))) & mk)(m, bits),
            f"({{0}} << ({{1}} & {bits - 1})) & {{m}}")
        t[f"S_LSHR_{sfx}"] = SOp("plain", bits, (bits, 32), (
            lambda n: lambda a, b: (a >> (b & (n - 1)), _nz(a >> (b & (n - 1))))
        )(bits), _shift_def(bits, "lshr"), (lambda n: lambda a, b: a >> (b & (n - 1)))(bits),
            f"{{0}} >> ({{1}} & {bits - 1})")
        conv = _s32 if bits == 32 else _s64
        t[f"S_ASHR_I{bits}"] = SOp("plain", bits, (bits, 32), (
            lambda mk, n, cv: lambda a, b: ((cv(a) >> (b & (n - 1))) & mk,
                                            _nz((cv(a) >> (b & (n - 1))) & mk))
        )(m, bits, conv), _shift_def(bits, "ashr"), (
            lambda mk, n, cv: lambda a, b: (cv(a) >> (b & (n - 1))) & mk)(m, bits, conv))
        t[f"S_BFM_{sfx}"] = SOp("plain", bits, (32, 32), (
            lambda mk, n: lambda a, b: ((((1 << (a & (n - 1))) - 1) << (b & (n - 1))) & mk, None)
        )(m, bits))
    t["S_BFE_U32"] = _bfe(32, False)
    t["S_BFE_I32"] = _bfe(32, True)
    t["S_BFE_U64"] = _bfe(64, False)
    t["S_BFE_I64"] = _bfe(64, True)
    for k in range(1, 5):
        t[f"S_LSHL{k}_ADD_U32"] = SOp("plain", 32, (32, 32), (
            lambda sh: lambda a, b: (((a << sh) + b) & M32, int(((a << sh) + b) >> 32 != 0))
        )(k), lowdef=_lshl_add_def(k))
    t["S_PACK_LL_B32_B16"] = SOp("plain", 32, (32, 32),
                                 lambda a, b: ((a & 0xFFFF) | (b & 0xFFFF) << 16, None))
    t["S_PACK_LH_B32_B16"] = SOp("plain", 32, (32, 32),
                                 lambda a, b: ((a & 0xFFFF) | (b & 0xFFFF0000), None))
    t["S_PACK_HH_B32_B16"] = SOp("plain", 32, (32, 32),
                                 lambda a, b: ((a >> 16) | (b & 0xFFFF0000), None))
    # RDNA3 only: `D0 = { S1[15 : 0].u16, S0[31 : 16].u16 }` (RDNA3 ISA, SOP2 opcode 53)
    t["S_PACK_HL_B32_B16"] = SOp("plain", 32, (32, 32),
                                 lambda a, b: ((a >> 16) | (b & 0xFFFF) << 16, None))
    return t


def _compare_ops() -> dict[str, SOp]:
    """Compares into SCC (`S_CMP*`, `S_CMPK*`, `S_BITCMP*`)."""
    t: dict[str, SOp] = {}
    # compares
    for sfx, signed in (("I32", True), ("U32", False)):
        for name, f in (("EQ", lambda a, b: a == b), ("LG", lambda a, b: a != b),
                        ("GT", lambda a, b: a > b), ("GE", lambda a, b: a >= b),
                        ("LT", lambda a, b: a < b), ("LE", lambda a, b: a <= b)):
            t[f"S_CMP_{name}_{sfx}"] = _cmp(32, signed, f)
            t[f"S_CMPK_{name}_{sfx}"] = _cmpk(signed, f)
    t["S_CMP_EQ_U64"] = _cmp(64, False, lambda a, b: a == b)
    t["S_CMP_LG_U64"] = _cmp(64, False, lambda a, b: a != b)
    t["S_BITCMP0_B32"] = SOp("cmp", 0, (32, 32), lambda a, b: (None, int(not a >> (b & 31) & 1)))
    t["S_BITCMP1_B32"] = SOp("cmp", 0, (32, 32), lambda a, b: (None, a >> (b & 31) & 1))
    t["S_BITCMP0_B64"] = SOp("cmp", 0, (64, 32), lambda a, b: (None, int(not a >> (b & 63) & 1)))
    t["S_BITCMP1_B64"] = SOp("cmp", 0, (64, 32), lambda a, b: (None, a >> (b & 63) & 1))
    return t


def _sopk_ops() -> dict[str, SOp]:
    """The SOPK immediates and program-counter access."""
    t: dict[str, SOp] = {}
    # SOPK: the immediate is the last operand, sign-extended from 16 bits
    t["S_MOVK_I32"] = SOp("movk", 32, (16,), lambda k: (_sext(16)(k) & M32, None))
    t["S_CMOVK_I32"] = SOp("cmovk", 32, (16,), lambda k: (_sext(16)(k) & M32, None))
    t["S_ADDK_I32"] = SOp("addk", 32, (32, 16), lambda d, k: _add_i32(d, _sext(16)(k) & M32),
                          lowdef=_low_def)
    t["S_MULK_I32"] = SOp("addk", 32, (32, 16),
                          lambda d, k: ((d * (_sext(16)(k) & M32)) & M32, None), lowdef=_mul_def)
    t["S_GETREG_B32"] = SOp("getreg", 32, (16,), lambda v: (v, None))
    t["S_GETPC_B64"] = SOp("getpc", 64, (), lambda: (0, None))
    t["S_SETPC_B64"] = SOp("setpc", 0, (64,), lambda a: (None, None))
    t["S_SWAPPC_B64"] = SOp("swappc", 64, (64,), lambda a: (None, None))
    return t


def _table() -> dict[str, SOp]:
    t: dict[str, SOp] = {}
    for family in (_bitwise_ops, _arith_ops, _shift_ops, _compare_ops, _sopk_ops):
        t.update(family())
    return t



SALU: dict[str, SOp] = _table()
SALU.update({name: SOp(*row) for name, row in LANE_SALU.items()})
SALU.update({name: SOp(*row) for name, row in RDNA4_SALU.items()})
SALU.update({name: SOp(*row) for name, row in RDNA4_SALU16.items()})
"""Every scalar ALU opcode the simulator implements, by AMD name."""
