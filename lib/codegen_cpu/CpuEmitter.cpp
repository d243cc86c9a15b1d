//===- CpuEmitter.cpp - aten graph -> C++ kernels -------------------------===//
//
// One C++ function per graph (func.func). Each aten op becomes a loop nest or a
// call into dynoc_kernels.h (GEMM through oneDNN). Intermediates live in
// buffers freed on return; results are written straight into the caller's
// output buffers.
//
//===----------------------------------------------------------------------===//
#include "dynoc/CodegenCPU/CpuCodegen.h"
#include "dynoc/IR/AtenDialect.h"
#include "dynoc/IR/GraphAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <nlohmann/json.hpp>

#include <numeric>
#include <set>

using namespace mlir;
using nlohmann::json;

namespace dynoc {
namespace {

std::string torchDTypeName(Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isInteger(64))
    return "int64";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(16))
    return "int16";
  if (t.isInteger(8))
    return t.isUnsignedInteger() ? "uint8" : "int8";
  if (t.isInteger(1))
    return "bool";
  return "";
}

std::string intList(ArrayRef<int64_t> v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return (v.empty() ? std::string("{0") : s) + "}";
}

int64_t numel(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string fmtFloat(double v) {
  if (std::isinf(v))
    return v > 0 ? "INFINITY" : "-INFINITY";
  if (std::isnan(v))
    return "NAN";
  return llvm::formatv("{0:e9}f", v).str();
}

class FuncEmitter {
public:
  FuncEmitter(func::FuncOp func, std::string &os) : func(func), os(os) {}

  LogicalResult emit(const std::string &symbol);

private:
  using EmitFn = LogicalResult (FuncEmitter::*)(Operation *);

  std::string name(Value v) { return names.lookup(v); }
  ArrayRef<int64_t> shape(Value v) {
    return v.getType().cast<RankedTensorType>().getShape();
  }
  /// Element strides of `v` broadcast to `outShape` (0 on broadcast dims).
  std::string broadcastStrides(Value v, ArrayRef<int64_t> outShape);
  double scalarAttr(Operation *op, StringRef name, double dflt);

  LogicalResult checkTypes(Operation *op);
  LogicalResult emitUnary(Operation *op);
  LogicalResult emitBinary(Operation *op);
  LogicalResult emitScalarBinary(Operation *op);
  LogicalResult emitMatmul(Operation *op);
  LogicalResult emitTranspose(Operation *op);
  LogicalResult emitCopy(Operation *op);

  static const llvm::StringMap<EmitFn> &table();

  func::FuncOp func;
  std::string &os;
  llvm::DenseMap<Value, std::string> names;
  unsigned next = 0;
};

const llvm::StringMap<FuncEmitter::EmitFn> &FuncEmitter::table() {
  static const llvm::StringMap<EmitFn> t = [] {
    llvm::StringMap<EmitFn> m;
    for (const char *n :
         {"aten.relu", "aten.sigmoid", "aten.tanh", "aten.neg", "aten.exp",
          "aten.gelu", "aten.silu", "aten.sqrt", "aten.rsqrt", "aten.abs"})
      m[n] = &FuncEmitter::emitUnary;
    for (const char *n :
         {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
          "aten.div.Tensor", "aten.maximum", "aten.minimum"})
      m[n] = &FuncEmitter::emitBinary;
    for (const char *n : {"aten.add.Scalar", "aten.sub.Scalar",
                          "aten.mul.Scalar", "aten.div.Scalar"})
      m[n] = &FuncEmitter::emitScalarBinary;
    for (const char *n : {"aten.mm", "aten.addmm", "aten.linear"})
      m[n] = &FuncEmitter::emitMatmul;
    for (const char *n : {"aten.t", "aten.transpose.int", "aten.permute"})
      m[n] = &FuncEmitter::emitTranspose;
    for (const char *n :
         {"aten.view", "aten._unsafe_view", "aten.reshape", "aten.clone",
          "aten.contiguous", "aten.alias", "aten.detach",
          "aten.flatten.using_ints", "aten.unsqueeze", "aten.squeeze.dim",
          "aten.dropout", "aten.lift_fresh_copy", "aten._to_copy"})
      m[n] = &FuncEmitter::emitCopy;
    return m;
  }();
  return t;
}

std::string FuncEmitter::broadcastStrides(Value v, ArrayRef<int64_t> out) {
  auto in = shape(v);
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1;
  for (int i = (int)in.size() - 1, o = (int)out.size() - 1; i >= 0; --i, --o) {
    strides[o] = (in[i] == 1 && out[o] != 1) ? 0 : s;
    s *= in[i];
  }
  return intList(strides);
}

double FuncEmitter::scalarAttr(Operation *op, StringRef n, double dflt) {
  Attribute a = op->getAttr(n);
  if (!a)
    return dflt;
  if (auto i = a.dyn_cast<IntegerAttr>())
    return i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                    : double(i.getInt());
  if (auto f = a.dyn_cast<FloatAttr>())
    return f.getValueAsDouble();
  if (auto b = a.dyn_cast<BoolAttr>())
    return b.getValue();
  return dflt;
}

LogicalResult FuncEmitter::checkTypes(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types) {
    auto rt = t.dyn_cast<RankedTensorType>();
    if (!rt)
      return op->emitError() << "dynoc build (cpu): '" << op->getName()
                             << "' has a non-tensor value of type " << t
                             << ", which the CPU backend does not support yet";
    if (!rt.getElementType().isF32())
      return op->emitError() << "dynoc build (cpu): '" << op->getName()
                             << "' uses dtype " << rt.getElementType()
                             << "; the CPU backend supports f32 only so far";
    if (!rt.hasStaticShape())
      return op->emitError() << "dynoc build (cpu): '" << op->getName()
                             << "' has dynamic dims (" << rt
                             << "); the CPU backend needs static shapes so far";
  }
  return success();
}

LogicalResult FuncEmitter::emitUnary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  std::string f;
  if (n == "aten.relu")
    f = "x > 0.f ? x : 0.f";
  else if (n == "aten.sigmoid")
    f = "1.f / (1.f + std::exp(-x))";
  else if (n == "aten.tanh")
    f = "std::tanh(x)";
  else if (n == "aten.neg")
    f = "-x";
  else if (n == "aten.exp")
    f = "std::exp(x)";
  else if (n == "aten.silu")
    f = "x / (1.f + std::exp(-x))";
  else if (n == "aten.sqrt")
    f = "std::sqrt(x)";
  else if (n == "aten.rsqrt")
    f = "1.f / std::sqrt(x)";
  else if (n == "aten.abs")
    f = "std::fabs(x)";
  else if (n == "aten.gelu") {
    auto approx = op->getAttrOfType<StringAttr>("approximate");
    if (approx && approx.getValue() != "none" && approx.getValue() != "tanh")
      return op->emitError()
             << "dynoc build (cpu): unknown gelu approximation '"
             << approx.getValue() << "'";
    f = approx && approx.getValue() == "tanh" ? "dynoc_k::gelu_tanh(x)"
                                              : "dynoc_k::gelu(x)";
  }
  os += llvm::formatv(
      "  dynoc_k::unary({0}, {1}, {2}, [](float x) {{ return {3}; });\n",
      name(op->getResult(0)), name(op->getOperand(0)),
      numel(shape(op->getResult(0))), f);
  return success();
}

LogicalResult FuncEmitter::emitBinary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  double alpha = scalarAttr(op, "alpha", 1.0);
  std::string f;
  if (n == "aten.add.Tensor")
    f = alpha == 1.0 ? "a + b" : "a + " + fmtFloat(alpha) + " * b";
  else if (n == "aten.sub.Tensor")
    f = alpha == 1.0 ? "a - b" : "a - " + fmtFloat(alpha) + " * b";
  else if (n == "aten.mul.Tensor")
    f = "a * b";
  else if (n == "aten.div.Tensor") {
    if (op->getAttr("rounding_mode"))
      return op->emitError()
             << "dynoc build (cpu): div with a rounding_mode is "
                "not supported yet";
    f = "a / b";
  } else if (n == "aten.maximum")
    f = "a > b || a != a ? a : b";
  else if (n == "aten.minimum")
    f = "a < b || a != a ? a : b";
  Value out = op->getResult(0);
  auto outShape = shape(out);
  os += llvm::formatv(
      "  {{ const int64_t as[] = {0}, bs[] = {1}, shape[] = {2};\n"
      "    dynoc_k::binary({3}, {4}, as, {5}, bs, shape, {6}, "
      "[](float a, float b) {{ return {7}; }); }\n",
      broadcastStrides(op->getOperand(0), outShape),
      broadcastStrides(op->getOperand(1), outShape), intList(outShape),
      name(out), name(op->getOperand(0)), name(op->getOperand(1)),
      outShape.size(), f);
  return success();
}

LogicalResult FuncEmitter::emitScalarBinary(Operation *op) {
  StringRef n = op->getName().getStringRef();
  if (!op->getAttr("other"))
    return op->emitError() << "dynoc build (cpu): '" << n
                           << "' needs its 'other' attribute";
  std::string s = fmtFloat(scalarAttr(op, "other", 0.0));
  double alpha = scalarAttr(op, "alpha", 1.0);
  std::string f;
  if (n == "aten.add.Scalar")
    f = "x + " + fmtFloat(alpha) + " * " + s;
  else if (n == "aten.sub.Scalar")
    f = "x - " + fmtFloat(alpha) + " * " + s;
  else if (n == "aten.mul.Scalar")
    f = "x * " + s;
  else
    f = "x / " + s;
  os += llvm::formatv(
      "  dynoc_k::unary({0}, {1}, {2}, [](float x) {{ return {3}; });\n",
      name(op->getResult(0)), name(op->getOperand(0)),
      numel(shape(op->getResult(0))), f);
  return success();
}

LogicalResult FuncEmitter::emitMatmul(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value out = op->getResult(0);
  // linear(x, w, b?) = x @ w^T + b ; mm(a, b) ; addmm(bias, a, b).
  Value a, b, bias;
  bool transB = n == "aten.linear";
  if (n == "aten.mm")
    a = op->getOperand(0), b = op->getOperand(1);
  else if (n == "aten.addmm")
    bias = op->getOperand(0), a = op->getOperand(1), b = op->getOperand(2);
  else {
    a = op->getOperand(0), b = op->getOperand(1);
    if (op->getNumOperands() > 2)
      bias = op->getOperand(2);
  }
  // A transpose feeding the GEMM folds into its transB flag.
  if (Operation *def = b.getDefiningOp()) {
    StringRef dn = def->getName().getStringRef();
    if ((dn == "aten.t" || dn == "aten.transpose.int") &&
        shape(def->getOperand(0)).size() == 2) {
      b = def->getOperand(0);
      transB = !transB;
    }
  }
  auto outShape = shape(out);
  auto aShape = shape(a);
  if (aShape.size() != 2 && n != "aten.linear")
    return op->emitError() << "dynoc build (cpu): '" << n
                           << "' expects 2-D operands";
  int64_t K = aShape.back();
  int64_t M = numel(aShape) / std::max<int64_t>(K, 1);
  int64_t N = outShape.empty() ? 1 : outShape.back();
  double alpha = scalarAttr(op, "alpha", 1.0),
         beta = scalarAttr(op, "beta", 1.0);
  if (bias && beta != 0.0)
    os +=
        llvm::formatv("  {{ const int64_t s[] = {0}, shape[] = {1};\n"
                      "    dynoc_k::expand({2}, {3}, s, shape, {4}, {5}); }\n",
                      broadcastStrides(bias, outShape), intList(outShape),
                      name(out), name(bias), outShape.size(), fmtFloat(beta));
  os += llvm::formatv(
      "  if (int rc = dynoc_k::gemm(false, {0}, {1}, {2}, {3}, {4}, "
      "{5}, {6}, {7}, {8})) return rc;\n",
      transB ? "true" : "false", M, N, K, fmtFloat(alpha), name(a), name(b),
      bias && beta != 0.0 ? "1.f" : "0.f", name(out));
  return success();
}

LogicalResult FuncEmitter::emitTranspose(Operation *op) {
  StringRef n = op->getName().getStringRef();
  Value in = op->getOperand(0);
  int64_t rank = shape(in).size();
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  auto norm = [&](int64_t d) { return d < 0 ? d + rank : d; };
  if (n == "aten.t") {
    if (rank == 2)
      std::swap(perm[0], perm[1]);
  } else if (n == "aten.transpose.int") {
    auto d0 = op->getAttrOfType<IntegerAttr>("dim0"),
         d1 = op->getAttrOfType<IntegerAttr>("dim1");
    if (!d0 || !d1)
      return op->emitError()
             << "dynoc build (cpu): transpose needs dim0 and dim1";
    std::swap(perm[norm(d0.getInt())], perm[norm(d1.getInt())]);
  } else {
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims");
    if (!dims || (int64_t)dims.size() != rank)
      return op->emitError()
             << "dynoc build (cpu): permute needs " << rank << " dims";
    for (int64_t i = 0; i < rank; ++i)
      perm[i] = norm(dims[i]);
  }
  // A transpose whose only users are GEMMs that fold it emits nothing.
  bool folded = llvm::all_of(op->getResult(0).getUsers(), [&](Operation *u) {
    StringRef un = u->getName().getStringRef();
    return (un == "aten.mm" || un == "aten.addmm" || un == "aten.linear") &&
           u->getOperand(un == "aten.addmm" ? 2 : 1) == op->getResult(0) &&
           rank == 2;
  });
  if (folded && !op->getResult(0).use_empty())
    return success();
  os += llvm::formatv("  {{ const int64_t shape[] = {0}, perm[] = {1};\n"
                      "    dynoc_k::permute({2}, {3}, shape, perm, {4}); }\n",
                      intList(shape(in)), intList(perm), name(op->getResult(0)),
                      name(in), rank);
  return success();
}

LogicalResult FuncEmitter::emitCopy(Operation *op) {
  Value in = op->getOperand(0), out = op->getResult(0);
  if (numel(shape(in)) != numel(shape(out)))
    return op->emitError() << "dynoc build (cpu): '" << op->getName()
                           << "' changes the element count";
  StringRef n = op->getName().getStringRef();
  if (n == "aten.dropout" && scalarAttr(op, "train", 0.0) != 0.0)
    return op->emitError() << "dynoc build (cpu): dropout in training mode is "
                              "not supported";
  os += llvm::formatv("  std::memcpy({0}, {1}, {2} * sizeof(float));\n",
                      name(out), name(in), numel(shape(out)));
  return success();
}

LogicalResult FuncEmitter::emit(const std::string &symbol) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  os += "extern \"C\" DYNOC_EXPORT int " + symbol +
        "(void *const *args, void *const *outs) {\n";
  for (BlockArgument arg : body.getArguments()) {
    auto rt = arg.getType().dyn_cast<RankedTensorType>();
    if (!rt || !rt.getElementType().isF32() || !rt.hasStaticShape())
      return func.emitError()
             << "dynoc build (cpu): argument " << arg.getArgNumber()
             << " has type " << arg.getType()
             << "; the CPU backend supports static f32 tensors only so far";
    std::string n = "a" + std::to_string(arg.getArgNumber());
    names[arg] = n;
    os += llvm::formatv("  float *{0} = static_cast<float *>(args[{1}]);\n", n,
                        arg.getArgNumber());
  }
  // A result computed by an op is written straight into its output buffer.
  llvm::DenseMap<Value, unsigned> outSlot;
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (!v.isa<BlockArgument>() && !outSlot.count(v))
      outSlot[v] = i;
  for (Operation &op : body.without_terminator()) {
    auto it = table().find(op.getName().getStringRef());
    if (it == table().end())
      return op.emitError() << "dynoc build (cpu): op '" << op.getName()
                            << "' is not supported by the CPU backend yet";
    if (failed(checkTypes(&op)))
      return failure();
    for (Value r : op.getResults()) {
      std::string n = "v" + std::to_string(next++);
      names[r] = n;
      auto slot = outSlot.find(r);
      if (slot != outSlot.end())
        os += llvm::formatv("  float *{0} = static_cast<float *>(outs[{1}]);\n",
                            n, slot->second);
      else
        os += llvm::formatv(
            "  dynoc_k::Buffer {0}_buf({1});\n  float *{0} = {0}_buf.get();\n",
            n, numel(shape(r)));
    }
    std::string loc;
    llvm::raw_string_ostream(loc) << op.getLoc();
    os += "  // " + op.getName().getStringRef().str() + " " + loc + "\n";
    if (failed((this->*(it->second))(&op)))
      return failure();
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto slot = outSlot.find(v);
    if (slot == outSlot.end() || slot->second != i)
      os +=
          llvm::formatv("  std::memcpy(outs[{0}], {1}, {2} * sizeof(float));\n",
                        i, name(v), numel(shape(v)));
  }
  os += "  return 0;\n}\n\n";
  return success();
}

json guardToJson(DictionaryAttr d) {
  json g = json::object();
  for (NamedAttribute a : d) {
    std::string key = a.getName().str();
    Attribute v = a.getValue();
    if (auto s = v.dyn_cast<StringAttr>())
      g[key] = s.str();
    else if (auto b = v.dyn_cast<BoolAttr>())
      g[key] = b.getValue();
    else if (auto i = v.dyn_cast<IntegerAttr>())
      g[key] = i.getInt();
    else if (auto f = v.dyn_cast<FloatAttr>())
      g[key] = f.getValueAsDouble();
    else if (auto t = v.dyn_cast<TypeAttr>())
      g[key] = torchDTypeName(t.getValue());
    else if (auto arr = v.dyn_cast<DenseI64ArrayAttr>())
      g[key] = arr.asArrayRef().vec();
  }
  return g;
}

json tensorJson(const std::string &kind, const std::string &name, Type t) {
  auto rt = t.cast<RankedTensorType>();
  std::vector<int64_t> shape;
  for (int64_t d : rt.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return {{"kind", kind},
          {"name", name},
          {"dtype", torchDTypeName(rt.getElementType())},
          {"shape", shape}};
}

} // namespace

LogicalResult emitCpuModule(ModuleOp module, const std::string &weightsFile,
                            CpuModuleSource &out) {
  out.cpp = "// Generated by dynoc build --target=cpu. Do not edit.\n"
            "#include \"dynoc_kernels.h\"\n\n"
            "#define DYNOC_EXPORT __attribute__((visibility(\"default\")))\n\n";
  json manifest = {
      {"format", "dynoc-model"}, {"version", 1}, {"graphs", json::array()}};
  if (!weightsFile.empty())
    manifest["weights"] = weightsFile;
  std::set<std::string> weights;
  int index = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    std::string symbol = "dynoc_graph_" + std::to_string(index++) + "_run";
    FuncEmitter emitter(func, out.cpp);
    if (failed(emitter.emit(symbol)))
      return failure();
    json g = {{"name", func.getSymName().str()}, {"symbol", symbol}};
    if (auto e = func->getAttrOfType<StringAttr>(attrs::kEntry))
      g["entry"] = e.str();
    auto inputs = func->getAttrOfType<ArrayAttr>(attrs::kInputs);
    if (!inputs)
      return func.emitError()
             << "graph '" << func.getSymName() << "' lacks '" << attrs::kInputs
             << "'; is it a dynoc graph file?";
    g["inputs"] = json::array();
    for (auto [i, in] : llvm::enumerate(inputs)) {
      auto d = in.cast<DictionaryAttr>();
      std::string kind = d.getAs<StringAttr>("kind").str();
      std::string name = d.getAs<StringAttr>("name").str();
      g["inputs"].push_back(tensorJson(kind, name, func.getArgumentTypes()[i]));
      if (kind != "user")
        weights.insert(name);
    }
    g["outputs"] = json::array();
    for (auto [i, t] : llvm::enumerate(func.getResultTypes()))
      g["outputs"].push_back(
          tensorJson("output", "output_" + std::to_string(i), t));
    if (auto s = func->getAttrOfType<StringAttr>(attrs::kOutputs)) {
      json structure = json::parse(s.str(), nullptr, false);
      if (structure.is_discarded())
        return func.emitError()
               << "'" << attrs::kOutputs << "' is not valid JSON";
      g["output_structure"] = structure;
    }
    g["guards"] = json::array();
    if (auto guards = func->getAttrOfType<ArrayAttr>(attrs::kGuards))
      for (Attribute a : guards)
        g["guards"].push_back(guardToJson(a.cast<DictionaryAttr>()));
    manifest["graphs"].push_back(g);
  }
  if (index == 0)
    return module.emitError()
           << "dynoc build: the module has no graph (func.func)";
  out.weightNames.assign(weights.begin(), weights.end());
  if (out.weightNames.empty())
    manifest.erase("weights");
  out.manifestJson = manifest.dump(1);
  out.cpp += "static const char kManifest[] = R\"DYNOC_MANIFEST(" +
             out.manifestJson +
             ")DYNOC_MANIFEST\";\n\n"
             "extern \"C\" DYNOC_EXPORT const char *dynoc_model_manifest(void) "
             "{ return kManifest; }\n"
             "extern \"C\" DYNOC_EXPORT int dynoc_model_abi_version(void) { "
             "return 1; }\n";
  return success();
}

} // namespace dynoc
