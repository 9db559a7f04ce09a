"""Microcode formats of CDNA4 (gfx950), as bitfield declarations.

Layouts: "AMD Instinct MI355X (CDNA4) Instruction Set Architecture Reference Guide", chapter
"Microcode Formats". For every format the decoder reads (SOP*, SMEM, VOP1/2/C, VOP3A/B,
VOP3P, DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF) CDNA4 keeps CDNA3's fields and bit positions,
cache-policy names (`sc0`, `sc1`, `nt`) included; what CDNA4 adds is opcodes (V_BITOP3_B32,
V_PERMLANE16_SWAP_B32, the scaled conversions ...), not layouts. The tuple is therefore
gfx942's, declared once in `formats_cdna` and named here so the target table can say which
guide it follows. AMD's machine-readable CDNA4 description (tinygrad's tables generated from
the ISA XML, `tinygrad/runtime/autogen/amd/cdna/ins.py`) has the same fields.
"""

from __future__ import annotations

from rgpu_fuzz.sim.isa.formats import Format
from rgpu_fuzz.sim.isa.formats_cdna import GFX942

__all__ = ["GFX950"]

GFX950: tuple[type[Format], ...] = GFX942
