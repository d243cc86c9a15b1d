//===- EmitElementwise.cpp ------------------------------------------------===//
//
// Elementwise ops: unary, binary and tensor-scalar ops, where, pow, and fusion
// groups printed through lib/codegen's scalar expressions and pointwise loop.
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

#include "llvm/ADT/StringSet.h"

#include <numeric>
#include <set>

namespace dynoc {
namespace codegen {

namespace {
/// The bounds of a ReLU (0, inf) or a hardtanh (min_val, max_val); none for
/// other ops.
std::optional<std::pair<double, double>> clampBounds(Operation *op) {
  if (isa<aten::AtenReluOp>(op))
    return std::make_pair(0.0, INFINITY);
  if (isa<aten::AtenHardtanhOp>(op))
    return std::make_pair(scalarAttr(op, "min_val", -1.0),
                          scalarAttr(op, "max_val", 1.0));
  return std::nullopt;
}

/// Whether `op` converts between float types (aten._to_copy).
bool isFloatConversion(Operation *op) {
  return isa<aten::ToCopyOp>(op) && op->getNumOperands() == 1 &&
         elementTypeOf(op->getOperand(0)).isa<FloatType>() &&
         elementTypeOf(op->getResult(0)).isa<FloatType>();
}

/// The clamp bounds of an epilogue chain [anchor, ReLU or hardtanh] that
/// computes nothing else; in bf16/f16 the chain may widen the anchor's value
/// to f32 before the clamp and round back to the anchor's type after it
/// (rounding commutes with a clamp: the same value either way).
std::optional<std::pair<double, double>>
soleClamp(ArrayRef<Operation *> chain) {
  Value anchor = chain.front()->getResult(0);
  if (chain.size() == 2)
    return chain[1]->getOperand(0) == anchor ? clampBounds(chain[1])
                                              : std::nullopt;
  // anchor -> widen -> clamp -> narrow, each reading the one before.
  if (chain.size() != 4 || !isFloatConversion(chain[1]) ||
      !isFloatConversion(chain[3]) || chain[1]->getOperand(0) != anchor ||
      !elementTypeOf(chain[1]->getResult(0)).isF32() ||
      chain[2]->getOperand(0) != chain[1]->getResult(0) ||
      chain[3]->getOperand(0) != chain[2]->getResult(0) ||
      chain[3]->getResult(0).getType() != anchor.getType())
    return std::nullopt;
  return clampBounds(chain[2]);
}
} // namespace

LogicalResult GraphEmitter::emitUnary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value out = op->getResult(0);
  std::string ct = elemCType(out);
  const bool asLoop = target.singleOpsAsLoops();
  FailureOr<std::string> expr = codegen::elementwiseExpr(
      op, {asLoop ? PointwiseLoop::inputName(0) : "x"}, ct);
  if (failed(expr))
    return failure();
  std::string f = *expr;
  if (f.empty())
    return fail(op) << "'" << n << "' has no elementwise expression";
  if (asLoop) {
    setDims(out, op, dimsOf(op->getOperand(0)));
    // A predicate (a bool result: logical_not, isnan) reads its operand in
    // its own type.
    emitAsLoop(op, {op->getOperand(0)},
               elementTypeOf(out).isInteger(1) ? elemCType(op->getOperand(0))
                                               : ct,
               f);
    return success();
  }
  // Transcendental ops run on whole vectors through Sleef.
  std::string vec;
  if (n == "aten.exp")
    vec = "dynoc_k::vexp(x)";
  else if (n == "aten.tanh")
    vec = "dynoc_k::vtanh(x)";
  else if (n == "aten.sigmoid")
    vec = "1.f / (1.f + dynoc_k::vexp(-x))";
  else if (n == "aten.silu")
    vec = "x / (1.f + dynoc_k::vexp(-x))";
  else if (n == "aten.gelu")
    vec =
        f == "dynoc_k::gelu(x)"
            ? "0.5f * x * (1.f + dynoc_k::verf_fast(x * 0.70710678118654752f))"
            : "0.5f * x * (1.f + dynoc_k::vtanh(0.79788456080286536f * (x + "
              "0.044715f * x * x * x)))";
  setDims(out, op, dimsOf(op->getOperand(0)));
  if (elemCType(op->getOperand(0)) != ct || ct != "float") {
    // Other dtypes compute per element in the result's type.
    std::string param = elementTypeOf(out).isInteger(1) ? "auto" : ct;
    code += llvm::formatv("  dynoc_k::unary({0}, {1}, {2}, {3});\n", name(out),
                          name(op->getOperand(0)), numelOf(out),
                          functor(param + " x", ct + "(" + f + ")"));
    return success();
  }
  if (!vec.empty())
    code += llvm::formatv("  dynoc_k::vunary({0}, {1}, {2}, {3});\n", name(out),
                          name(op->getOperand(0)), numelOf(out),
                          functor("dynoc_k::vf x", vec));
  else
    code += llvm::formatv("  dynoc_k::unary({0}, {1}, {2}, {3});\n", name(out),
                          name(op->getOperand(0)), numelOf(out),
                          functor("float x", f));
  return success();
}

std::string GraphEmitter::functor(const std::string &params,
                                  const std::string &expr) {
  bool generic = params.rfind("auto ", 0) == 0;
  std::string def =
      "struct " + KernelDefinitions::kName.str() + " {\n" +
      (generic ? "  template <class T>\n  DYNOC_FN auto operator()(T " +
                     params.substr(5)
               : "  DYNOC_FN auto operator()(" + params) +
      ") const { return " + expr + "; }\n};\n\n";
  return definitions.define("dynoc_fn_", def) + "{}";
}

void GraphEmitter::emitAsLoop(Operation *op, ArrayRef<Value> operands,
                              const std::string &computeType,
                              const std::string &expr) {
  Value out = op->getResult(0);
  PointwiseLoop loop;
  loop.shape = dimsOf(out);
  loop.output = name(out);
  loop.computeType = computeType;
  for (Value v : operands)
    loop.addInput(name(v), broadcastStrideList(dimsOf(v), loop.shape));
  loop.result = loop.addTemp(expr);
  code += target.printPointwise(loop, definitions);
}

DimList GraphEmitter::broadcastDims(Operation *op, ArrayRef<Value> operands) {
  size_t rank = typeShape(op->getResult(0)).size();
  DimList computed(rank, "1");
  for (Value v : operands) {
    const DimList &d = dimsOf(v);
    for (size_t i = 0; i < d.size(); ++i) {
      std::string &o = computed[rank - d.size() + i];
      const std::string &in = d[i];
      if (in == "1" || in == o)
        continue;
      if (o == "1") {
        o = in;
        continue;
      }
      o = resolved("dynoc_k::broadcast(" + o + ", " + in + ")");
      require(o + " >= 0", op,
              "the operands do not broadcast in dim " +
                  std::to_string(rank - d.size() + i));
    }
  }
  return computed;
}

/// An integer division's divisor checked for a zero before it runs: ATen
/// raises ZeroDivisionError there, so a built graph returns
/// DYNOC_RUN_DIVISION_BY_ZERO (model_abi.h) rather than a number. A zero
/// scalar divisor is refused at build time (the call runs eagerly and
/// raises).
LogicalResult GraphEmitter::emitDivisorCheck(Operation *op) {
  if (op->getAttr("other")) {
    if (scalarAttr(op, "other", 1.0) == 0.0)
      return fail(op) << "'" << op->getName()
                      << "' divides an integer by zero";
    return success();
  }
  if (!target.hostReadsTensors())
    return fail(op) << "'" << op->getName() << "' on integers (the "
                    << target.displayName()
                    << " backend has no check for a zero divisor yet)";
  Value divisor = op->getOperand(1);
  code += llvm::formatv("  if ({0} != 0 && dynoc_k::any_zero({1}, {2}))\n"
                        "    return DYNOC_RUN_DIVISION_BY_ZERO;\n",
                        numelOf(op->getResult(0)), name(divisor),
                        numelOf(divisor));
  return success();
}

LogicalResult GraphEmitter::emitBinary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value out = op->getResult(0), lhs = op->getOperand(0),
        rhs = op->getOperand(1);
  // A comparison computes in its operands' promoted type, the rest in the
  // result's.
  std::string ct = comparisonOperator(n).empty() ? elemCType(out)
                                                 : promotedCType({lhs, rhs});
  const bool asLoop = target.singleOpsAsLoops();
  FailureOr<std::string> f =
      codegen::elementwiseExpr(op,
                               {asLoop ? PointwiseLoop::inputName(0) : "a",
                                asLoop ? PointwiseLoop::inputName(1) : "b"},
                               ct);
  if (failed(f))
    return failure();
  if (f->empty())
    return fail(op) << "'" << n << "' has no elementwise expression";
  setDims(out, op, broadcastDims(op, {lhs, rhs}));
  if (isIntegerDivision(op) && failed(emitDivisorCheck(op)))
    return failure();
  if (asLoop) {
    emitAsLoop(op, {lhs, rhs}, ct, *f);
    return success();
  }
  const DimList &outDims = dimsOf(out);
  code += llvm::formatv(
      "  {{ const int64_t as[] = {0}, bs[] = {1}, shape[] = {2};\n"
      "    dynoc_k::binary<{8}>({3}, {4}, as, {5}, bs, shape, {6}, {7}); }\n",
      broadcastStrides(lhs, outDims), broadcastStrides(rhs, outDims),
      braceList(outDims), name(out), name(lhs), name(rhs), outDims.size(),
      functor(ct + " a, " + ct + " b", *f), ct);
  return success();
}

LogicalResult GraphEmitter::emitScalarBinary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  if (!op->getAttr("other"))
    return fail(op) << "'" << n << "' needs its 'other' attribute";
  Value in = op->getOperand(0), out = op->getResult(0);
  // Arithmetic computes in the result's type; a comparison in the input's,
  // or in double when an integer tensor meets a fractional number.
  std::string param =
      comparisonOperator(n).empty() ? elemCType(out) : elemCType(in);
  const bool asLoop = target.singleOpsAsLoops();
  FailureOr<std::string> f = codegen::elementwiseExpr(
      op, {asLoop ? PointwiseLoop::inputName(0) : "x"}, param);
  if (failed(f))
    return failure();
  if (f->empty())
    return fail(op) << "'" << n << "' has no elementwise expression";
  setDims(out, op, dimsOf(in));
  if (isIntegerDivision(op) && failed(emitDivisorCheck(op)))
    return failure();
  if (asLoop) {
    emitAsLoop(op, {in}, param, *f);
    return success();
  }
  code += llvm::formatv("  dynoc_k::unary({0}, {1}, {2}, {3});\n", name(out),
                        name(in), numelOf(out), functor(param + " x", *f));
  return success();
}

/// where.self(c, a, b) and masked_fill.Scalar(x, mask, v) = where(mask, v, x).
LogicalResult GraphEmitter::emitWhere(Operation *op) {
  Value out = op->getResult(0);
  std::string ct = elemCType(out);
  bool maskedFill = op->getName().getStringRef() == "aten.masked_fill.Scalar";
  Value cond = op->getOperand(maskedFill ? 1 : 0);
  if (!elementTypeOf(cond).isInteger(1))
    return fail(op) << "'" << op->getName() << "' needs a bool condition";
  SmallVector<Value> operands = {cond};
  std::string a, b, pre;
  if (maskedFill) {
    if (!op->getAttr("value"))
      return fail(op) << "masked_fill needs a value";
    operands.push_back(op->getOperand(0));
    // A cast, not a braced initializer: PyTorch converts the value (10 into
    // a bool tensor is true), where braces refuse a narrowing.
    pre = "    const " + ct + " fill[] = {" + ct + "(" +
          fmtLiteral(scalarAttr(op, "value", 0), ct) + ")};\n";
    a = "fill";
    b = name(op->getOperand(0));
  } else {
    operands.append({op->getOperand(1), op->getOperand(2)});
    a = name(op->getOperand(1));
    b = name(op->getOperand(2));
  }
  setDims(out, op, broadcastDims(op, operands));
  const DimList &outDims = dimsOf(out);
  std::string zeros = braceList(DimList(outDims.size(), "0"));
  std::string as = maskedFill ? zeros : broadcastStrides(operands[1], outDims),
              bs = broadcastStrides(operands.back(), outDims);
  code += llvm::formatv(
      "  {{\n{0}"
      "    const int64_t cs[] = {1}, as[] = {2}, bs[] = {3}, shape[] = {4};\n"
      "    dynoc_k::where({5}, {6}, cs, {7}, as, {8}, bs, shape, {9}); }\n",
      pre, broadcastStrides(cond, outDims), as, bs, braceList(outDims),
      name(out), name(cond), a, b, outDims.size());
  return success();
}

LogicalResult GraphEmitter::emitPow(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  double e = scalarAttr(op, "exponent", 1.0);
  const bool asLoop = target.singleOpsAsLoops();
  const std::string x = asLoop ? PointwiseLoop::inputName(0) : "x";
  std::string f;
  if (e == 2.0)
    f = x + " * " + x;
  else if (e == 3.0)
    f = x + " * " + x + " * " + x;
  else if (e == 0.5)
    f = "std::sqrt(" + x + ")";
  else if (e == 1.0)
    f = x;
  else
    f = "std::pow(" + x + ", " + fmtLiteral(e, elemCType(out)) + ")";
  setDims(out, op, dimsOf(in));
  if (asLoop) {
    emitAsLoop(op, {in}, elemCType(out), f);
    return success();
  }
  code +=
      llvm::formatv("  dynoc_k::unary({0}, {1}, {2}, {3});\n", name(out),
                    name(in), numelOf(out), functor(elemCType(out) + " x", f));
  return success();
}

LogicalResult GraphEmitter::emitFusionGroup(Operation *op) {
  auto group = cast<dynoc::FusionGroupOp>(op);
  Block &body = group.getBody().front();
  for (auto [arg, in] : llvm::zip(body.getArguments(), group.getInputs())) {
    names[arg] = name(in);
    dims[arg] = dimsOf(in);
    if (scalarArgs.count(in))
      scalarArgs.insert(arg);
  }
  Value out = group.getResult();
  auto ops = llvm::make_pointer_range(body.without_terminator());
  SmallVector<Operation *> chain(ops.begin(), ops.end());
  for (Operation *inner : chain)
    if (failed(checkTypes(inner)))
      return failure();
  Value current; // the chain's value entering the loop, if an anchor made it
  Value convBias; // the bias the loop adds to an anchor convolution's output
  if (group.getKind() == "epilogue") {
    Operation *anchor = chain.front();
    auto it = table().find(anchor->getName().getStringRef());
    if (it == table().end())
      return fail(anchor) << "op '" << anchor->getName()
                          << "' is not supported by the "
                          << target.displayName() << " backend yet";
    names[anchor->getResult(0)] = name(out);
    // A convolution followed by one ReLU or hardtanh alone: the clamp is the
    // convolution's own (its last pass writes the clamped value).
    if (std::optional<std::pair<double, double>> clamp =
            isa<aten::AtenConvolutionOp>(anchor) &&
                    target.fuseConvolutionEpilogue()
                ? soleClamp(chain)
                : std::nullopt) {
      convClamp = clamp;
      LogicalResult emitted = (this->*(it->second))(anchor);
      convClamp.reset();
      if (failed(emitted))
        return failure();
      setDims(out, op, dimsOf(anchor->getResult(0)));
      return success();
    }
    // Other ops after a convolution: its bias is one more operand of their
    // loop rather than a pass of its own.
    auto conv = dyn_cast<aten::AtenConvolutionOp>(anchor);
    if (conv && conv.getBias() && chain.size() > 1 &&
        target.fuseConvolutionEpilogue() &&
        typeShape(conv.getBias()).size() == 1 &&
        elementTypeOf(conv.getBias()) ==
            elementTypeOf(anchor->getResult(0)))
      convBias = conv.getBias();
    convBiasInLoop = bool(convBias);
    LogicalResult emitted = (this->*(it->second))(anchor);
    convBiasInLoop = false;
    if (failed(emitted))
      return failure();
    current = anchor->getResult(0);
    setDims(out, op, dimsOf(current));
    chain.erase(chain.begin());
  } else {
    // The group's shape is that of an input of its result's shape (a
    // conversion changes the element type only), or static.
    Value like;
    for (Value in : group.getInputs())
      if (auto t = in.getType().dyn_cast<RankedTensorType>();
          t && t.getShape() == typeShape(out))
        like = in;
    if (like)
      setDims(out, op, dimsOf(like));
    else if (out.getType().cast<RankedTensorType>().hasStaticShape())
      setDims(out, op, DimList(typeShape(out).size(), "0"));
    else
      return fail(op) << "cannot size this fusion "
                         "group (no input has its dynamic shape)";
  }
  const DimList &outDims = dimsOf(out);
  size_t rank = outDims.size();
  // The group as a target-neutral pointwise loop, which the target prints.
  codegen::PointwiseLoop loop;
  loop.shape = outDims;
  loop.output = name(out);
  llvm::DenseMap<Value, std::string> expr;
  auto input = [&](Value v) {
    return loop.addInput(name(v),
                         codegen::broadcastStrideList(dimsOf(v), outDims));
  };
  // An input must broadcast to the group's shape; what the types leave open
  // is checked at run time.
  auto checkBroadcast = [&](Value v, Operation *user) -> LogicalResult {
    const DimList &d = dimsOf(v);
    if (d.size() > rank)
      return fail(op) << "a fused input has more "
                         "dims than the group's result";
    for (size_t i = 0; i < d.size(); ++i) {
      const std::string &in = d[i], &o = outDims[rank - d.size() + i];
      if (in == o || in == "1")
        continue;
      if (isLiteral(in) && isLiteral(o))
        return fail(op) << "a fused input of dim " << in
                        << " does not broadcast to " << o;
      require(in + " == " + o + " || " + in + " == 1", user,
              "the operands do not broadcast in dim " +
                  std::to_string(rank - d.size() + i));
    }
    return success();
  };
  bool broadcastError = false;
  Operation *user = nullptr; // the op whose operands are being read
  auto operand = [&](Value v) {
    auto it = expr.find(v);
    if (it != expr.end())
      return it->second;
    if (failed(checkBroadcast(v, user)))
      broadcastError = true;
    return expr[v] = input(v);
  };
  if (current && convBias) {
    DimList channel(rank, "0");
    channel[1] = "1";
    std::string x = input(current);
    expr[current] =
        loop.addTemp(x + " + " + loop.addInput(name(convBias), channel));
  } else if (current) {
    expr[current] = input(current);
  }
  std::string prologue;
  for (Operation *inner : chain) {
    StringRef n = inner->getName().getStringRef();
    std::string e;
    user = inner;
    if (inner->getNumResults() == 3) { // eval-mode batch norm
      Value mean, var, w, b;
      if (auto bn = dyn_cast<aten::AtenNativeBatchNormOp>(inner)) {
        w = bn.getWeight(), b = bn.getBias(), mean = bn.getRunningMean(),
        var = bn.getRunningVar();
      } else {
        auto legit = cast<aten::NativeBatchNormLegitNoTrainingOp>(inner);
        w = legit.getWeight(), b = legit.getBias(),
        mean = legit.getRunningMean(), var = legit.getRunningVar();
      }
      double eps = inner->getAttrOfType<FloatAttr>("eps").getValueAsDouble();
      if (rank < 2 || !mean || !var)
        return fail(inner) << "batch norm needs "
                              "rank >= 2 and running statistics";
      std::string C = outDims[1];
      std::string scale = scratch(product({C, "4"})),
                  shift = scratch(product({C, "4"}));
      prologue += llvm::formatv(
          "  dynoc_k::bn_scale_shift({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
          "{7});\n",
          scale, shift, name(mean), name(var), w ? name(w) : "nullptr",
          b ? name(b) : "nullptr", C, llvm::formatv("{0:e17}", eps).str());
      DimList channel(rank, "0");
      channel[1] = "1";
      std::string s = loop.addInput(scale, channel),
                  h = loop.addInput(shift, channel);
      e = operand(inner->getOperand(0)) + " * " + s + " + " + h;
    } else {
      SmallVector<std::string, 2> args;
      for (Value v : inner->getOperands())
        args.push_back(operand(v));
      FailureOr<std::string> f =
          codegen::elementwiseExpr(inner, args, loop.computeType);
      if (failed(f))
        return failure();
      e = *f;
    }
    if (e.empty())
      return fail(inner) << "'" << n << "' cannot be part of a fused loop";
    expr[inner->getResult(0)] = loop.addTemp(e);
  }
  if (broadcastError)
    return failure();
  if (chain.empty())
    return success(); // an epilogue group with nothing after the anchor
  loop.result = expr[body.getTerminator()->getOperand(0)];
  code += prologue + target.printPointwise(loop, definitions);
  return success();
}

} // namespace codegen
} // namespace dynoc
