"""One instruction of a known format and opcode → `Instruction` (`_Decoder`): its dwords
gathered (plus an SDWA/DPP extension dword and a literal where the operands ask for one),
each operand field turned into an `Operand` by the opcode's operand type, the instruction-wide
modifiers, VOPD's two halves. Which format and opcode to try, the per-process memo and the
section walk are `isa.decode`'s."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from rgpu_fuzz.sim.isa import vop3_dpp
from rgpu_fuzz.sim.isa.bitop3 import is_bitop3, truth_table
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
    special,
    vgpr,
)
from rgpu_fuzz.sim.isa.permlane_swap import is_permlane_swap, swap_controls
from rgpu_fuzz.sim.isa.tables import OperandType, OpInfo, TargetTables

_SDWA_CODE, _DPP16_CODE, _DPP8_CODE, _DPP8FI_CODE = 249, 250, 233, 234
_VOP_SHORT = frozenset({Encoding.VOP1, Encoding.VOP2, Encoding.VOPC})
_VOP_SHORT_TABLES = ("VOP1Op", "VOP2Op", "VOPCOp")
_TRUE16_PACKED = frozenset({Encoding.VOP1, Encoding.VOP2, Encoding.VOPC, Encoding.DPP,
                            Encoding.DPP8})
_MATRIX = re.compile(r"^V_S?MFMA")
_SELECTS = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")

# Opcodes with a constant dword that no operand field names (the "K" of *MK/*AK, the
# value of s_setreg_imm32): AMD's names say so (CDNA3 ISA §12.7 V_FMAMK_F32, §12.1
# S_SETREG_IMM32_B32). The group is where LLVM prints it among the uses.
K_CONSTANT = re.compile(r"^(?:V|S|V_DUAL)_(?:FMA|MAD)(?P<kind>MK|AK)_|^S_SETREG_IMM32")

# Fields that are written (defs); all other operand fields are read.
_DEF_FIELDS = frozenset({"vdst", "sdst", "vdstx", "vdsty"})
_STORE_PREFIXES = ("S_STORE", "S_BUFFER_STORE", "S_SCRATCH_STORE", "S_ATC_PROBE")
# SOPK opcodes whose sdst is only read (compare) or both read and written.
_SOPK_READS = re.compile(r"^S_CMPK_|^S_SETREG_")
_SOPK_RMW = re.compile(r"^S_(?:ADDK|MULK|CMOVK)_")



class _Ended(Undecodable):
    """The instruction's dwords run past the end of the words (see `decode_at_ended`)."""



class _Decoder:
    """Decodes one instruction of a known format and opcode."""

    def __init__(self, t: TargetTables, fmt: type[Format], info: OpInfo,
                 words: tuple[int, ...], i: int, address: int) -> None:
        self.t, self.spec, self.fmt, self.info = t, t.spec, fmt, info
        self.words, self.i, self.address = words, i, address
        self.encoding = fmt.encoding
        self.ndwords = fmt.dwords
        self.bits = self._gather(self.ndwords)
        self.values = fmt.decode_fields(self.bits)
        self.extension: type[_Extension] | None = None
        self.vop3_dpp = False
        self.plan = _plan(fmt, info)

    def _gather(self, ndwords: int) -> int:
        if self.i + ndwords > len(self.words):
            raise _Ended("truncated instruction")
        bits = 0
        for k in range(ndwords):
            bits |= self.words[self.i + k] << (32 * k)
        return bits

    # -- sizes: extension dword and literal -------------------------------------------

    def run(self) -> Instruction:
        plan = self.plan
        present = plan.present
        if self.encoding in _VOP_SHORT and "src0" in self.values:
            code = self.values["src0"]
            if code == _SDWA_CODE and self.spec.sdwa:
                self.encoding, self.extension = Encoding.SDWA, SDWA_EXT
            elif code == _DPP16_CODE:
                self.encoding, self.extension = Encoding.DPP, DPP16_EXT
            elif code in (_DPP8_CODE, _DPP8FI_CODE) and self.spec.dpp8:
                self.encoding, self.extension = Encoding.DPP8, DPP8_EXT
            if self.extension is not None:
                self.ndwords += 1
                self.bits = self._gather(self.ndwords)
                self.values.update({n: f.get(self.bits)
                                    for n, f in self.extension.fields.items()})
                if self.extension is DPP8_EXT:
                    self.values["fi"] = int(code == _DPP8FI_CODE)   # RDNA3 §7.7: code 234
        elif self.encoding in (Encoding.VOP3, Encoding.VOP3SD) and self.spec.dpp8 and (
                dpp3 := vop3_dpp.extension(self.values.get("src0", -1))) is not None:
            self.ndwords += 1                       # GFX11 VOP3 DPP (`isa.vop3_dpp`)
            self.bits = self._gather(self.ndwords)
            self.values.update(vop3_dpp.fields(dpp3, self.bits, self.values["src0"]))
            self.vop3_dpp = True
        literal = None
        k_match = plan.k_match
        needs_literal = k_match is not None or (
            self.extension is None
            and any(self.values[n] == LITERAL_CODE for n in plan.source_fields)
            and (self.encoding not in (Encoding.VOP3, Encoding.VOP3SD, Encoding.VOP3P)
                 or self.spec.vop3_literal))
        if self.encoding is Encoding.VOPD:
            k_match = k_match or K_CONSTANT.match(self._vopd_y().name)
            needs_literal = k_match is not None or LITERAL_CODE in (
                self.values["srcx0"], self.values["srcy0"])
        if needs_literal:
            if self.i + self.ndwords >= len(self.words):
                raise _Ended("literal past the end of the section")
            literal = self.words[self.i + self.ndwords]
            self.ndwords += 1
        self.literal = literal
        defs, uses = self._operands(present, k_match)
        modifiers = self._modifiers()
        halves: tuple[Instruction, ...] = ()
        opcode, mnemonic = self.info.name, self._mnemonic()
        if self.vop3_dpp:
            mnemonic = vop3_dpp.mnemonic(self.info.mnemonic)
        if self.encoding is Encoding.VOPD:
            halves = self._vopd_halves(defs, uses)
            opcode = f"{halves[0].opcode}::{halves[1].opcode}"
            mnemonic = f"{halves[0].mnemonic}::{halves[1].mnemonic}"
        fields = dict(self.values)
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
        if self.info.suffix is not None and enc in _VOP_SHORT:
            return base + self.info.suffix
        if not self.info.operands:
            return base                    # v_nop, v_clrexcp: LLVM prints no suffix
        if enc in _VOP_SHORT:
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
            return special(Special.OFF)
        return Operand(kind=OperandKind.VGPR, index=raw, count=count)

    def _acc(self, name: str) -> bool:
        """CDNA memory formats: `acc` selects AGPRs for the data operands."""
        return bool(self.values.get("acc")) and name in ("vdst", "data", "vdata", "data0",
                                                         "data1")

    def _operands(self, present: Sequence[str], k_match: re.Match | None
                  ) -> tuple[list[Operand], list[Operand]]:
        enc = self.encoding
        if enc is Encoding.VOPD:
            return self._vopd_operands()
        defs: list[Operand] = []
        uses: list[Operand] = []
        name = self.info.name
        no_return = self._atomic_without_return()
        for fname, optype in zip(present, self.plan.optypes, strict=True):
            if optype is not None and optype.type == "OPR_EXEC":
                continue                       # gfx11 v_cmpx: writes EXEC, not printed
            if fname == "vdst" and no_return:
                continue
            if enc is Encoding.SMEM and fname == "soffset":
                uses.extend(self._smem_offset(optype))
                continue
            if fname in ("addr", "saddr") and enc in (Encoding.GLOBAL, Encoding.SCRATCH,
                                                      Encoding.FLAT):
                uses.append(self._flat_address(fname, optype))
                continue
            if (fname == "simm16" or self.fmt.fields[fname].kind is FieldKind.PLAIN
                    or (optype is not None and optype.type.startswith(("OPR_SIMM",
                                                                       "OPR_SENDMSG")))):
                # an immediate in an operand field (s_set_gpr_idx_on's mode, s_atc_probe's
                # probe kind): the XML's operand type says so
                uses.append(self._immediate(fname, optype))
                continue
            operand = self._field_operand(fname, optype)
            operand = self._with_modifiers(fname, operand)
            is_def = fname in _DEF_FIELDS or (fname == "sdata" and not name.startswith(
                _STORE_PREFIXES)) or (fname == "vdata" and self._buffer_writes_vdata())
            if enc is Encoding.SOPK and fname == "sdst":
                if _SOPK_READS.match(name):
                    is_def = False
                elif _SOPK_RMW.match(name):
                    defs.append(operand)
                    continue
            (defs if is_def else uses).append(operand)
        self._implicit_vcc(defs, uses)
        if k_match is not None and self.literal is not None:
            k = Operand(kind=OperandKind.LITERAL, value=self.literal, width=32)
            if k_match.group("kind") == "MK":
                uses.insert(1, k)                  # v_fmamk_f32 vdst, src0, K, vsrc1
            else:
                uses.append(k)                     # v_fmaak_f32 vdst, src0, vsrc1, K
        return defs, uses

    def _buffer_writes_vdata(self) -> bool:
        """MUBUF/MTBUF: vdata is the destination of loads and of returning atomics."""
        name = self.info.name
        if "_LOAD_" in name:
            return True
        return "_ATOMIC_" in name and self._returns()

    def _returns(self) -> bool:
        """An atomic's return bit: GLC (GFX9, RDNA3), SC0 (gfx940+), TH bit 0
        (TH_ATOMIC_RETURN, RDNA4 ISA "Memory Scope and Temporal Hints")."""
        v = self.values
        if "th" in v:
            return bool(v["th"] & 1)
        return bool(v.get("sc0", v.get("glc", 0)))

    def _atomic_without_return(self) -> bool:
        """A memory atomic returns the pre-op value only with GLC (SC0 on gfx940+): CDNA3
        ISA §10.1 "FLAT ... atomics: SC0=1 returns", RDNA3 ISA §10.1 "GLC=1 returns"."""
        if "_ATOMIC_" not in self.info.name or self.encoding not in (
                Encoding.FLAT, Encoding.GLOBAL, Encoding.SCRATCH):
            return False
        return not self._returns()

    def _implicit_vcc(self, defs: list[Operand], uses: list[Operand]) -> None:
        """`vcc` that LLVM prints for VOPC and carry VOP2 in 32-bit, SDWA and DPP forms.

        Which VOP2 opcodes have a carry is read from the tables: their VOP3 form has an
        `sdst` (carry out) or a lane-mask `src2` (carry in / condition).
        """
        enc = self.encoding
        if enc not in (Encoding.VOP2, Encoding.VOPC, Encoding.SDWA, Encoding.DPP,
                       Encoding.DPP8):
            return
        vcc = special(Special.VCC_LO, self.spec.wave_size // 32)
        name = self.info.name
        if self.fmt.op_table == "VOPCOp":
            long_form = self.t.by_name["VOP3Op"].get(name)
            writes_exec_only = long_form is not None and any(
                o.type == "OPR_EXEC" for o in long_form.operands.values())
            if enc is Encoding.SDWA and self.values.get("sd"):
                code = self.values["sdst"]
                defs.insert(0, scalar(code, OperandType(64, "OPR_SREG", "FMT_NUM_M64"),
                                      self.spec))
            elif not writes_exec_only:
                defs.insert(0, vcc)
            return
        if self.fmt.op_table != "VOP2Op":
            return
        long_form = self.t.by_name["VOP3SDOp"].get(name) or self.t.by_name["VOP3Op"].get(name)
        if long_form is None:
            return
        if "sdst" in long_form.operands:
            defs.append(vcc)
        src2 = long_form.operands.get("src2")
        if src2 is not None and src2.fmt == "FMT_NUM_M64":
            uses.append(vcc)

    def _immediate(self, fname: str, optype: OperandType | None) -> Operand:
        raw = self.values[fname]
        return Operand(kind=OperandKind.IMM, value=raw, width=self.fmt.fields[fname].width)

    def _smem_offset(self, optype: OperandType | None) -> list[Operand]:
        """SMEM address offset: an immediate, an SGPR, or both (CDNA3 §4.2, RDNA3 §5.2)."""
        v = self.values
        out: list[Operand] = []
        offset = v["offset"]
        if "imm" in v:                          # CDNA: imm / soffset_en select the forms
            if v["imm"]:
                if v["soffset_en"]:
                    out.append(scalar(v["soffset"], None, self.spec))
                out.append(Operand(kind=OperandKind.IMM, value=_signed(offset, 21), width=21))
            elif v["soffset_en"]:
                out.append(scalar(v["soffset"], None, self.spec))
            else:
                out.append(scalar(offset & 0xFF, None, self.spec))
            return out
        soffset = scalar(v["soffset"], None, self.spec)
        out.append(soffset)
        width = self.fmt.fields["offset"].width          # 21 bits on RDNA3, 24 on RDNA4
        out.append(Operand(kind=OperandKind.IMM, value=_signed(offset, width), width=width))
        return out

    def _flat_address(self, fname: str, optype: OperandType | None) -> Operand:
        """FLAT-family address operands: `off` where the encoding leaves one out."""
        v = self.values
        if fname == "saddr":
            if self.encoding is Encoding.FLAT:
                return special(Special.OFF)
            if v["saddr"] in (0x7F, 0x7C) and self._saddr_off(v["saddr"]):
                return special(Special.OFF)
            return scalar(v["saddr"], optype, self.spec)
        # addr
        if self.encoding is Encoding.SCRATCH and not self._scratch_has_vaddr():
            return special(Special.OFF)
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
        """Source modifiers of VOP3/VOP3P/SDWA/DPP onto the operand they apply to."""
        v = self.values
        enc = self.encoding
        index = {"src0": 0, "src1": 1, "vsrc1": 1, "src2": 2}.get(fname)
        if enc is Encoding.VOP3P and _MATRIX.match(self.info.name):
            return self._matrix_operand(fname, op)
        if enc is Encoding.VOP3 and index is not None and is_bitop3(self.info.name):
            return _replace(op, hi=bool(v["opsel"] >> index & 1))   # no abs/neg: the table
        if enc is Encoding.VOP3 and index is not None and is_permlane_swap(self.info.name):
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
            p = f"src{index}"
            if v[f"s{index}"]:
                code = v["src0"] if index == 0 else v["vsrc1"]
                op = scalar(code, self._optype(fname), self.spec)
            elif index == 0:
                op = vgpr(v["src0"], self._optype(fname), self.spec)
            return _replace(op, neg=bool(v[f"{p}_neg"]), abs=bool(v[f"{p}_abs"]),
                            sext=bool(v[f"{p}_sext"]), sel=_select(v[f"{p}_sel"]))
        if enc in (Encoding.DPP, Encoding.DPP8) and index is not None and index < 2:
            if index == 0:   # bit 7 of a true16 SRC0 selects the high half, as in VOP1/2/C
                op = vgpr(v["src0"], self._optype(fname), self.spec,
                          packed_half=self.spec.true16)
            if enc is Encoding.DPP:
                p = f"src{index}"
                return _replace(op, neg=bool(v[f"{p}_neg"]), abs=bool(v[f"{p}_abs"]))
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
        mods = {n: v[n] for n in _modifier_names(self.fmt, tuple(v))}
        if self.encoding is Encoding.VOP3P and _MATRIX.match(self.info.name):
            mods = {"cbsz": v["neg_hi"], "abid": v["opsel"] | v["opsel_hi2"] << 3,
                    "blgp": v["neg"]}
        if self.encoding is Encoding.VOP3 and is_bitop3(self.info.name):
            mods.pop("omod", None)
            mods["bitop3"] = truth_table(v)
        if self.encoding is Encoding.VOP3 and is_permlane_swap(self.info.name):
            mods.update(swap_controls(v))
        if self.extension is not None:
            for n in ("src0", "sdst"):
                mods.pop(n, None)
        if self.extension is SDWA_EXT and self.fmt.op_table == "VOPCOp":
            for n in ("dst_sel", "dst_unused", "clamp", "omod"):   # VOPC: bits 47:40 are sdst/sd
                mods.pop(n, None)
        if self.encoding in (Encoding.GLOBAL, Encoding.SCRATCH) or (
                self.encoding is Encoding.FLAT and self.fmt.fields["offset"].width in (13, 24)):
            mods["offset"] = _signed(v["offset"], self.fmt.fields["offset"].width)
        if self.encoding is Encoding.SOPP and self._optype("simm16") is not None and (
                self.info.operands["simm16"].type == "OPR_LABEL"):
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


_MODIFIER_NAMES: dict[tuple[type[Format], tuple[str, ...]], tuple[str, ...]] = {}
_NOT_MODIFIERS: dict[type[Format], frozenset[str]] = {}
# memos keyed by format class (a dict, not `functools.cache`, whose typing wants `Hashable`
# arguments and does not take a class object for one)


def _modifier_names(fmt: type[Format], names: tuple[str, ...]) -> tuple[str, ...]:
    """Of the fields `names` decoded for `fmt` (with an extension dword's), the
    instruction-wide modifiers, in field order."""
    got = _MODIFIER_NAMES.get((fmt, names))
    if got is None:
        skip = _not_modifiers(fmt)
        got = _MODIFIER_NAMES[(fmt, names)] = tuple(
            n for n in names
            if n not in skip and not n.startswith(("src0_", "src1_", "s0", "s1")))
    return got


@dataclass(slots=True)
class _Plan:
    """What decoding an opcode of a format needs that its field values do not change,
    computed once per (format, opcode): the operand fields it has in LLVM's order with
    their operand types, which of them are sources (a literal follows for code 255), the
    K constant of *MK/*AK, and LLVM's spelling per encoding (filled in as met)."""

    info: OpInfo
    present: tuple[str, ...]
    optypes: tuple[OperandType | None, ...]
    source_fields: tuple[str, ...]
    k_match: re.Match[str] | None
    mnemonics: dict[Encoding, str]


_PLANS: dict[tuple[type[Format], int], _Plan] = {}


def _plan(fmt: type[Format], info: OpInfo) -> _Plan:
    got = _PLANS.get((fmt, id(info)))
    if got is not None and got.info is info:
        return got
    ops = info.operands
    if fmt.encoding is Encoding.VOPD:
        present = tuple(fmt.asm_order)
    else:
        present = tuple(name for name in fmt.asm_order if name in ops)
    sources = tuple(n for n in present if fmt.fields[n].kind in (FieldKind.SRC, FieldKind.SSRC))
    got = _Plan(info, present, tuple(ops.get(n) for n in present), sources,
                K_CONSTANT.match(info.name), {})
    _PLANS[(fmt, id(info))] = got
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
