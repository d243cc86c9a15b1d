// data.cu - data movement (expand, permute, slices, concatenation pieces,
// arange, embedding, gather) for each element type a graph moves. Part of
// the kernel library (dynoc_cuda_library.cuh): a grid-stride kernel with
// 64-bit index math each, compiled once here rather than in every model.
#include "dynoc_cuda_core.cuh"

#include <type_traits>

namespace dynoc_k {

template <class T>
void expand(T *out, const T *in, const int64_t *s, const int64_t *shape,
            int rank, float scale) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  Arr8 sh(shape, rank), st(s, rank);
  pointwise(n, [=] __device__(int64_t i) {
    const T x = in[offsetOf(i, sh, st, rank)];
    // Integers stay exact unless scaled (float holds 24 bits).
    out[i] = scale == 1.f ? x : T(float(x) * scale);
  });
}

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

template <class T>
void permute(T *out, const T *in, const int64_t *inShape, const int64_t *perm,
             int rank) {
  int64_t inStrides[8], outShape[8], stride[8], n = 1;
  for (int d = rank - 1, s = 1; d >= 0; --d) {
    inStrides[d] = s;
    s *= inShape[d];
  }
  for (int d = 0; d < rank; ++d) {
    outShape[d] = inShape[perm[d]];
    stride[d] = inStrides[perm[d]];
    n *= outShape[d];
  }
  Arr8 sh(outShape, rank), st(stride, rank);
  pointwise(
      n, [=] __device__(int64_t i) { out[i] = in[offsetOf(i, sh, st, rank)]; });
}

template <class T>
void broadcast_copy(T *out, const T *in, const int64_t *s, const int64_t *shape,
                    int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  Arr8 sh(shape, rank), st(s, rank);
  pointwise(
      n, [=] __device__(int64_t i) { out[i] = in[offsetOf(i, sh, st, rank)]; });
}

// Elements start, start + step, ... (len of them) of the middle dim of an
// (outer, n, inner) tensor, into a dense (outer, len, inner) one.
template <class T>
void slice_copy(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
                int64_t start, int64_t step, int64_t len) {
  pointwise(outer * len * inner, [=] __device__(int64_t i) {
    int64_t k = i % inner, r = i / inner, j = r % len, o = r / len;
    out[i] = in[(o * n + start + j * step) * inner + k];
  });
}
// A dense (outer, len, inner) tensor at [start, start + len) of the middle
// dim of an (outer, n, inner) one.
template <class T>
void place(T *out, const T *in, int64_t outer, int64_t n, int64_t inner,
           int64_t start, int64_t len) {
  pointwise(outer * len * inner, [=] __device__(int64_t i) {
    int64_t k = i % inner, r = i / inner, j = r % len, o = r / len;
    out[(o * n + start + j) * inner + k] = in[i];
  });
}

template <class T> void arange(T *out, int64_t n, double start, double step) {
  pointwise(
      n, [=] __device__(int64_t i) { out[i] = T(start + double(i) * step); });
}

// Rows of `weight` picked by `indices`. An index out of range cannot fail
// the call without a host sync: its row reads as zeros (docs/cuda.md).
template <class T>
int embedding(T *out, const T *weight, const int64_t *indices, int64_t n,
              int64_t rows, int64_t dim) {
  pointwise(n * dim, [=] __device__(int64_t i) {
    int64_t r = indices[i / dim];
    out[i] = r >= 0 && r < rows ? weight[r * dim + i % dim] : T(0.f);
  });
  return 0;
}

template <class T>
int gather(T *out, const T *in, const int64_t *index, const int64_t *outShape,
           const int64_t *inShape, int rank, int dim) {
  int64_t n = 1, inStrides[8];
  for (int d = 0; d < rank; ++d)
    n *= outShape[d];
  for (int d = rank - 1, s = 1; d >= 0; --d) {
    inStrides[d] = s;
    s *= inShape[d];
  }
  Arr8 os(outShape, rank), is(inShape, rank), st(inStrides, rank);
  pointwise(n, [=] __device__(int64_t i) {
    int64_t rem = i, off = 0;
    bool bad = false;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rem % os[d];
      rem /= os[d];
      if (d == dim) {
        idx = index[i];
        bad |= idx < 0 || idx >= is[d];
      }
      off += idx * st[d];
    }
    out[i] = bad ? T(0.f) : in[off];
  });
  return 0;
}

// index.Tensor's gather, as the CPU's dynoc_k::index_gather lays it out
// (prelude/dynoc_kernels.h): up to 8 output dims and 4 index tensors, read
// through one by-value plan. An index outside [-limit, limit) reads zeros,
// as embedding and gather do here (the device cannot fail the call without
// a host synchronization).
struct IndexPlan {
  Arr8 shape, inStride, limit, idxInStride;
  Arr8 idxStride[4];
  const int64_t *idx[4];
};
static IndexPlan make_index_plan(const int64_t *shape, int rank,
                                 const int64_t *inStride, int k,
                                 const int64_t *const *idx,
                                 const int64_t *idxStride, const int64_t *limit,
                                 const int64_t *idxInStride) {
  IndexPlan plan;
  plan.shape = Arr8(shape, rank);
  plan.inStride = Arr8(inStride, rank);
  plan.limit = Arr8(limit, k);
  plan.idxInStride = Arr8(idxInStride, k);
  for (int j = 0; j < 4; ++j) {
    plan.idxStride[j] = Arr8(j < k ? idxStride + j * rank : nullptr, rank);
    plan.idx[j] = j < k ? idx[j] : nullptr;
  }
  return plan;
}
static int64_t elements(const int64_t *shape, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}
template <class T>
int index_gather(T *out, const T *in, const int64_t *shape, int rank,
                 const int64_t *inStride, int k, const int64_t *const *idx,
                 const int64_t *idxStride, const int64_t *limit,
                 const int64_t *idxInStride) {
  if (rank > 8 || k > 4) {
    fail(400, "index.Tensor", "over 8 dims or 4 index tensors");
    return 400;
  }
  IndexPlan plan = make_index_plan(shape, rank, inStride, k, idx, idxStride,
                                   limit, idxInStride);
  int64_t n = elements(shape, rank);
  pointwise(n, [=] __device__(int64_t i) {
    int64_t rem = i, off = 0, ioff[4] = {0, 0, 0, 0};
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rem % plan.shape[d];
      rem /= plan.shape[d];
      off += c * plan.inStride[d];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        ioff[j] += c * plan.idxStride[j][d];
    }
    bool bad = false;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (j < k) {
        int64_t x = plan.idx[j][ioff[j]];
        if (x < 0)
          x += plan.limit[j];
        bad |= x < 0 || x >= plan.limit[j];
        off += x * plan.idxInStride[j];
      }
    out[i] = bad ? T(0.f) : in[off];
  });
  return 0;
}

// index_put's scatter, through index_gather's plan; `vs`: the values'
// strides over the indexed shape. An index out of range writes nothing.
// accumulate adds atomically: f32, f64, i32 and i64 (unsigned wrap-around)
// only, checked by the caller.
template <class T> __device__ void accumulate_at(T *p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int>)
    atomicAdd(p, v);
  else if constexpr (std::is_same_v<T, int64_t>)
    atomicAdd(reinterpret_cast<unsigned long long *>(p),
              static_cast<unsigned long long>(v));
  else
    *p = v; // unreachable: refused in index_scatter
}
template <class T>
int index_scatter(T *out, const T *values, const int64_t *shape, int rank,
                  const int64_t *outStride, const int64_t *vs, int k,
                  const int64_t *const *idx, const int64_t *idxStride,
                  const int64_t *limit, const int64_t *idxInStride,
                  bool accumulate) {
  constexpr bool kAtomic =
      std::is_same_v<T, float> || std::is_same_v<T, double> ||
      std::is_same_v<T, int> || std::is_same_v<T, int64_t>;
  if (rank > 8 || k > 4) {
    fail(400, "index_put", "over 8 dims or 4 index tensors");
    return 400;
  }
  if (accumulate && !kAtomic) {
    fail(400, "index_put", "accumulate=True of this dtype on CUDA");
    return 400;
  }
  IndexPlan plan = make_index_plan(shape, rank, outStride, k, idx, idxStride,
                                   limit, idxInStride);
  Arr8 vstride(vs, rank);
  int64_t n = elements(shape, rank);
  pointwise(n, [=] __device__(int64_t i) {
    int64_t rem = i, off = 0, voff = 0, ioff[4] = {0, 0, 0, 0};
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rem % plan.shape[d];
      rem /= plan.shape[d];
      off += c * plan.inStride[d];
      voff += c * vstride[d];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        ioff[j] += c * plan.idxStride[j][d];
    }
    bool bad = false;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (j < k) {
        int64_t x = plan.idx[j][ioff[j]];
        if (x < 0)
          x += plan.limit[j];
        bad |= x < 0 || x >= plan.limit[j];
        off += x * plan.idxInStride[j];
      }
    if (bad)
      return;
    if (accumulate)
      accumulate_at(out + off, values[voff]);
    else
      out[off] = values[voff];
  });
  return 0;
}

#define DYNOC_DATA(T)                                                          \
  template void expand<T>(T *, const T *, const int64_t *, const int64_t *,    \
                          int, float);                                         \
  template void permute<T>(T *, const T *, const int64_t *, const int64_t *,   \
                           int);                                               \
  template void broadcast_copy<T>(T *, const T *, const int64_t *,             \
                                  const int64_t *, int);                       \
  template void slice_copy<T>(T *, const T *, int64_t, int64_t, int64_t,       \
                              int64_t, int64_t, int64_t);                      \
  template void place<T>(T *, const T *, int64_t, int64_t, int64_t, int64_t,   \
                         int64_t);                                             \
  template void arange<T>(T *, int64_t, double, double);                       \
  template int embedding<T>(T *, const T *, const int64_t *, int64_t, int64_t, \
                            int64_t);                                          \
  template int gather<T>(T *, const T *, const int64_t *, const int64_t *,     \
                         const int64_t *, int, int);                           \
  template int index_gather<T>(T *, const T *, const int64_t *, int,           \
                               const int64_t *, int, const int64_t *const *,   \
                               const int64_t *, const int64_t *,               \
                               const int64_t *);                               \
  template int index_scatter<T>(T *, const T *, const int64_t *, int,          \
                                const int64_t *, const int64_t *, int,         \
                                const int64_t *const *, const int64_t *,       \
                                const int64_t *, const int64_t *, bool);
// Compiled once per element type (CudaBuild.cpp, kLibraryUnits).
DYNOC_DATA(DYNOC_TYPE)

} // namespace dynoc_k
