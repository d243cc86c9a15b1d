"""Runs Debian's mlir-tblgen-16 on a dialect's .td files."""

def mlir_tblgen(name, out, td, srcs, args):
    native.genrule(
        name = name,
        srcs = srcs + ["@llvm//:mlir_td"],
        outs = [out],
        tools = ["@llvm//:mlir_tblgen"],
        cmd = ("$(location @llvm//:mlir_tblgen) " + " ".join(args) +
               " -I /usr/lib/llvm-16/include -I $$(dirname $$(dirname $$(dirname $(location " + td + "))))" +
               " $(location " + td + ") -o $@"),
    )
