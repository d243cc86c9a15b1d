//===- EmitCollectives.cpp - torch.distributed's collectives --------------===//
//
// A collective op (CollectiveOps.td) is a call into the communicator libdynrt
// binds to the model (dynoc_bind_collectives, the prelude's
// dynoc_kernels_collectives.h): the input is copied into the result's buffer,
// which the collective then changes in place (all-reduce, broadcast) or
// fills (all-gather, reduce-scatter), and the call's work handle is waited on
// at the op's dynoc.wait_tensor. The ranks' graphs are the same, so each
// issues the same collectives in the same order.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

#include "llvm/ADT/StringSwitch.h"

#include <cstdio>

namespace dynoc {
namespace codegen {
namespace {
/// The communicator's code of a reduce_op (dynrt_reduce_op_t).
int reduceCode(StringRef op) {
  return llvm::StringSwitch<int>(op)
      .Case("sum", 0)
      .Case("avg", 1)
      .Case("product", 2)
      .Case("min", 3)
      .Case("max", 4)
      .Default(-1);
}

/// `s` as the contents of a C string literal.
std::string cEscaped(StringRef s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[5];
      std::snprintf(octal, sizeof octal, "\\%03o", unsigned(c));
      out += octal;
    } else {
      out += char(c);
    }
  }
  return out;
}
} // namespace

/// all_to_all_single: the split sizes in elements (rows times the elements
/// of a row), equal slices where the op gives none.
LogicalResult GraphEmitter::emitAllToAll(dynoc::AllToAllSingleOp op) {
  Value in = op.getInput(), out = op.getResult();
  DimList d = dimsOf(in);
  std::string size = std::to_string(op.getGroupSize());
  ArrayRef<std::string> all(d);
  std::string row = product(all.drop_front());
  auto counts = [&](ArrayRef<int64_t> splits, const std::string &dim0) {
    std::vector<std::string> c;
    for (int64_t i = 0; i < op.getGroupSize(); ++i)
      c.push_back(splits.empty()
                      ? "(" + dim0 + ") / " + size + " * " + row
                      : std::to_string(splits[size_t(i)]) + " * " + row);
    return "{" + llvm::join(c, ", ") + "}";
  };
  if (op.getInputSplitSizes().empty())
    require(d[0] + " % " + size + " == 0", op,
            "all_to_all_single's dim 0 is not a multiple of the group size");
  DimList o = d;
  if (!op.getOutputSplitSizes().empty()) {
    int64_t rows = 0;
    for (int64_t n : op.getOutputSplitSizes())
      rows += n;
    o[0] = std::to_string(rows);
  }
  setDims(out, op, o);
  std::string work = "work" + std::to_string(collectiveWork.size());
  collectiveWork[out] = work;
  code += llvm::formatv(
      "  void *{0} = nullptr;\n"
      "  {{ const int64_t in_counts[] = {1}, out_counts[] = {2};\n"
      "    if (int rc = dynoc_k::all_to_all(\"{3}\", {4}, {5}, in_counts, "
      "out_counts, {6}, &{0})) return rc; }\n",
      work, counts(op.getInputSplitSizes(), d[0]),
      counts(op.getOutputSplitSizes(), d[0]), cEscaped(op.getGroupName()),
      name(in), name(out), size);
  return success();
}

LogicalResult GraphEmitter::emitCollective(Operation *op) {
  if (auto a2a = dyn_cast<dynoc::AllToAllSingleOp>(op))
    return emitAllToAll(a2a);
  Value in = op->getOperand(0), out = op->getResult(0);
  DimList d = dimsOf(in);
  std::string kind, reduce = "0", root = "0", group, groupSize;
  if (auto ar = dyn_cast<dynoc::AllReduceOp>(op)) {
    kind = "kAllReduce";
    reduce = std::to_string(reduceCode(ar.getReduceOp()));
    group = ar.getGroupName().str();
  } else if (auto bc = dyn_cast<dynoc::BroadcastOp>(op)) {
    kind = "kBroadcast";
    root = std::to_string(bc.getSrc());
    group = bc.getGroupName().str();
  } else if (auto ag = dyn_cast<dynoc::AllGatherIntoTensorOp>(op)) {
    kind = "kAllGather";
    group = ag.getGroupName().str();
    d[0] = product({d[0], std::to_string(ag.getGroupSize())});
  } else {
    auto rs = cast<dynoc::ReduceScatterTensorOp>(op);
    kind = "kReduceScatter";
    reduce = std::to_string(reduceCode(rs.getReduceOp()));
    group = rs.getGroupName().str();
    std::string size = std::to_string(rs.getGroupSize());
    require(dimsOf(in)[0] + " % " + size + " == 0", op,
            "reduce_scatter_tensor's dim 0 is not a multiple of the group size");
    d[0] = resolved("(" + dimsOf(in)[0] + ") / " + size);
  }
  setDims(out, op, d);
  std::string work = "work" + std::to_string(collectiveWork.size());
  collectiveWork[out] = work;
  code += llvm::formatv(
      "  void *{0} = nullptr;\n"
      "  if (int rc = dynoc_k::collective(dynoc_k::{1}, \"{2}\", {3}, {4}, {5}, "
      "{6}, {7}, int64_t({8}), &{0})) return rc;\n",
      work, kind, cEscaped(group), name(in), name(out),
      numelOf(in), numelOf(out), reduce, root);
  return success();
}

LogicalResult GraphEmitter::emitWaitTensor(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  setDims(out, op, dimsOf(in));
  auto it = collectiveWork.find(sourceOf(in));
  if (it != collectiveWork.end())
    code += llvm::formatv(
        "  if (int rc = dynoc_k::collective_wait({0})) return rc;\n",
        it->second);
  // The result is the input's storage (GraphEmitter's aliasOf), unless it is
  // a graph output of its own: then a copy, once the collective is done.
  if (inOutput.count(out))
    code += llvm::formatv("  dynoc_k::copy({0}, {1}, {2} * sizeof({3}));\n",
                          name(out), name(in), numelOf(out), elemCType(out));
  return success();
}

} // namespace codegen
} // namespace dynoc
