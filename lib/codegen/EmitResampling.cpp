//===- EmitResampling.cpp - padding, upsampling, adaptive pooling ---------===//
//
// Ops that resample the last 1-3 (spatial) dims of a tensor: reflection and
// replication padding, nearest (and nearest-exact) upsampling, linear,
// bilinear and trilinear upsampling, adaptive average pooling. Their spatial
// sizes are static, so each output position's input positions (and weights,
// and windows) are computed here, with ATen's arithmetic (UpSample.h,
// ReflectionPad.cpp, AdaptiveAveragePooling.cpp: float where ATen computes in
// float), and written into the model as tables the kernels read
// (prelude/dynoc_kernels_resample.h).
//
//===----------------------------------------------------------------------===//
#include "GraphEmitter.h"

#include <cmath>

namespace dynoc {
namespace codegen {

namespace {

/// The op's family and how many trailing dims it resamples.
struct Resampling {
  enum Kind { Reflect, Replicate, Nearest, NearestExact, Linear, Adaptive };
  Kind kind;
  int dims;
};

std::optional<Resampling> resamplingOf(StringRef n) {
  n.consume_front("aten.");
  n.consume_front("_");
  int dims = n.endswith("1d") ? 1 : n.endswith("2d") ? 2 : n.endswith("3d") ? 3 : 0;
  if (!dims)
    return std::nullopt;
  if (n.startswith("reflection_pad"))
    return Resampling{Resampling::Reflect, dims};
  if (n.startswith("replication_pad"))
    return Resampling{Resampling::Replicate, dims};
  if (n.startswith("upsample_nearest_exact"))
    return Resampling{Resampling::NearestExact, dims};
  if (n.startswith("upsample_nearest"))
    return Resampling{Resampling::Nearest, dims};
  if (n.startswith("upsample_linear") || n.startswith("upsample_bilinear") ||
      n.startswith("upsample_trilinear"))
    return Resampling{Resampling::Linear, dims};
  if (n.startswith("adaptive_avg_pool"))
    return Resampling{Resampling::Adaptive, dims};
  return std::nullopt;
}

/// ATen's scale of spatial dim `d` of `dims`: the op's scales_* attribute
/// (or the .vec overload's scale_factors), if given and positive.
std::optional<double> scaleOf(Operation *op, int d, int dims) {
  static const char *const names[3][3] = {
      {"scales"}, {"scales_h", "scales_w"}, {"scales_d", "scales_h", "scales_w"}};
  std::optional<double> s;
  if (auto f = op->getAttrOfType<FloatAttr>(names[dims - 1][d]))
    s = f.getValueAsDouble();
  else if (auto v = op->getAttrOfType<DenseF64ArrayAttr>("scale_factors"))
    if (d < v.size())
      s = v[d];
  if (s && *s > 0)
    return s;
  return std::nullopt;
}

/// compute_scales_value / area_pixel_compute_scale (UpSample.h), in W.
template <class W>
W scaleValue(std::optional<double> scale, int64_t in, int64_t out) {
  return scale ? W(1.0 / *scale) : W(in) / W(out);
}
template <class W>
W areaScale(int64_t in, int64_t out, bool alignCorners,
            std::optional<double> scale) {
  if (alignCorners)
    return out > 1 ? W(in - 1) / W(out - 1) : W(0);
  return scaleValue<W>(scale, in, out);
}

std::string joined(ArrayRef<std::string> items) {
  std::string s;
  for (const std::string &i : items)
    s += (s.empty() ? "" : ", ") + i;
  return s;
}

template <class W> std::string number(W v) {
  return llvm::formatv(sizeof(W) == 4 ? "{0:e9}f" : "{0:e17}", double(v)).str();
}

/// One static table: `static const TYPE NAME[] = {...};`.
template <class F>
std::string staticTable(StringRef type, const std::string &name, int64_t n, F f) {
  SmallVector<std::string> items;
  for (int64_t i = 0; i < n; ++i)
    items.push_back(f(i));
  return llvm::formatv("    static const {0} {1}[] = {{{2}};\n", type, name,
                       joined(items))
      .str();
}

} // namespace

LogicalResult GraphEmitter::emitResampling(Operation *op) {
  StringRef n = op->getName().getStringRef();
  std::optional<Resampling> r = resamplingOf(n);
  if (!r)
    return fail(op) << "'" << n << "' is no resampling op";
  Value in = op->getOperand(0), out = op->getResult(0);
  const DimList &inDims = dimsOf(in);
  auto outType = out.getType().cast<RankedTensorType>();
  const int D = r->dims, rank = int(inDims.size());
  if (rank < D + 1 || rank > D + 2 || outType.getRank() != rank)
    return fail(op) << "'" << n << "' expects " << D + 1 << " or " << D + 2
                    << " dims";
  SmallVector<int64_t> inSize, outSize;
  for (int d = rank - D; d < rank; ++d) {
    if (!isLiteral(inDims[d]) || outType.isDynamicDim(d))
      return fail(op) << "'" << n << "' with dynamic spatial sizes is not "
                      << "supported yet";
    inSize.push_back(std::stoll(inDims[d]));
    outSize.push_back(outType.getDimSize(d));
  }
  DimList outDims(inDims.begin(), inDims.end() - D);
  for (int64_t s : outSize)
    outDims.push_back(std::to_string(s));
  setDims(out, op, outDims);
  const std::string outer = product(ArrayRef(inDims).drop_back(D));
  for (auto [i, o] : llvm::zip(inSize, outSize))
    if (o > 0 && i == 0)
      return fail(op) << "'" << n << "' of an empty input";
  if (product(outDims) == "0")
    return success();

  // The tables, one (or several) per spatial dim d.
  std::string tables;
  SmallVector<std::string> maps, lo, hi, wlo, whi;
  const bool f64 = elementTypeOf(out).isF64();
  if (r->kind == Resampling::Reflect || r->kind == Resampling::Replicate) {
    auto pad = op->getAttrOfType<DenseI64ArrayAttr>("padding");
    if (!pad || int(pad.size()) != 2 * D)
      return fail(op) << "'" << n << "' needs " << 2 * D << " pads";
    for (int d = 0; d < D; ++d) {
      int64_t before = pad[2 * (D - 1 - d)], size = inSize[d];
      if (r->kind == Resampling::Reflect && (before >= size ||
                                             pad[2 * (D - 1 - d) + 1] >= size))
        return fail(op) << "'" << n << "': a pad of at least the input size "
                        << size;
      maps.push_back("m" + std::to_string(d));
      tables += staticTable("int64_t", maps.back(), outSize[d], [&](int64_t j) {
        int64_t i = j - before;
        if (r->kind == Resampling::Replicate)
          i = std::clamp<int64_t>(i, 0, size - 1);
        else if (i < 0)
          i = -i;
        else if (i >= size)
          i = 2 * (size - 1) - i;
        return std::to_string(i);
      });
    }
  } else if (r->kind == Resampling::Nearest ||
             r->kind == Resampling::NearestExact) {
    for (int d = 0; d < D; ++d) {
      int64_t size = inSize[d], o = outSize[d];
      float scale = scaleValue<float>(scaleOf(op, d, D), size, o);
      maps.push_back("m" + std::to_string(d));
      tables += staticTable("int64_t", maps.back(), o, [&](int64_t j) {
        int64_t i;
        if (r->kind == Resampling::NearestExact)
          i = int64_t(std::floor(float((double(j) + 0.5) * double(scale))));
        else if (o == size)
          i = j;
        else if (o == 2 * size)
          i = j >> 1;
        else
          i = int64_t(std::floor(float(j) * scale));
        return std::to_string(std::min(i, size - 1));
      });
    }
  } else if (r->kind == Resampling::Linear) {
    auto align = op->getAttrOfType<BoolAttr>("align_corners");
    const bool corners = align && align.getValue();
    for (int d = 0; d < D; ++d) {
      int64_t size = inSize[d], o = outSize[d];
      std::string k = std::to_string(d);
      lo.push_back("lo" + k), hi.push_back("hi" + k);
      wlo.push_back("wlo" + k), whi.push_back("whi" + k);
      // compute_source_index_and_lambda, in float (double for f64).
      auto corner = [&](auto w, int64_t j) {
        using W = decltype(w);
        if (o == size)
          return std::make_tuple(j, j, W(1), W(0));
        W ratio = areaScale<W>(size, o, corners, scaleOf(op, d, D));
        W src = corners ? ratio * W(j) : ratio * (W(j) + W(0.5)) - W(0.5);
        if (!corners && src < W(0))
          src = W(0);
        int64_t i0 = std::min<int64_t>(int64_t(std::floor(float(src))), size - 1);
        W l1 = std::min(std::max(src - W(i0), W(0)), W(1));
        return std::make_tuple(i0, i0 + (i0 < size - 1 ? 1 : 0), W(1) - l1, l1);
      };
      auto emit = [&](auto w) {
        using W = decltype(w);
        StringRef type = f64 ? "double" : "float";
        auto at = [&](int64_t j) { return corner(W(0), j); };
        tables += staticTable("int64_t", lo.back(), o, [&](int64_t j) {
          return std::to_string(std::get<0>(at(j)));
        });
        tables += staticTable("int64_t", hi.back(), o, [&](int64_t j) {
          return std::to_string(std::get<1>(at(j)));
        });
        tables += staticTable(type, wlo.back(), o, [&](int64_t j) {
          return number(std::get<2>(at(j)));
        });
        tables += staticTable(type, whi.back(), o, [&](int64_t j) {
          return number(std::get<3>(at(j)));
        });
      };
      if (f64)
        emit(double(0));
      else
        emit(float(0));
    }
  } else { // adaptive average pooling: AdaptivePooling.h's windows
    for (int d = 0; d < D; ++d) {
      int64_t size = inSize[d], o = outSize[d];
      std::string k = std::to_string(d);
      lo.push_back("st" + k), hi.push_back("en" + k);
      tables += staticTable("int64_t", lo.back(), o, [&](int64_t j) {
        return std::to_string(
            int64_t(std::floor(float(j * size) / float(o))));
      });
      tables += staticTable("int64_t", hi.back(), o, [&](int64_t j) {
        return std::to_string(
            int64_t(std::ceil(float((j + 1) * size) / float(o))));
      });
    }
  }

  auto sizes = [](ArrayRef<int64_t> v) {
    SmallVector<std::string> s;
    for (int64_t x : v)
      s.push_back(std::to_string(x));
    return braceList(s);
  };
  auto pointers = [](ArrayRef<std::string> names) {
    return "{" + joined(names) + "}";
  };
  std::string call;
  if (!maps.empty())
    call = llvm::formatv("    const int64_t *const maps[] = {0};\n"
                         "    dynoc_k::spatial_gather({1}, {2}, {3}, {4}, is, "
                         "os, maps);\n",
                         pointers(maps), name(out), name(in), outer, D);
  else if (!wlo.empty())
    call = llvm::formatv(
        "    const int64_t *const lo[] = {0}, *const hi[] = {1};\n"
        "    const {2} *const wlo[] = {3}, *const whi[] = {4};\n"
        "    dynoc_k::spatial_linear({5}, {6}, {7}, {8}, is, os, lo, hi, wlo, "
        "whi);\n",
        pointers(lo), pointers(hi), f64 ? "double" : "float", pointers(wlo),
        pointers(whi), name(out), name(in), outer, D);
  else
    call = llvm::formatv(
        "    const int64_t *const st[] = {0}, *const en[] = {1};\n"
        "    dynoc_k::adaptive_avg_pool<{2}, {3}>({4}, {5}, {6}, {7}, is, os, "
        "st, en);\n",
        pointers(lo), pointers(hi), elemCType(out), f64 ? "double" : "float",
        name(out), name(in), outer, D);
  code += llvm::formatv("  {{\n{0}    const int64_t is[] = {1}, os[] = {2};\n"
                        "{3}  }\n",
                        tables, sizes(inSize), sizes(outSize), call);
  return success();
}

} // namespace codegen
} // namespace dynoc
