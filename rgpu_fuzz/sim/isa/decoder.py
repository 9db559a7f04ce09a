"""One instruction of a known format and opcode → `Instruction` (`_Decoder`): its dwords
gathered (plus an SDWA/DPP extension dword and a literal where the operands ask for one),
each operand field turned into an `Operand` by the opcode's operand type, the instruction-wide
modifiers, VOPD's two halves. Which format and opcode to try, the per-process memo and the
section walk are `isa.decode`'s."""

from __future__ import annotations

import re
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from rgpu_fuzz.sim.isa import vop3_dpp
from rgpu_fuzz.sim.isa.bitop3 import truth_table
from rgpu_fuzz.sim.isa.decode_plan import (
    DEF,
    DEF_IF_RETURNS,
    FIELD,
    FLAT_ADDRESS,
    IMMEDIATE,
    K_CONSTANT,
    SMEM_OFFSET,
    VOP_SHORT,
    Plan,
    immediate,
    special_operand,
    variant,
)
from rgpu_fuzz.sim.isa.formats import (
    DPP8_EXT,
    DPP16_EXT,
    SDWA_EXT,
    Field,
    FieldKind,
    Format,
    _Extension,
)
from rgpu_fuzz.sim.isa.instruction import (
    Encoding,
    Instruction,
    Operand,
    OperandKind,
    Special,
    make_instruction,
)
from rgpu_fuzz.sim.isa.operands import (
    LITERAL_CODE,
    Undecodable,
    operand_count,
    scalar,
    vgpr,
)
from rgpu_fuzz.sim.isa.permlane_swap import swap_controls
from rgpu_fuzz.sim.isa.tables import OperandType, OpInfo, TargetTables

_SDWA_CODE, _DPP16_CODE, _DPP8_CODE, _DPP8FI_CODE = 249, 250, 233, 234
_VOP_SHORT_TABLES = ("VOP1Op", "VOP2Op", "VOPCOp")
_TRUE16_PACKED = frozenset({Encoding.VOP1, Encoding.VOP2, Encoding.VOPC, Encoding.DPP,
                            Encoding.DPP8})
_SELECTS = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")
_OPERAND_MEMO_LIMIT = 4096
"""Operands memoised per variant field (`decode_plan.Step.memo`) before it starts over."""
_M64_SREG = OperandType(64, "OPR_SREG", "FMT_NUM_M64")


class _Ended(Undecodable):
    """The instruction's dwords run past the end of the words (see `decode_at_ended`)."""



class _Decoder:
    """Decodes one instruction of a known format and opcode."""

    __slots__ = ("address", "bits", "encoding", "extension", "fmt", "i", "info", "literal",
                 "ndwords", "plan", "spec", "t", "values", "variant", "vop3_dpp", "words")

    def __init__(self, t: TargetTables, fmt: type[Format], p: Plan,
                 words: tuple[int, ...], i: int, address: int) -> None:
        self.t, self.spec, self.fmt, self.info, self.plan = t, p.spec, fmt, p.info, p
        self.words, self.i, self.address = words, i, address
        self.encoding = fmt.encoding
        n = self.ndwords = fmt.dwords
        if n == 1:
            self.bits = words[i]
        elif n == 2 and i + 2 <= len(words):
            self.bits = words[i] | words[i + 1] << 32
        else:
            self.bits = self._gather(n)
        self.values = fmt.decode_fields(self.bits)
        self.extension: type[_Extension] | None = None
        self.vop3_dpp = False

    def _gather(self, ndwords: int) -> int:
        if self.i + ndwords > len(self.words):
            raise _Ended("truncated instruction")
        bits = 0
        for k in range(ndwords):
            bits |= self.words[self.i + k] << (32 * k)
        return bits

    # -- sizes: extension dword and literal -------------------------------------------

    def run(self) -> Instruction:
        p = self.plan
        values = self.values
        dpp3 = None
        if p.short_src0:
            code = values["src0"]
            if code == _SDWA_CODE and self.spec.sdwa:
                self.encoding, self.extension = Encoding.SDWA, SDWA_EXT
            elif code == _DPP16_CODE:
                self.encoding, self.extension = Encoding.DPP, DPP16_EXT
            elif code in (_DPP8_CODE, _DPP8FI_CODE) and self.spec.dpp8:
                self.encoding, self.extension = Encoding.DPP8, DPP8_EXT
            if self.extension is not None:
                self.ndwords += 1
                self.bits = self._gather(self.ndwords)
                values.update({n: f.get(self.bits) for n, f in self.extension.fields.items()})
                if self.extension is DPP8_EXT:
                    values["fi"] = int(code == _DPP8FI_CODE)   # RDNA3 §7.7: code 234
        elif p.vop3_dpp and (dpp3 := vop3_dpp.extension(values.get("src0", -1))) is not None:
            self.ndwords += 1                       # GFX11 VOP3 DPP (`isa.vop3_dpp`)
            self.bits = self._gather(self.ndwords)
            values.update(vop3_dpp.fields(dpp3, self.bits, values["src0"]))
            self.vop3_dpp = True
        literal = None
        k_match = p.k_match
        needs_literal = k_match is not None or (
            self.extension is None and p.literal_ok
            and any(values[n] == LITERAL_CODE for n in p.source_fields))
        if self.encoding is Encoding.VOPD:
            k_match = k_match or K_CONSTANT.match(self._vopd_y().name)
            needs_literal = k_match is not None or LITERAL_CODE in (
                values["srcx0"], values["srcy0"])
        if needs_literal:
            if self.i + self.ndwords >= len(self.words):
                raise _Ended("literal past the end of the section")
            literal = self.words[self.i + self.ndwords]
            self.ndwords += 1
        self.literal = literal
        key = self.encoding if dpp3 is None else dpp3
        var = p.variants.get(key)
        if var is None:
            var = p.variants[key] = variant(self.t, self.fmt, p, self.encoding, tuple(values))
        self.variant = var
        defs, uses = self._operands(k_match)
        modifiers = self._modifiers()
        halves: tuple[Instruction, ...] = ()
        opcode, mnemonic = self.info.name, self._mnemonic()
        if self.vop3_dpp:
            mnemonic = vop3_dpp.mnemonic(self.info.mnemonic)
        if self.encoding is Encoding.VOPD:
            halves = self._vopd_halves(defs, uses)
            opcode = f"{halves[0].opcode}::{halves[1].opcode}"
            mnemonic = f"{halves[0].mnemonic}::{halves[1].mnemonic}"
        fields = dict(values)
        if literal is not None:
            fields["literal"] = literal
        return make_instruction(
            self.address, 4 * self.ndwords, self.encoding, self.spec.name, opcode, mnemonic,
            tuple(defs), tuple(uses), MappingProxyType(modifiers), MappingProxyType(fields),
            self.words[self.i: self.i + self.ndwords], halves)

    # -- mnemonic ---------------------------------------------------------------------

    def _mnemonic(self) -> str:
        """LLVM's spelling: the encoding suffix only where the opcode has two encodings
        (a property of the opcode and the encoding: memoised per plan)."""
        got = self.plan.mnemonics.get(self.encoding)
        if got is None:
            got = self.plan.mnemonics[self.encoding] = self._spell()
        return got

    def _spell(self) -> str:
        base = self.info.mnemonic
        enc = self.encoding
        if self.info.suffix is not None and enc in VOP_SHORT:
            return base + self.info.suffix
        if not self.info.operands:
            return base                    # v_nop, v_clrexcp: LLVM prints no suffix
        if enc in VOP_SHORT:
            has_long = self.info.name in self.t.by_name["VOP3Op"] or (
                self.info.name in self.t.by_name["VOP3SDOp"])
            return base + "_e32" if has_long else base
        if enc is Encoding.SDWA:
            return base + "_sdwa"
        if enc in (Encoding.DPP, Encoding.DPP8):
            return base + "_dpp"
        if enc in (Encoding.VOP3, Encoding.VOP3SD) and any(
                self.info.name in self.t.by_name.get(tb, {}) for tb in _VOP_SHORT_TABLES):
            return base + "_e64"
        return base

    # -- operands ---------------------------------------------------------------------

    def _optype(self, name: str) -> OperandType | None:
        return self.info.operands.get(name)

    def _field_operand(self, name: str, optype: OperandType | None) -> Operand:
        f: Field = self.fmt.fields[name]
        raw = self.values[name]
        scalar_type = optype is not None and optype.type.startswith(("OPR_SREG", "OPR_SDST",
                                                                      "OPR_SSRC"))
        half = self.spec.true16 and self.encoding in _TRUE16_PACKED
        if f.kind is FieldKind.SRC:
            if raw >= 256:
                return vgpr(raw - 256, optype, self.spec, acc=self._acc(name), packed_half=half)
            return scalar(raw, optype, self.spec, self.literal)
        if f.kind is FieldKind.VGPR and not scalar_type:
            if name == "vaddr" and self.encoding in (Encoding.MUBUF, Encoding.MTBUF):
                return self._buffer_vaddr(raw)
            return vgpr(raw, optype, self.spec, acc=self._acc(name), packed_half=half)
        if f.kind is FieldKind.SBASE:
            return Operand(kind=OperandKind.SGPR, index=raw * 2,
                           count=operand_count(optype, self.spec))
        if f.kind is FieldKind.SRSRC:
            return Operand(kind=OperandKind.SGPR, index=raw * 4,
                           count=operand_count(optype, self.spec))
        return scalar(raw, optype, self.spec, self.literal)

    def _buffer_vaddr(self, raw: int) -> Operand:
        """MUBUF/MTBUF vaddr: one VGPR per enabled index/offset, `off` for none (CDNA3 §9.1)."""
        count = self.values.get("offen", 0) + self.values.get("idxen", 0)
        if count == 0:
            return special_operand(Special.OFF)
        return Operand(kind=OperandKind.VGPR, index=raw, count=count)

    def _acc(self, name: str) -> bool:
        """CDNA memory formats: `acc` selects AGPRs for the data operands."""
        return bool(self.values.get("acc")) and name in ("vdst", "data", "vdata", "data0",
                                                         "data1")

    def _operands(self, k_match: re.Match | None) -> tuple[list[Operand], list[Operand]]:
        """The operands in LLVM's order, split into defs and uses, by the variant's steps;
        a register or constant field's operand memoised by what it is a function of (the
        step's `deps`, the literal where the field holds its code)."""
        enc = self.encoding
        if enc is Encoding.VOPD:
            return self._vopd_operands()
        defs: list[Operand] = []
        uses: list[Operand] = []
        values = self.values
        no_return = self.plan.flat_atomic and not self._returns()
        for step in self.variant.steps:
            if step.unless_no_return and no_return:
                continue
            action = step.action
            if action == FIELD:
                raw = values[step.name]
                deps = step.deps
                key: Any = raw if deps is None else (raw, deps(values))
                if raw == LITERAL_CODE:
                    key = (key, self.literal)
                memo = step.memo
                operand = memo.get(key)
                if operand is None:
                    operand = self._with_modifiers(
                        step.name, self._field_operand(step.name, step.optype))
                    if len(memo) > _OPERAND_MEMO_LIMIT:
                        memo.clear()
                    memo[key] = operand
                role = step.role
                if role == DEF or (role == DEF_IF_RETURNS and self._returns()):
                    defs.append(operand)
                else:
                    uses.append(operand)
            elif action == IMMEDIATE:
                uses.append(immediate(values[step.name], step.width))
            elif action == SMEM_OFFSET:
                uses.extend(self._smem_offset())
            elif action == FLAT_ADDRESS:
                uses.append(self._flat_address(step.name, step.optype))
        self._implicit_vcc(defs, uses)
        if k_match is not None and self.literal is not None:
            k = Operand(kind=OperandKind.LITERAL, value=self.literal, width=32)
            if k_match.group("kind") == "MK":
                uses.insert(1, k)                  # v_fmamk_f32 vdst, src0, K, vsrc1
            else:
                uses.append(k)                     # v_fmaak_f32 vdst, src0, vsrc1, K
        return defs, uses

    def _returns(self) -> bool:
        """An atomic's return bit: GLC (GFX9, RDNA3), SC0 (gfx940+), TH bit 0
        (TH_ATOMIC_RETURN, RDNA4 ISA "Memory Scope and Temporal Hints"); a memory atomic
        returns the pre-op value only with it: CDNA3 ISA §10.1 "FLAT ... atomics: SC0=1
        returns", RDNA3 ISA §10.1 "GLC=1 returns"."""
        v = self.values
        if "th" in v:
            return bool(v["th"] & 1)
        return bool(v.get("sc0", v.get("glc", 0)))

    def _implicit_vcc(self, defs: list[Operand], uses: list[Operand]) -> None:
        """`vcc` that LLVM prints for VOPC and carry VOP2 in 32-bit, SDWA and DPP forms.

        Which VOP2 opcodes have a carry is read from the tables (`decode_plan.variant`):
        their VOP3 form has an `sdst` (carry out) or a lane-mask `src2` (carry in /
        condition).
        """
        var = self.variant
        if var.vopc:
            if self.encoding is Encoding.SDWA and self.values.get("sd"):
                defs.insert(0, scalar(self.values["sdst"], _M64_SREG, self.spec))
            elif not var.writes_exec_only:
                defs.insert(0, var.vcc)
            return
        if var.carry_out:
            defs.append(var.vcc)
        if var.carry_in:
            uses.append(var.vcc)

    def _smem_offset(self) -> list[Operand]:
        """SMEM address offset: an immediate, an SGPR, or both (CDNA3 §4.2, RDNA3 §5.2)."""
        v = self.values
        out: list[Operand] = []
        offset = v["offset"]
        if "imm" in v:                          # CDNA: imm / soffset_en select the forms
            if v["imm"]:
                if v["soffset_en"]:
                    out.append(scalar(v["soffset"], None, self.spec))
                out.append(immediate(_signed(offset, 21), 21))
            elif v["soffset_en"]:
                out.append(scalar(v["soffset"], None, self.spec))
            else:
                out.append(scalar(offset & 0xFF, None, self.spec))
            return out
        soffset = scalar(v["soffset"], None, self.spec)
        out.append(soffset)
        width = self.fmt.fields["offset"].width          # 21 bits on RDNA3, 24 on RDNA4
        out.append(immediate(_signed(offset, width), width))
        return out

    def _flat_address(self, fname: str, optype: OperandType | None) -> Operand:
        """FLAT-family address operands: `off` where the encoding leaves one out."""
        v = self.values
        if fname == "saddr":
            if self.encoding is Encoding.FLAT:
                return special_operand(Special.OFF)
            if v["saddr"] in (0x7F, 0x7C) and self._saddr_off(v["saddr"]):
                return special_operand(Special.OFF)
            return scalar(v["saddr"], optype, self.spec)
        # addr
        if self.encoding is Encoding.SCRATCH and not self._scratch_has_vaddr():
            return special_operand(Special.OFF)
        if self.encoding is Encoding.GLOBAL and not self._saddr_off(v["saddr"]):
            return vgpr(v["addr"], OperandType(32, "OPR_VGPR", "FMT_ANY"), self.spec)
        return vgpr(v["addr"], optype, self.spec)

    def _saddr_off(self, code: int) -> bool:
        """`saddr` "off": 0x7F on CDNA, 0x7C (null) on RDNA3 (ISA guides, FLAT chapter)."""
        return code == (0x7C if self.spec.specials.get(124) is Special.NULL else 0x7F)

    def _scratch_has_vaddr(self) -> bool:
        v = self.values
        if "sve" in v:                # gfx940+/RDNA3: SVE says whether vaddr is used
            return bool(v["sve"])
        return self._saddr_off(v["saddr"])

    def _with_modifiers(self, fname: str, op: Operand) -> Operand:
        """Source modifiers of VOP3/VOP3P/SDWA/DPP onto the operand they apply to (what
        it reads of the fields is `decode_plan.OPERAND_MODIFIERS`)."""
        v = self.values
        enc = self.encoding
        p = self.plan
        index = {"src0": 0, "src1": 1, "vsrc1": 1, "src2": 2}.get(fname)
        if enc is Encoding.VOP3P and p.matrix:
            return self._matrix_operand(fname, op)
        if enc is Encoding.VOP3 and index is not None and p.bitop3:
            return _replace(op, hi=bool(v["opsel"] >> index & 1))   # no abs/neg: the table
        if enc is Encoding.VOP3 and index is not None and p.permlane_swap:
            # OP_SEL holds FI and BOUND_CTRL (`_modifiers`), not SRC0's half
            return _replace(op, neg=bool(v["neg"] >> index & 1),
                            abs=bool(v.get("abs", 0) >> index & 1))
        if enc in (Encoding.VOP3, Encoding.VOP3SD, Encoding.VOP3P) and index is not None:
            neg = bool(v["neg"] >> index & 1)
            abs_ = bool(v.get("abs", 0) >> index & 1)
            if enc is Encoding.VOP3P and "_MIX" in self.info.name:
                # v_fma_mix*: NEG_HI holds the sources' abs (CDNA3 ISA §12.11 V_FMA_MIX_F32)
                return _replace(op, neg=neg, abs=bool(v["neg_hi"] >> index & 1),
                                hi=bool(v["opsel"] >> index & 1),
                                hi_hi=bool((v["opsel_hi"] | v["opsel_hi2"] << 2) >> index & 1))
            if enc is Encoding.VOP3P:
                hi_hi = bool((v["opsel_hi"] | v["opsel_hi2"] << 2) >> index & 1)
                return _replace(op, neg=neg, hi=bool(v["opsel"] >> index & 1),
                                neg_hi=bool(v["neg_hi"] >> index & 1), hi_hi=hi_hi)
            hi = bool(v.get("opsel", 0) >> index & 1)
            return _replace(op, neg=neg, abs=abs_, hi=hi)
        if enc is Encoding.VOP3 and fname == "vdst" and v.get("opsel", 0) & 8:
            return _replace(op, hi=True)
        if enc is Encoding.SDWA and index is not None and index < 2:
            p_ = f"src{index}"
            if v[f"s{index}"]:
                code = v["src0"] if index == 0 else v["vsrc1"]
                op = scalar(code, self._optype(fname), self.spec)
            elif index == 0:
                op = vgpr(v["src0"], self._optype(fname), self.spec)
            return _replace(op, neg=bool(v[f"{p_}_neg"]), abs=bool(v[f"{p_}_abs"]),
                            sext=bool(v[f"{p_}_sext"]), sel=_select(v[f"{p_}_sel"]))
        if enc in (Encoding.DPP, Encoding.DPP8) and index is not None and index < 2:
            if index == 0:   # bit 7 of a true16 SRC0 selects the high half, as in VOP1/2/C
                op = vgpr(v["src0"], self._optype(fname), self.spec,
                          packed_half=self.spec.true16)
            if enc is Encoding.DPP:
                p_ = f"src{index}"
                return _replace(op, neg=bool(v[f"{p_}_neg"]), abs=bool(v[f"{p_}_abs"]))
        return op

    def _matrix_operand(self, fname: str, op: Operand) -> Operand:
        """MFMA reuses VOP3P's modifier bits (CDNA3 ISA §7.1 "VOP3P-MAI"): ACC[1:0] (the
        op_sel_hi bits) put src0/src1 in AGPRs, ACC_CD (the clamp bit) vdst and src2."""
        v = self.values
        if fname in ("src0", "src1"):
            acc = bool((v["opsel_hi"] >> (0 if fname == "src0" else 1)) & 1)
        else:
            acc = bool(v["clamp"])
        if acc and op.kind is OperandKind.VGPR:
            return _replace(op, kind=OperandKind.AGPR)
        return op

    def _modifiers(self) -> dict[str, int]:
        """Instruction-wide modifiers: every non-operand field, by its LLVM name."""
        v = self.values
        p = self.plan
        enc = self.encoding
        mods = {n: v[n] for n in self.variant.modifier_names}
        if enc is Encoding.VOP3P and p.matrix:
            mods = {"cbsz": v["neg_hi"], "abid": v["opsel"] | v["opsel_hi2"] << 3,
                    "blgp": v["neg"]}
        if enc is Encoding.VOP3 and p.bitop3:
            mods.pop("omod", None)
            mods["bitop3"] = truth_table(v)
        if enc is Encoding.VOP3 and p.permlane_swap:
            mods.update(swap_controls(v))
        if self.extension is not None:
            for n in ("src0", "sdst"):
                mods.pop(n, None)
        if self.extension is SDWA_EXT and self.fmt.op_table == "VOPCOp":
            for n in ("dst_sel", "dst_unused", "clamp", "omod"):   # VOPC: bits 47:40 are sdst/sd
                mods.pop(n, None)
        if enc in (Encoding.GLOBAL, Encoding.SCRATCH) or (
                enc is Encoding.FLAT and self.fmt.fields["offset"].width in (13, 24)):
            mods["offset"] = _signed(v["offset"], self.fmt.fields["offset"].width)
        if p.branch:
            mods["target"] = self.address + 4 + 4 * _signed(v["simm16"], 16)
        return mods

    # -- VOPD -------------------------------------------------------------------------

    def _vopd_y(self) -> OpInfo:
        info = self.t.ops["VOPDOp"].get(self.values["opy"])
        if info is None:
            raise Undecodable("VOPD Y opcode")
        return info

    def _vopd_vdsty(self) -> int:
        v = self.values
        return (v["vdsty"] << 1) | ((v["vdstx"] & 1) ^ 1)

    def _vopd_side(self, info: OpInfo, side: str) -> tuple[list[Operand], list[Operand]]:
        """One half of a VOPD: operand types are given per opcode under the Y names."""
        v = self.values
        types = info.operands
        dst = vgpr(v["vdstx"] if side == "x" else self._vopd_vdsty(), types.get("vdsty"),
                   self.spec)
        uses = [self._vopd_src(v[f"src{side}0"], types.get("srcy0"))]
        if "vsrcy1" in types:
            uses.append(vgpr(v[f"vsrc{side}1"], types.get("vsrcy1"), self.spec))
        k = K_CONSTANT.match(info.name)
        if k is not None and self.literal is not None:
            lit = Operand(kind=OperandKind.LITERAL, value=self.literal, width=32)
            uses.insert(1, lit) if k.group("kind") == "MK" else uses.append(lit)
        return [dst], uses

    def _vopd_src(self, code: int, optype: OperandType | None) -> Operand:
        if code >= 256:
            return vgpr(code - 256, optype, self.spec)
        return scalar(code, optype, self.spec, self.literal)

    def _vopd_operands(self) -> tuple[list[Operand], list[Operand]]:
        dx, ux = self._vopd_side(self.info, "x")
        dy, uy = self._vopd_side(self._vopd_y(), "y")
        return dx + dy, ux + uy

    def _vopd_halves(self, defs: list[Operand], uses: list[Operand]
                     ) -> tuple[Instruction, Instruction]:
        out = []
        for info, side in ((self.info, "x"), (self._vopd_y(), "y")):
            d, u = self._vopd_side(info, side)
            out.append(Instruction(address=self.address, size=4 * self.ndwords,
                                   encoding=Encoding.VOPD, target=self.spec.name, opcode=info.name,
                                   mnemonic=info.mnemonic, defs=tuple(d), uses=tuple(u)))
        return out[0], out[1]


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _select(code: int) -> str:
    return _SELECTS[code] if code < len(_SELECTS) else f"SEL_{code}"


def _replace(op: Operand, **changes: Any) -> Operand:
    # most modifiers are off: the operand as it is, without re-running `__init__`
    for name, value in changes.items():
        if getattr(op, name) != value:
            return replace(op, **changes)
    return op
