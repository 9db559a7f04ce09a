"""LLVM IR kernels of one packed or 16-bit operation each (`<2 x half>`, `<2 x i16>`,
`<2 x float>`, scalar `half`): every work-item loads its element of `a`, `b`, `c`, applies the
operation and stores the result at its index of `out`. LLVM selects the packed VOP3P, f16
VOP1/VOP2/VOP3, SDWA and true16 forms for them on gfx90a, gfx942 and gfx1100."""

from __future__ import annotations

from dataclasses import dataclass

_HEAD = 'target triple = "amdgcn-amd-amdhsa"\ndeclare i32 @llvm.amdgcn.workitem.id.x()\n'


@dataclass(frozen=True)
class Kernel:
    """One operation: `body` computes `%r` of type `rty` from `%a`, `%b`, `%c` of type `ty`
    (LLVM IR); `decls` declares the intrinsics it calls."""

    name: str
    ty: str
    rty: str
    body: str
    decls: str = ""

    def ir(self) -> str:
        """The kernel `@k(ptr a, ptr b, ptr c, ptr out)`."""
        loads = "".join(
            f"  %p{x} = getelementptr {self.ty}, ptr addrspace(1) %{x}p, i32 %tid\n"
            f"  %{x} = load {self.ty}, ptr addrspace(1) %p{x}\n" for x in "abc")
        return (_HEAD + self.decls + "\n"
                "define amdgpu_kernel void @k(ptr addrspace(1) %ap, ptr addrspace(1) %bp, "
                "ptr addrspace(1) %cp, ptr addrspace(1) %outp) {\n"
                "  %tid = call i32 @llvm.amdgcn.workitem.id.x()\n" + loads + self.body +
                f"\n  %po = getelementptr {self.rty}, ptr addrspace(1) %outp, i32 %tid\n"
                f"  store {self.rty} %r, ptr addrspace(1) %po\n  ret void\n}}\n")


def _bin(name: str, ty: str, op: str) -> Kernel:
    return Kernel(name, ty, ty, f"  %r = {op} {ty} %a, %b")


def _intr(name: str, ty: str, fn: str, n: int, suffix: str, rty: str = "") -> Kernel:
    rty = rty or ty
    args = ", ".join(f"{ty} %{x}" for x in "abc"[:n])
    return Kernel(name, ty, rty, f"  %r = call {rty} @llvm.{fn}.{suffix}({args})",
                  f"declare {rty} @llvm.{fn}.{suffix}({', '.join([ty] * n)})")


def float_kernels(ty: str, suffix: str) -> list[Kernel]:
    """Every float operation on `ty` (`half`, `<2 x half>`, `<2 x float>`)."""
    ks = [_bin(f"{op}_{suffix}", ty, op) for op in ("fadd", "fsub", "fmul", "fdiv")]
    ks += [_intr(f"{fn}_{suffix}", ty, fn, n, suffix) for fn, n in (
        ("fma", 3), ("fmuladd", 3), ("minnum", 2), ("maxnum", 2), ("minimum", 2),
        ("maximum", 2), ("fabs", 1), ("copysign", 2), ("canonicalize", 1), ("sqrt", 1),
        ("floor", 1), ("ceil", 1), ("trunc", 1), ("rint", 1), ("roundeven", 1),
        ("round", 1))]
    ks += [_intr(f"{fn}_{suffix}", ty, fn, 2, suffix) for fn in ("minimumnum", "maximumnum")]
    ks.append(Kernel(f"fneg_{suffix}", ty, ty, f"  %r = fneg {ty} %a"))
    ks.append(Kernel(f"fnegmul_{suffix}", ty, ty,
                     f"  %n = fneg {ty} %b\n  %r = fmul {ty} %a, %n"))
    vec = ty.startswith("<")
    ity = "<2 x i1>" if vec else "i1"
    ks.append(Kernel(f"fcmp_olt_{suffix}", ty, ty,
                     f"  %m = fcmp olt {ty} %a, %b\n  %r = select {ity} %m, {ty} %a, {ty} %c"))
    ks.append(Kernel(f"fcmp_une_{suffix}", ty, ty,
                     f"  %m = fcmp une {ty} %a, %b\n  %r = select {ity} %m, {ty} %b, {ty} %c"))
    return ks


def half_kernels() -> list[Kernel]:
    """f16-only conversions: to and from f32, f64, i16, i32, ldexp."""
    ks = float_kernels("half", "f16")
    for ity in ("i16", "i32"):
        ks.append(Kernel(f"fptosi_{ity}", "half", ity, f"  %r = fptosi half %a to {ity}"))
        ks.append(Kernel(f"fptoui_{ity}", "half", ity, f"  %r = fptoui half %a to {ity}"))
        ks.append(Kernel(f"sitofp_{ity}", ity, "half", f"  %r = sitofp {ity} %a to half"))
        ks.append(Kernel(f"uitofp_{ity}", ity, "half", f"  %r = uitofp {ity} %a to half"))
    ks.append(Kernel("fpext_f32", "half", "float", "  %r = fpext half %a to float"))
    ks.append(Kernel("fpext_f64", "half", "double", "  %r = fpext half %a to double"))
    ks.append(Kernel("fptrunc_f32", "float", "half", "  %r = fptrunc float %a to half"))
    ks.append(Kernel("frem_f16", "half", "half", "  %r = frem half %a, %b"))
    ks.append(Kernel("fptrunc_f64", "double", "half", "  %r = fptrunc double %a to half"))
    ks.append(Kernel("sitofp_i64", "i64", "half", "  %r = sitofp i64 %a to half"))
    ks.append(Kernel("uitofp_i64", "i64", "half", "  %r = uitofp i64 %a to half"))
    ks.append(Kernel("viaf32_f16", "half", "half",
                     "  %x = fpext half %a to float\n  %y = fpext half %b to float\n"
                     "  %z = fmul float %x, %y\n  %w = fpext half %c to float\n"
                     "  %s = fadd float %z, %w\n  %r = fptrunc float %s to half"))
    ks.append(Kernel("ldexp_f16", "half", "half",
                     "  %i = bitcast half %b to i16\n  %e = sext i16 %i to i32\n"
                     "  %s = ashr i32 %e, 11\n"
                     "  %r = call half @llvm.ldexp.f16.i32(half %a, i32 %s)",
                     "declare half @llvm.ldexp.f16.i32(half, i32)"))
    return ks


def v2half_kernels() -> list[Kernel]:
    ks = float_kernels("<2 x half>", "v2f16")
    ks.append(Kernel("fpext_v2f32", "<2 x half>", "<2 x float>",
                     "  %r = fpext <2 x half> %a to <2 x float>"))
    ks.append(Kernel("fptrunc_v2f32", "<2 x float>", "<2 x half>",
                     "  %r = fptrunc <2 x float> %a to <2 x half>"))
    ks.append(Kernel("fptosi_v2i16", "<2 x half>", "<2 x i16>",
                     "  %r = fptosi <2 x half> %a to <2 x i16>"))
    ks.append(Kernel("uitofp_v2i16", "<2 x i16>", "<2 x half>",
                     "  %r = uitofp <2 x i16> %a to <2 x half>"))
    ks.append(Kernel("swap_add_v2f16", "<2 x half>", "<2 x half>",
                     "  %s = shufflevector <2 x half> %a, <2 x half> poison, "
                     "<2 x i32> <i32 1, i32 0>\n"
                     "  %r = fadd <2 x half> %s, %b"))
    ks.append(Kernel("splat_fma_v2f16", "<2 x half>", "<2 x half>",
                     "  %s = shufflevector <2 x half> %a, <2 x half> poison, "
                     "<2 x i32> <i32 1, i32 1>\n"
                     "  %r = call <2 x half> @llvm.fma.v2f16(<2 x half> %s, <2 x half> %b, "
                     "<2 x half> <half 0xH3C00, half 0xH4000>)",
                     "declare <2 x half> @llvm.fma.v2f16(<2 x half>, <2 x half>, <2 x half>)"))
    return ks


def v4half_kernels() -> list[Kernel]:
    """`<4 x half>`: two packed registers per operand."""
    ty = "<4 x half>"
    return [_bin("fadd_v4f16", ty, "fadd"), _bin("fmul_v4f16", ty, "fmul"),
            _intr("fma_v4f16", ty, "fma", 3, "v4f16"),
            Kernel("fsubrev_v4f16", ty, ty, f"  %r = fsub {ty} %b, %a")]


def v2i16_kernels() -> list[Kernel]:
    ty = "<2 x i16>"
    ks = [_bin(f"{op}_v2i16", ty, op) for op in ("add", "sub", "mul", "shl", "lshr", "ashr",
                                                   "and", "or", "xor", "udiv", "sdiv")]
    ks += [_intr(f"{fn}_v2i16", ty, fn, n, "v2i16") for fn, n in (
        ("smax", 2), ("smin", 2), ("umax", 2), ("umin", 2), ("sadd.sat", 2),
        ("uadd.sat", 2), ("ssub.sat", 2), ("usub.sat", 2))]
    ks.append(Kernel("abs_v2i16", ty, ty, "  %r = call <2 x i16> @llvm.abs.v2i16(<2 x i16> "
                     "%a, i1 false)", "declare <2 x i16> @llvm.abs.v2i16(<2 x i16>, i1)"))
    ks.append(Kernel("mad_v2i16", ty, ty, "  %m = mul <2 x i16> %a, %b\n"
                     "  %r = add <2 x i16> %m, %c"))
    ks.append(Kernel("icmp_v2i16", ty, ty, "  %m = icmp slt <2 x i16> %a, %b\n"
                     "  %r = select <2 x i1> %m, <2 x i16> %b, <2 x i16> %c"))
    ks.append(Kernel("addk_v2i16", ty, ty, "  %r = add <2 x i16> %a, <i16 -3, i16 1000>"))
    return ks


def v2float_kernels() -> list[Kernel]:
    return [k for k in float_kernels("<2 x float>", "v2f32")
            if k.name.split("_")[0] in ("fadd", "fsub", "fmul", "fma", "fmuladd", "fneg",
                                        "fnegmul", "minnum", "maxnum", "fabs")]


def all_kernels() -> list[Kernel]:
    return (half_kernels() + v2half_kernels() + v4half_kernels() + v2i16_kernels()
            + v2float_kernels())
