"""A code object as plain data (JSON-ready dicts of str/int/bool/list): what `rgpu-fuzz
inspect` prints and `--json` writes. Every descriptor field by its AMDGPUUsage name, the
metadata as the note has it, the kernarg layout, and the verifier's findings."""

from __future__ import annotations

from typing import Any

from rgpu_fuzz.codeobj.notes import KernelArg, KernelMetadata
from rgpu_fuzz.codeobj.reader import CodeObject, Kernel
from rgpu_fuzz.codeobj.verify import verify_code_object

__all__ = ["describe_code_object", "describe_kernel", "kernarg_layout"]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def _arg(a: KernelArg) -> dict[str, Any]:
    out: dict[str, Any] = {"offset": a.offset, "size": a.size, "value_kind": a.value_kind}
    for name in ("name", "type_name", "address_space", "access", "actual_access",
                 "pointee_align"):
        if (v := getattr(a, name)) is not None:
            out[name] = v
    for flag in ("is_const", "is_restrict", "is_volatile", "is_pipe"):
        if getattr(a, flag):
            out[flag] = True
    out.update({k: _plain(v) for k, v in a.extra})
    return out


def _metadata(m: KernelMetadata) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("name", "symbol", "kernarg_segment_size", "kernarg_segment_align",
                 "group_segment_fixed_size", "private_segment_fixed_size", "wavefront_size",
                 "sgpr_count", "vgpr_count", "agpr_count", "sgpr_spill_count",
                 "vgpr_spill_count", "max_flat_workgroup_size", "uses_dynamic_stack",
                 "workgroup_processor_mode", "uniform_work_group_size", "reqd_workgroup_size",
                 "workgroup_size_hint", "language", "language_version", "kind"):
        if (v := getattr(m, name)) is not None:
            out[name] = _plain(v)
    out.update({k: _plain(v) for k, v in m.extra})
    out["args"] = [_arg(a) for a in m.args]
    return out


def kernarg_layout(m: KernelMetadata) -> list[dict[str, Any]]:
    """The kernarg segment byte by byte: each argument's range, kind and name, and the gaps
    (padding) between them, up to `.kernarg_segment_size`."""
    rows: list[dict[str, Any]] = []
    pos = 0
    for a in sorted(m.args, key=lambda a: a.offset):
        if a.offset > pos:
            rows.append({"offset": pos, "size": a.offset - pos, "value_kind": "padding"})
        row = {"offset": a.offset, "size": a.size, "value_kind": a.value_kind}
        if a.name:
            row["name"] = a.name
        rows.append(row)
        pos = max(pos, a.offset + a.size)
    if m.kernarg_segment_size > pos:
        rows.append({"offset": pos, "size": m.kernarg_segment_size - pos,
                     "value_kind": "padding"})
    return rows


def describe_kernel(co: CodeObject, k: Kernel) -> dict[str, Any]:
    kd = k.descriptor
    derived: dict[str, Any] = {"entry_address": k.entry_address,
                               "wavefront_size": kd.wavefront_size,
                               "next_free_vgpr": kd.next_free_vgpr(co.target)}
    if kd.next_free_sgpr is not None:
        derived["next_free_sgpr"] = kd.next_free_sgpr
    if kd.accum_offset is not None:
        derived["accum_offset"] = kd.accum_offset
    derived["user_sgprs"] = [{"name": u.name, "first": u.first, "count": u.count}
                             for u in kd.user_sgprs()]
    return {
        "name": k.name,
        "descriptor_symbol": {"name": k.descriptor_symbol.name,
                              "value": k.descriptor_symbol.value,
                              "size": k.descriptor_symbol.size},
        "descriptor": kd.as_dict(),
        "descriptor_derived": derived,
        "descriptor_bytes": kd.raw.hex(),
        "metadata": _metadata(k.metadata),
        "kernarg_layout": kernarg_layout(k.metadata),
    }


def describe_code_object(co: CodeObject) -> dict[str, Any]:
    """Everything `inspect` shows about one code object."""
    elf = co.elf
    text = co.text
    return {
        "target": co.target.name,
        "target_id": co.target_id,
        "xnack": co.xnack.value,
        "sramecc": co.sramecc.value,
        "code_object_version": co.code_object_version,
        "elf_type": "ET_REL" if elf.is_relocatable else "ET_DYN",
        "e_flags": elf.flags,
        "amdhsa_version": list(co.metadata.version),
        "amdhsa_target": co.metadata.target,
        "sections": [{"name": s.name, "type": s.type, "addr": s.addr, "offset": s.offset,
                      "size": s.size, "flags": s.flags, "align": s.align}
                     for s in elf.sections if s.index],
        "dynamic_symbols": [{"name": s.name, "value": s.value, "size": s.size,
                             "type": s.type, "bind": s.bind}
                            for s in elf.dynamic_symbols if s.name],
        "relocations": [{"section": r.section, "offset": r.offset, "type": r.type_name,
                         "symbol": r.symbol, "addend": r.addend} for r in elf.relocations],
        "text_size": text.size if text is not None else 0,
        "kernels": [describe_kernel(co, k) for k in co.kernels],
        "violations": [{"rule": v.rule, "kernel": v.kernel, "detail": v.detail}
                       for v in verify_code_object(co)],
    }
