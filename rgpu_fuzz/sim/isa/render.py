"""Renders an `Instruction` in LLVM's AMDGPU assembly syntax (as `llvm-objdump -d` prints it).

The syntax rules follow LLVM's AMDGPUInstPrinter: registers `v5`, `s[4:5]`, `vcc`,
constants as LLVM spells them (inline floats as decimals, 1/(2*pi) as `0.15915494`,
literals in hex), source modifiers `-|x|`, and the instruction-wide modifiers after the
operands in LLVM's order. Special immediate operands (`s_waitcnt`, `s_delay_alu`,
`s_waitcnt_depctr`, `hwreg`, `sendmsg`) are printed from their bit layouts by
`isa.render_imm`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from rgpu_fuzz.sim.isa.bitop3 import render_bitop3
from rgpu_fuzz.sim.isa.decode import K_CONSTANT
from rgpu_fuzz.sim.isa.instruction import Encoding, Instruction, Operand, OperandKind, Special
from rgpu_fuzz.sim.isa.permlane_swap import is_permlane_swap, render_swap_controls
from rgpu_fuzz.sim.isa.render_cpol import gfx12_cache_policy
from rgpu_fuzz.sim.isa.render_imm import (
    _delay_alu,
    _depctr,
    _gpr_idx,
    _hwreg,
    _rtn_messages,
    _sendmsg,
    _swizzle,
    _waitcnt,
)
from rgpu_fuzz.sim.isa.tables import tables

__all__ = ["render", "render_operand"]

_SPECIAL_NAMES: Mapping[Special, str] = MappingProxyType({
    Special.VCC_LO: "vcc_lo", Special.VCC_HI: "vcc_hi", Special.EXEC_LO: "exec_lo",
    Special.EXEC_HI: "exec_hi", Special.M0: "m0", Special.SCC: "scc",
    Special.FLAT_SCRATCH_LO: "flat_scratch_lo", Special.FLAT_SCRATCH_HI: "flat_scratch_hi",
    Special.XNACK_MASK_LO: "xnack_mask_lo", Special.XNACK_MASK_HI: "xnack_mask_hi",
    Special.NULL: "null", Special.OFF: "off", Special.VCCZ: "vccz", Special.EXECZ: "execz",
    Special.SRC_SHARED_BASE: "src_shared_base", Special.SRC_SHARED_LIMIT: "src_shared_limit",
    Special.SRC_PRIVATE_BASE: "src_private_base",
    Special.SRC_PRIVATE_LIMIT: "src_private_limit",
    Special.SRC_POPS_EXITING_WAVE_ID: "src_pops_exiting_wave_id",
    Special.LDS_DIRECT: "src_lds_direct", Special.SRC_SCC: "src_scc",
    Special.SRC_EXECZ: "src_execz", Special.SRC_VCCZ: "src_vccz",
})
_PAIR_NAMES: Mapping[Special, str] = MappingProxyType({
    Special.VCC_LO: "vcc", Special.EXEC_LO: "exec", Special.FLAT_SCRATCH_LO: "flat_scratch",
    Special.XNACK_MASK_LO: "xnack_mask",
})
_FLOAT_TEXT: Mapping[tuple[int, int], str] = MappingProxyType({
    **{(w, b): t for w, bits_text in (
        (16, ((0x3800, "0.5"), (0xB800, "-0.5"), (0x3C00, "1.0"), (0xBC00, "-1.0"),
              (0x4000, "2.0"), (0xC000, "-2.0"), (0x4400, "4.0"), (0xC400, "-4.0"),
              (0x3118, "0.15915494"))),
        (32, ((0x3F000000, "0.5"), (0xBF000000, "-0.5"), (0x3F800000, "1.0"),
              (0xBF800000, "-1.0"), (0x40000000, "2.0"), (0xC0000000, "-2.0"),
              (0x40800000, "4.0"), (0xC0800000, "-4.0"), (0x3E22F983, "0.15915494"))),
        (64, ((0x3FE0000000000000, "0.5"), (0xBFE0000000000000, "-0.5"),
              (0x3FF0000000000000, "1.0"), (0xBFF0000000000000, "-1.0"),
              (0x4000000000000000, "2.0"), (0xC000000000000000, "-2.0"),
              (0x4010000000000000, "4.0"), (0xC010000000000000, "-4.0"),
              (0x3FC45F306DC9C882, "0.15915494"))),
    ) for b, t in bits_text},
})

_OMOD = {1: " mul:2", 2: " mul:4", 3: " div:2"}


def _register(prefix: str, op: Operand) -> str:
    if op.count == 1:
        return f"{prefix}{op.index}"
    return f"{prefix}[{op.index}:{op.index + op.count - 1}]"


def _inlinable(op: Operand) -> bool:
    """Whether the literal's value is one an inline constant reads as (ISA "Scalar
    Operands": integers -16..64 at the operand's width, the float constants)."""
    value = op.value
    if value >> (op.width - 1) & 1:
        value -= 1 << op.width
    # 16-bit: only the integers (LLVM 22 prints `v_mov_b16_e32 v0.l, 0x4400` plainly)
    return -16 <= value <= 64 or (op.width != 16 and (op.width, op.value) in _FLOAT_TEXT)


def render_operand(op: Operand, true16: bool = False, *, mark_lit: bool = True) -> str:
    """One operand in LLVM syntax, with its source modifiers.

    `true16`: the target names the halves of 16-bit VGPR operands (`v1.l`, `v1.h`).
    `mark_lit`: a literal an inline constant could encode prints as `lit(...)` (false for
    the K constant of *MK/*AK opcodes, which is always a literal).
    """
    k = op.kind
    if k is OperandKind.VGPR:
        text = _register("v", op)
        if true16 and op.width == 16:
            text += ".h" if op.hi else ".l"
    elif k is OperandKind.SGPR:
        text = _register("s", op)
    elif k is OperandKind.AGPR:
        text = _register("a", op)
    elif k is OperandKind.TTMP:
        text = _register("ttmp", op)
    elif k is OperandKind.SPECIAL:
        which = Special(op.index)
        text = _PAIR_NAMES.get(which, "") if op.count == 2 else ""
        text = text or _SPECIAL_NAMES[which]
    elif k is OperandKind.INLINE_INT:
        value = op.value
        if value >> (op.width - 1) & 1:
            value -= 1 << op.width
        text = str(value)
    elif k is OperandKind.INLINE_FLOAT:
        text = _FLOAT_TEXT.get((op.width, op.value), hex(op.value))
    elif k is OperandKind.LITERAL:
        value = op.value >> 32 if op.width == 64 and op.value & 0xFFFFFFFF == 0 and (
            op.value >> 32) else op.value
        text = f"0x{value:x}"
        if mark_lit and _inlinable(op):
            text = f"lit({text})"      # LLVM marks a literal an inline constant could encode
    else:
        text = str(op.value)
    if op.sext:
        text = f"sext({text})"
    if op.abs:
        text = f"|{text}|"
    if op.neg:
        text = f"-{text}"
    return text


def render(inst: Instruction) -> str:
    """The instruction as LLVM prints it (without objdump's address comment)."""
    if inst.encoding is Encoding.UNKNOWN:
        return f".long 0x{inst.words[0]:08x}"
    if inst.encoding is Encoding.VOPD:
        return " :: ".join(_plain(h) for h in inst.halves)
    renderer = _BY_ENCODING.get(inst.encoding, _vector)
    return renderer(inst)


def _true16(inst: Instruction) -> bool:
    """Halves are named on true16 targets, except in VOP3P (whose 16-bit operands are
    lanes of packed registers, selected by op_sel)."""
    return tables(inst.target).spec.true16 and inst.encoding is not Encoding.VOP3P


def _plain(inst: Instruction) -> str:
    t16 = _true16(inst)
    mark = K_CONSTANT.match(inst.opcode) is None
    ops = ", ".join(render_operand(o, t16, mark_lit=mark) for o in (*inst.defs, *inst.uses))
    return f"{inst.mnemonic} {ops}" if ops else inst.mnemonic


def _family(inst: Instruction) -> str:
    return tables(inst.target).spec.family


def _optype(inst: Instruction, field: str) -> str:
    t = tables(inst.target)
    table = {Encoding.SOPP: "SOPPOp", Encoding.SOPK: "SOPKOp"}[inst.encoding]
    info = t.by_name[table].get(inst.opcode)
    spec = info.operands.get(field) if info is not None else None
    return spec.type if spec is not None else ""


def _sopp(inst: Instruction) -> str:
    if not inst.uses:
        return inst.mnemonic
    imm = inst.uses[0].value
    kind = _optype(inst, "simm16")
    if kind == "OPR_LABEL":
        text = str(imm)                  # LLVM prints the raw simm16, unsigned
    elif kind == "OPR_WAITCNT":
        text = _waitcnt(imm, _family(inst))
    elif kind == "OPR_DELAY":
        text = _delay_alu(imm)
    elif kind == "OPR_WAITCNT_DEPCTR":
        text = _depctr(imm)
    elif kind == "OPR_WAIT_ALU":          # RDNA4 s_wait_alu: hex when reserved bits 6:5 are set
        text = f"0x{imm:x}" if imm & 0x60 else _depctr(imm)
    elif inst.opcode == "S_BARRIER_WAIT":   # decimal while an inline integer, else hex
        text = str(imm) if imm <= 64 else f"0x{imm:x}"
    elif kind == "OPR_SENDMSG":
        text = _sendmsg(imm, _family(inst))
    elif kind == "OPR_CLAUSE" or inst.opcode in _HEX_SIMM16:
        text = f"0x{imm:x}"
    elif inst.opcode == "S_SET_GPR_IDX_MODE":
        text = _gpr_idx(imm)
    else:
        text = str(imm)
    return f"{inst.mnemonic} {text}"


# SOPP immediates LLVM prints in hex (AMDGPUInstPrinter: printU16ImmOperand vs. decimal).
_HEX_SIMM16 = frozenset({"S_SET_INST_PREFETCH_DISTANCE", "S_WAIT_EVENT", "S_ROUND_MODE",
                         "S_TTRACEDATA_IMM",
                         # RDNA4's split wait counters (printed `s_wait_loadcnt 0x0`)
                         "S_WAIT_LOADCNT", "S_WAIT_STORECNT", "S_WAIT_SAMPLECNT",
                         "S_WAIT_BVHCNT", "S_WAIT_EXPCNT", "S_WAIT_DSCNT", "S_WAIT_KMCNT",
                         "S_WAIT_LOADCNT_DSCNT", "S_WAIT_STORECNT_DSCNT"})


def _sop1(inst: Instruction) -> str:
    if inst.uses and inst.uses[0].kind is OperandKind.IMM:     # s_sendmsg_rtn_b32/_b64
        dst = render_operand(inst.defs[0])
        msg = inst.uses[0].value
        name = _rtn_messages(_family(inst)).get(msg)
        text = f"sendmsg({name})" if name else _sendmsg(msg, _family(inst))
        return f"{inst.mnemonic} {dst}, {text}"
    return _plain(inst)


def _sopc(inst: Instruction) -> str:
    if inst.opcode == "S_SET_GPR_IDX_ON":
        return f"{inst.mnemonic} {render_operand(inst.uses[0])}, {_gpr_idx(inst.uses[1].value)}"
    return _plain(inst)


def _sopk(inst: Instruction) -> str:
    kind = _optype(inst, "simm16")
    imm_op = next((o for o in inst.uses if o.kind is OperandKind.IMM), None)
    regs = [render_operand(o) for o in (*inst.defs, *inst.uses)
            if o.kind not in (OperandKind.IMM, OperandKind.LITERAL)]
    if imm_op is None:
        return _plain(inst)
    if kind == "OPR_HWREG":
        imm = _hwreg(inst, imm_op.value)
        parts = [*regs, imm] if inst.defs else [imm, *regs]
        lit = inst.fields.get("literal")
        if lit is not None and not regs:
            parts = [imm, _FLOAT_TEXT.get((32, lit), f"0x{lit:x}")]
    elif kind == "OPR_LABEL":
        v = imm_op.value
        parts = [*regs, str(v - 0x10000 if v & 0x8000 else v)]
    else:
        parts = [*regs, f"0x{imm_op.value:x}"]
    return f"{inst.mnemonic} {', '.join(parts)}"


def _smem(inst: Instruction) -> str:
    ops = [render_operand(o) for o in inst.defs]
    uses = list(inst.uses)
    # s_atc_probe's first operand is an immediate (the probe kind), printed in place
    if uses and uses[0].kind is OperandKind.IMM and len(uses) > 1:
        ops.append(str(uses.pop(0).value))
    imm = next((o for o in uses if o.kind is OperandKind.IMM), None)
    regs = [o for o in uses if o.kind is not OperandKind.IMM]
    ops += [render_operand(o) for o in regs]
    mods = ""
    family = _family(inst)
    if family == "rdna4":                         # a signed 24-bit offset, printed signed
        soffset = regs[-1] if regs else None
        is_null = soffset is not None and soffset.kind is OperandKind.SPECIAL and Special(
            soffset.index) is Special.NULL
        value = imm.value if imm is not None else 0
        text = f"-0x{-value:x}" if value < 0 else f"0x{value:x}"
        if is_null:
            ops[-1] = text
        elif soffset is not None:                 # LLVM prints the offset, 0 included
            mods += f" offset:{text}"
        mods += gfx12_cache_policy(inst.opcode, inst.modifiers)
    elif family == "rdna3":
        soffset = regs[-1] if regs else None
        is_null = soffset is not None and soffset.kind is OperandKind.SPECIAL and Special(
            soffset.index) is Special.NULL
        if is_null and imm is not None and imm.value != 0:
            ops[-1] = f"0x{imm.value & 0x1FFFFF:x}"
        elif imm is not None and imm.value != 0:
            mods += f" offset:0x{imm.value & 0x1FFFFF:x}"
    elif imm is not None:
        if len(regs) > 1 + (0 if inst.defs else 1):
            mods += f" offset:0x{imm.value & 0x1FFFFF:x}"
        else:
            ops.append(f"0x{imm.value & 0x1FFFFF:x}")
    for name in ("glc", "dlc", "nv"):
        if inst.modifiers.get(name):
            mods += f" {name}"
    return f"{inst.mnemonic} {', '.join(ops)}{mods}" if ops else f"{inst.mnemonic}{mods}"


def _ds(inst: Instruction) -> str:
    ops = ", ".join(render_operand(o) for o in (*inst.defs, *inst.uses))
    m = inst.modifiers
    mods = ""
    if "2" in inst.opcode.split("_")[1] or inst.opcode.startswith(("DS_WRITE2", "DS_READ2",
                                                                   "DS_STORE_2", "DS_LOAD_2",
                                                                   "DS_WRXCHG2", "DS_STOREXCHG_2")):
        if m.get("offset0"):
            mods += f" offset0:{m['offset0']}"
        if m.get("offset1"):
            mods += f" offset1:{m['offset1']}"
    else:
        offset = m.get("offset0", 0) | m.get("offset1", 0) << 8
        if offset and inst.opcode == "DS_SWIZZLE_B32":
            mods += f" offset:{_swizzle(offset)}"
        elif offset:
            mods += f" offset:{offset}"
    if m.get("gds"):
        mods += " gds"
    return f"{inst.mnemonic} {ops}{mods}" if ops else f"{inst.mnemonic}{mods}"


# Cache-policy bits in LLVM's order (printCPol: GLC/SC0, SLC/NT, DLC, SCC/SC1).
_CACHE_BITS = ("sc0", "glc", "nt", "slc", "dlc", "sc1", "scc")


def _flat(inst: Instruction) -> str:
    ops = [render_operand(o) for o in (*inst.defs, *inst.uses)]
    if inst.encoding is Encoding.FLAT and ops and ops[-1] == "off":
        ops.pop()
    m = inst.modifiers
    mods = ""
    if m.get("offset"):
        mods += f" offset:{m['offset']}"
    for name in _CACHE_BITS:
        if m.get(name):
            mods += f" {name}"
    if "th" in m:
        mods += gfx12_cache_policy(inst.opcode, m)
    return f"{inst.mnemonic} {', '.join(ops)}{mods}" if ops else f"{inst.mnemonic}{mods}"


def _mubuf(inst: Instruction) -> str:
    ops = [render_operand(o) for o in (*inst.defs, *inst.uses)]
    m = inst.modifiers
    mods = _buffer_format(inst)
    if m.get("idxen"):
        mods += " idxen"
    if m.get("offen"):
        mods += " offen"
    if m.get("offset"):
        mods += f" offset:{m['offset']}"
    info = tables(inst.target).by_name[f"{inst.encoding.value}Op"].get(inst.opcode)
    if info is None or info.prints_cache_policy:
        for name in _CACHE_BITS:
            if m.get(name):
                mods += f" {name}"
    if "th" in m:
        mods += gfx12_cache_policy(inst.opcode, m)
    if m.get("lds"):
        mods += " lds"
    if not ops:
        return f"{inst.mnemonic}{mods}"
    return f"{inst.mnemonic} {', '.join(ops)}{mods}"


_DATA_FORMATS = ("INVALID", "8", "16", "8_8", "32", "16_16", "10_11_11", "11_11_10",
                 "10_10_10_2", "2_10_10_10", "8_8_8_8", "32_32", "16_16_16_16", "32_32_32",
                 "32_32_32_32", "RESERVED_15")
_NUM_FORMATS = ("UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT")


def _buffer_format(inst: Instruction) -> str:
    """MTBUF's `format:[BUF_DATA_FORMAT_*,BUF_NUM_FORMAT_*]` (GCN5/CDNA split format, CDNA3
    ISA §9.1.5); the default (DATA_FORMAT_8, NUM_FORMAT_UNORM) and defaulted halves are
    left out, as LLVM does."""
    f = inst.fields
    if "dfmt" not in f:
        return ""
    dfmt, nfmt = f["dfmt"], f["nfmt"]
    parts = []
    if dfmt != 1:
        parts.append(f"BUF_DATA_FORMAT_{_DATA_FORMATS[dfmt]}")
    if nfmt != 0:
        parts.append(f"BUF_NUM_FORMAT_{_NUM_FORMATS[nfmt]}")
    return f" format:[{','.join(parts)}]" if parts else ""


def _vector(inst: Instruction) -> str:
    t16 = _true16(inst)
    operands = (*inst.defs, *inst.uses)
    if inst.encoding is Encoding.VOP3P and "_MIX" not in inst.opcode:
        # packed math: negation is per half, printed as neg_lo/neg_hi, not as a prefix
        operands = tuple(replace(o, neg=False) for o in operands)
    mark = K_CONSTANT.match(inst.opcode) is None
    ops = ", ".join(render_operand(o, t16, mark_lit=mark) for o in operands)
    m = inst.modifiers
    mods = ""
    enc = inst.encoding
    if enc is Encoding.VOP3P and "cbsz" in m:
        mods += "".join(f" {k}:{m[k]}" for k in ("cbsz", "abid", "blgp") if m[k])
        m = {}
    elif enc is Encoding.VOP3P and _has_op_sel(inst):
        mods += _vop3p_mods(inst)
    elif enc in (Encoding.VOP3, Encoding.VOP3SD):
        if "bitop3" in m:
            mods += render_bitop3(m["bitop3"])
        if is_permlane_swap(inst.opcode):
            mods += render_swap_controls(inst.fields)
        else:
            mods += _vop3_op_sel(inst)
    if m.get("clamp"):
        mods += " clamp"
    if m.get("omod"):
        mods += _OMOD[m["omod"]]
    if enc is Encoding.SDWA:
        mods += _sdwa_mods(inst)
    if enc is Encoding.DPP or (enc is not Encoding.DPP8 and "dpp_ctrl" in inst.fields):
        mods += _dpp_mods(inst)             # a GFX11 VOP3 DPP's too (`isa.vop3_dpp`)
    if enc is Encoding.DPP8 or "lane_sel" in inst.fields:
        sel = inst.fields["lane_sel"]
        mods += f" dpp8:[{','.join(str(sel >> (3 * i) & 7) for i in range(8))}]"
        if inst.fields.get("fi"):
            mods += " fi:1"
    return f"{inst.mnemonic} {ops}{mods}" if ops else f"{inst.mnemonic}{mods}"


def _vop3_op_sel(inst: Instruction) -> str:
    """`op_sel:[src0,src1(,src2),dst]`: one entry per source operand slot (a MAC's tied
    src2 counts), then the destination's when there is a written operand."""
    opsel = inst.fields.get("opsel", 0)
    if not opsel:
        return ""
    info = tables(inst.target).by_name["VOP3Op"].get(inst.opcode)
    if info is not None and not info.prints_op_sel:
        return ""
    n = len(inst.uses) + (1 if _MAC.search(inst.opcode) else 0)
    bits = [str(opsel >> i & 1) for i in range(n)]
    if inst.defs:
        bits.append(str(opsel >> 3 & 1))
    return f" op_sel:[{','.join(bits)}]"


_MAC = re.compile(r"^V_(?:FMAC|MAC)_")


def _has_op_sel(inst: Instruction) -> bool:
    """VOP3P opcodes with 16-bit or packed sources take op_sel/neg modifiers in LLVM's
    syntax; the others (dot4/dot8 of bytes, MFMA, accvgpr moves) take none."""
    info = tables(inst.target).by_name["VOP3POp"].get(inst.opcode)
    if info is None or "_MIX" in inst.opcode:
        return True
    return any(t.fmt.startswith(("FMT_NUM_PK2_", "FMT_NUM_F16", "FMT_NUM_BF16"))
               for name, t in info.operands.items() if name.startswith("src"))


def _vop3p_mods(inst: Instruction) -> str:
    f = inst.fields
    n = len(inst.uses)
    opsel = [f["opsel"] >> i & 1 for i in range(n)]
    opsel_hi_bits = f["opsel_hi"] | f["opsel_hi2"] << 2
    opsel_hi = [opsel_hi_bits >> i & 1 for i in range(n)]
    neg_lo = [f["neg"] >> i & 1 for i in range(n)]
    neg_hi = [f["neg_hi"] >> i & 1 for i in range(n)]
    # v_fma_mix*: op_sel_hi selects an f16 source (default 0: all f32), LLVM prints it
    # when set; for packed math the default is all ones.
    mix = "_MIX" in inst.opcode
    out = ""
    if any(opsel):
        out += f" op_sel:[{','.join(map(str, opsel))}]"
    if (mix and any(opsel_hi)) or (not mix and not all(opsel_hi)):
        out += f" op_sel_hi:[{','.join(map(str, opsel_hi))}]"
    if mix:
        return out                 # neg/abs are printed on the operands
    if any(neg_lo):
        out += f" neg_lo:[{','.join(map(str, neg_lo))}]"
    if any(neg_hi):
        out += f" neg_hi:[{','.join(map(str, neg_hi))}]"
    return out


_DST_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")


def _sdwa_mods(inst: Instruction) -> str:
    f = inst.fields
    out = ""
    sels = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")
    if inst.opcode.startswith("V_CMP") or inst.mnemonic.startswith("v_cmp"):
        pass
    else:
        out += f" dst_sel:{sels[f['dst_sel']] if f['dst_sel'] < 7 else f['dst_sel']}"
        out += f" dst_unused:{_DST_UNUSED[f['dst_unused']] if f['dst_unused'] < 3 else 3}"
    for i, op in enumerate(inst.uses[:2]):
        if op.sel:
            out += f" src{i}_sel:{op.sel}"
    return out


def _dpp_mods(inst: Instruction) -> str:
    f = inst.fields
    ctrl = f["dpp_ctrl"]
    out = f" {_dpp_ctrl(ctrl, tables(inst.target).spec.family == 'cdna')}"
    out += f" row_mask:0x{f['row_mask']:x} bank_mask:0x{f['bank_mask']:x}"
    if f.get("bound_ctrl"):
        out += " bound_ctrl:1"
    if f.get("fi"):
        out += " fi:1"
    return out


def _dpp_ctrl(ctrl: int, cdna: bool = False) -> str:
    """DPP_CTRL enumeration (CDNA3 ISA §12.4 "DPP_CTRL Enumeration"); 0x150-0x15F is
    row_newbcast on GFX90A+ (LLVM AMDGPUModifierSyntax "dpp32_ctrl"), row_share on GFX10+."""
    if ctrl <= 0xFF:
        sel = [ctrl >> (2 * i) & 3 for i in range(4)]
        return f"quad_perm:[{','.join(map(str, sel))}]"
    table = ((0x101, 0x10F, "row_shl"), (0x111, 0x11F, "row_shr"), (0x121, 0x12F, "row_ror"),
             (0x150, 0x15F, "row_newbcast" if cdna else "row_share"),
             (0x160, 0x16F, "row_xmask"))
    for lo, hi, name in table:
        if lo <= ctrl <= hi:
            return f"{name}:{ctrl - (lo & 0xFF0)}"
    named = {0x130: "wave_shl:1", 0x134: "wave_rol:1", 0x138: "wave_shr:1",
             0x13C: "wave_ror:1", 0x140: "row_mirror", 0x141: "row_half_mirror",
             0x142: "row_bcast:15", 0x143: "row_bcast:31"}
    return named.get(ctrl, f"0x{ctrl:x}")


def _vinterp(inst: Instruction) -> str:
    text = _vector(inst)
    return f"{text} wait_exp:{inst.fields['waitexp']}"


def _ldsdir(inst: Instruction) -> str:
    ops = [render_operand(o) for o in inst.defs]
    f = inst.fields
    if inst.opcode == "LDS_PARAM_LOAD":
        ops.append(f"attr{f['attr']}.{'xyzw'[f['attr_chan']]}")
    return f"{inst.mnemonic} {', '.join(ops)} wait_vdst:{f['wait_vdst']}"


_BY_ENCODING = {
    Encoding.SOP1: _sop1, Encoding.SOPC: _sopc, Encoding.VINTERP: _vinterp,
    Encoding.LDSDIR: _ldsdir,
    Encoding.SOPP: _sopp, Encoding.SOPK: _sopk, Encoding.SMEM: _smem, Encoding.DS: _ds,
    Encoding.FLAT: _flat, Encoding.GLOBAL: _flat, Encoding.SCRATCH: _flat,
    Encoding.MUBUF: _mubuf, Encoding.MTBUF: _mubuf,
}
