"""What decoding an opcode of a format needs that its field values do not change: the
decoder (`isa.decoder._Decoder`) asked it of every instruction (string prefixes and regular
expressions over the opcode's name, look-ups in the opcode tables, which branch of the
operand code each field takes); here it is worked out once per (format, opcode) (`Plan`)
and per encoding that opcode decodes as (`Variant`: VOP1/VOP2/VOPC with an SDWA or DPP
dword, a GFX11 VOP3 with a DPP dword).

A variant also memoises each register or constant operand by what it is a function of
(`Step`): its field's value, the per-operand modifier fields its encoding has (a superset
of what `_Decoder._field_operand` and `_with_modifiers` read: `OPERAND_MODIFIERS`) and the
literal when the field holds the literal code. A miss computes the operand as before, so
the memo holds only what the decoder's own code produced."""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from rgpu_fuzz.sim.isa.bitop3 import is_bitop3
from rgpu_fuzz.sim.isa.formats import FieldKind, Format
from rgpu_fuzz.sim.isa.instruction import Encoding, Operand, OperandKind, Special
from rgpu_fuzz.sim.isa.permlane_swap import is_permlane_swap
from rgpu_fuzz.sim.isa.tables import OperandType, OpInfo, TargetSpec, TargetTables

# Opcodes with a constant dword that no operand field names (the "K" of *MK/*AK, the
# value of s_setreg_imm32): AMD's names say so (CDNA3 ISA §12.7 V_FMAMK_F32, §12.1
# S_SETREG_IMM32_B32). The group is where LLVM prints it among the uses.
K_CONSTANT = re.compile(r"^(?:V|S|V_DUAL)_(?:FMA|MAD)(?P<kind>MK|AK)_|^S_SETREG_IMM32")
MATRIX = re.compile(r"^V_S?MFMA")

VOP_SHORT = frozenset({Encoding.VOP1, Encoding.VOP2, Encoding.VOPC})
VOP3_FAMILY = frozenset({Encoding.VOP3, Encoding.VOP3SD, Encoding.VOP3P})
FLAT_FAMILY = frozenset({Encoding.GLOBAL, Encoding.SCRATCH, Encoding.FLAT})

# Fields that are written (defs); all other operand fields are read.
_DEF_FIELDS = frozenset({"vdst", "sdst", "vdstx", "vdsty"})
_STORE_PREFIXES = ("S_STORE", "S_BUFFER_STORE", "S_SCRATCH_STORE", "S_ATC_PROBE")
# SOPK opcodes whose sdst is only read (compare) or both read and written.
_SOPK_READS = re.compile(r"^S_CMPK_|^S_SETREG_")
_SOPK_RMW = re.compile(r"^S_(?:ADDK|MULK|CMOVK)_")
ACC_FIELDS = ("vdst", "data", "vdata", "data0", "data1")
"""CDNA memory formats: the fields the `acc` bit moves to AGPRs."""

OPERAND_MODIFIERS: dict[Encoding, tuple[str, ...]] = {
    **dict.fromkeys(VOP3_FAMILY, ("neg", "abs", "opsel", "opsel_hi", "opsel_hi2", "neg_hi",
                                  "clamp")),
    Encoding.SDWA: ("s0", "s1", "src0", "vsrc1", "src0_neg", "src0_abs", "src0_sext",
                    "src0_sel", "src1_neg", "src1_abs", "src1_sext", "src1_sel"),
    Encoding.DPP: ("src0", "src0_neg", "src0_abs", "src1_neg", "src1_abs"),
    Encoding.DPP8: ("src0",),
}
"""Per encoding, the fields besides an operand's own that `_Decoder._with_modifiers` (and
`_matrix_operand`) may read for it: VOP3's NEG/ABS/OP_SEL (CDNA3 ISA §12.3), VOP3P's
NEG_HI/OP_SEL_HI and MFMA's ACC bits in them (§12.4, §7.1), SDWA's per-source selects
(§12.2 "VOP_SDWA"), DPP's source modifiers and the SRC0 of the extension dword."""

# what a step does with its field
FIELD, IMMEDIATE, SMEM_OFFSET, FLAT_ADDRESS = range(4)
# whether a FIELD step's operand is a def
USE, DEF, DEF_IF_RETURNS = range(3)


@dataclass(slots=True)
class Step:
    """One operand field of a variant, in LLVM's order."""

    name: str
    optype: OperandType | None
    action: int
    role: int
    unless_no_return: bool
    """`vdst` of a FLAT-family atomic: absent when the atomic does not return."""
    deps: Any
    """An `itemgetter` of the other fields the operand is a function of, or None."""
    memo: dict[Any, Operand]
    width: int
    """The field's width (an immediate's)."""


@dataclass(slots=True)
class Variant:
    """A plan decoded as one encoding: its steps, its modifiers' names and the `vcc` LLVM
    prints for VOPC and carry VOP2 (`_Decoder._implicit_vcc`)."""

    steps: tuple[Step, ...]
    modifier_names: tuple[str, ...]
    vcc: Operand
    vopc: bool
    writes_exec_only: bool
    carry_out: bool
    carry_in: bool


@dataclass(slots=True)
class Plan:
    """Per (format, opcode): the operand fields it has in LLVM's order with their operand
    types, which of them are sources (a literal follows for code 255), the K constant of
    *MK/*AK, LLVM's spelling per encoding (filled in as met), the tests of its name the
    decoder makes, and its variants (built as met)."""

    info: OpInfo
    spec: TargetSpec
    present: tuple[str, ...]
    optypes: tuple[OperandType | None, ...]
    source_fields: tuple[str, ...]
    k_match: re.Match[str] | None
    mnemonics: dict[Encoding, str]
    variants: dict[Any, Variant]
    short_src0: bool
    """A VOP1/VOP2/VOPC format with SRC0: an SDWA or DPP dword may follow."""
    vop3_dpp: bool
    """A GFX11 VOP3/VOP3SD: a DPP dword may follow (`isa.vop3_dpp`)."""
    literal_ok: bool
    """A literal may follow a source of code 255 (not in CDNA's VOP3)."""
    matrix: bool
    bitop3: bool
    permlane_swap: bool
    flat_atomic: bool
    """A FLAT-family atomic: `vdst` is present only when it returns."""
    branch: bool
    """SOPP with a label: its target is a modifier."""


_PLANS: dict[tuple[type[Format], int], Plan] = {}


def plan(fmt: type[Format], info: OpInfo, spec: TargetSpec) -> Plan:
    """The plan of opcode `info` in format `fmt`, built once."""
    got = _PLANS.get((fmt, id(info)))
    if got is not None and got.info is info and got.spec is spec:
        return got
    ops = info.operands
    enc = fmt.encoding
    if enc is Encoding.VOPD:
        present = tuple(fmt.asm_order)
    else:
        present = tuple(name for name in fmt.asm_order if name in ops)
    sources = tuple(n for n in present if fmt.fields[n].kind in (FieldKind.SRC, FieldKind.SSRC))
    simm16 = ops.get("simm16")
    got = Plan(info, spec, present, tuple(ops.get(n) for n in present), sources,
               K_CONSTANT.match(info.name), {}, {},
               short_src0=enc in VOP_SHORT and "src0" in fmt.fields,
               vop3_dpp=enc in (Encoding.VOP3, Encoding.VOP3SD) and spec.dpp8,
               literal_ok=enc not in VOP3_FAMILY or spec.vop3_literal,
               matrix=MATRIX.match(info.name) is not None, bitop3=is_bitop3(info.name),
               permlane_swap=is_permlane_swap(info.name),
               flat_atomic="_ATOMIC_" in info.name and enc in FLAT_FAMILY,
               branch=enc is Encoding.SOPP and simm16 is not None and simm16.type == "OPR_LABEL")
    _PLANS[(fmt, id(info))] = got
    return got


def forget() -> None:
    """Forgets every plan (and so every memoised operand)."""
    _PLANS.clear()


def variant(t: TargetTables, fmt: type[Format], p: Plan, enc: Encoding,
            value_names: tuple[str, ...]) -> Variant:
    """`p` decoded as `enc` with the fields `value_names` (the format's, an extension
    dword's): what `_Decoder._operands`, `_implicit_vcc` and `_modifiers` decide without
    the fields' values."""
    name = p.info.name
    steps = []
    mods = tuple(m for m in OPERAND_MODIFIERS.get(enc, ()) if m in value_names)
    for fname, optype in zip(p.present, p.optypes, strict=True):
        if optype is not None and optype.type == "OPR_EXEC":
            continue                       # gfx11 v_cmpx: writes EXEC, not printed
        field = fmt.fields[fname]
        role = USE
        if enc is Encoding.SMEM and fname == "soffset":
            action = SMEM_OFFSET
        elif fname in ("addr", "saddr") and enc in FLAT_FAMILY:
            action = FLAT_ADDRESS
        elif (fname == "simm16" or field.kind is FieldKind.PLAIN
              or (optype is not None and optype.type.startswith(("OPR_SIMM", "OPR_SENDMSG")))):
            # an immediate in an operand field (s_set_gpr_idx_on's mode, s_atc_probe's
            # probe kind): the XML's operand type says so
            action = IMMEDIATE
        else:
            action = FIELD
            role = _role(enc, fname, name)
        deps = [m for m in mods if m != fname]
        if fname in ACC_FIELDS and "acc" in value_names:
            deps.append("acc")
        if fname == "vaddr" and enc in (Encoding.MUBUF, Encoding.MTBUF):
            deps += [n for n in ("offen", "idxen") if n in value_names]
        steps.append(Step(fname, optype, action, role,
                          fname == "vdst" and p.flat_atomic,
                          itemgetter(*deps) if deps else None, {}, field.width))
    vopc = fmt.op_table == "VOPCOp"
    long_form = (t.by_name["VOP3SDOp"].get(name) or t.by_name["VOP3Op"].get(name)
                 if fmt.op_table == "VOP2Op" else None)
    exec_form = t.by_name["VOP3Op"].get(name) if vopc else None
    src2 = long_form.operands.get("src2") if long_form is not None else None
    implicit = enc in (Encoding.VOP2, Encoding.VOPC, Encoding.SDWA, Encoding.DPP, Encoding.DPP8)
    return Variant(
        tuple(steps), modifier_names(fmt, value_names),
        special_operand(Special.VCC_LO, p.spec.wave_size // 32),
        vopc=implicit and vopc,
        writes_exec_only=exec_form is not None and any(
            o.type == "OPR_EXEC" for o in exec_form.operands.values()),
        carry_out=implicit and long_form is not None and "sdst" in long_form.operands,
        carry_in=implicit and src2 is not None and src2.fmt == "FMT_NUM_M64")


def _role(enc: Encoding, fname: str, name: str) -> int:
    """Whether a register field is written: its name (vdst, sdst, ...), a load's or
    returning atomic's data, SOPK's compare (read) and read-modify-write (written) forms."""
    is_def = fname in _DEF_FIELDS or (fname == "sdata" and not name.startswith(_STORE_PREFIXES))
    role = DEF if is_def else USE
    if not is_def and fname == "vdata":
        # MUBUF/MTBUF: vdata is the destination of loads and of returning atomics
        role = DEF if "_LOAD_" in name else DEF_IF_RETURNS if "_ATOMIC_" in name else USE
    if enc is Encoding.SOPK and fname == "sdst":
        if _SOPK_READS.match(name):
            role = USE
        elif _SOPK_RMW.match(name):
            role = DEF
    return role


_MODIFIER_NAMES: dict[tuple[type[Format], tuple[str, ...]], tuple[str, ...]] = {}
_NOT_MODIFIERS: dict[type[Format], frozenset[str]] = {}
# memos keyed by format class (a dict, not `functools.cache`, whose typing wants `Hashable`
# arguments and does not take a class object for one)


def modifier_names(fmt: type[Format], names: tuple[str, ...]) -> tuple[str, ...]:
    """Of the fields `names` decoded for `fmt` (with an extension dword's), the
    instruction-wide modifiers, in field order."""
    got = _MODIFIER_NAMES.get((fmt, names))
    if got is None:
        skip = _not_modifiers(fmt)
        got = _MODIFIER_NAMES[(fmt, names)] = tuple(
            n for n in names
            if n not in skip and not n.startswith(("src0_", "src1_", "s0", "s1")))
    return got


def _not_modifiers(fmt: type[Format]) -> frozenset[str]:
    """Fields of `fmt` that are operands or per-operand bits, not instruction modifiers."""
    got = _NOT_MODIFIERS.get(fmt)
    if got is None:
        operand_fields = {n for n, f in fmt.fields.items() if f.kind is not FieldKind.PLAIN}
        got = _NOT_MODIFIERS[fmt] = frozenset(
            operand_fields | {"op", "opy", "simm16", "neg", "abs", "opsel", "opsel_hi",
                              "opsel_hi2", "neg_hi", "imm", "soffset_en", "sd"})
    return got


_IMMEDIATES: dict[tuple[int, int], Operand] = {}
_SPECIALS: dict[tuple[Special, int], Operand] = {}


def immediate(value: int, width: int) -> Operand:
    """The immediate operand `value` of a `width`-bit field, one object per value."""
    got = _IMMEDIATES.get((value, width))
    if got is None:
        if len(_IMMEDIATES) > 50_000:
            _IMMEDIATES.clear()
        got = _IMMEDIATES[(value, width)] = Operand(kind=OperandKind.IMM, value=value,
                                                    width=width)
    return got


def special_operand(which: Special, count: int = 1) -> Operand:
    """A named register operand, one object per (register, count)."""
    got = _SPECIALS.get((which, count))
    if got is None:
        got = _SPECIALS[(which, count)] = Operand(kind=OperandKind.SPECIAL, index=which,
                                                  count=count)
    return got


__all__ = ["ACC_FIELDS", "DEF", "DEF_IF_RETURNS", "FIELD", "FLAT_ADDRESS", "FLAT_FAMILY",
           "IMMEDIATE", "K_CONSTANT", "MATRIX", "OPERAND_MODIFIERS", "SMEM_OFFSET", "USE",
           "VOP3_FAMILY", "VOP_SHORT", "Plan", "Step", "Variant", "forget", "immediate",
           "modifier_names", "plan", "special_operand", "variant"]
