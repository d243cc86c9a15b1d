// dynoc_kernels_index.h - kernels that read or write through index tensors:
// embedding rows, gather, advanced indexing (index.Tensor) and index_put,
// scatter and its reductions; and sort and topk, which give them. Appended to dynoc_kernels.h in the embedded
// prelude (see lib/codegen_cpu/BUILD.bazel), so it uses that file's helpers.
// An index out of range fails the call (code 3) rather than touching memory
// outside the tensor.

namespace dynoc_k {

// Rows of `weight` ([rows, dim]) picked by `indices`; an index out of range
// fails the call (code 3) rather than reading outside the table.
template <class T>
inline int embedding(T *out, const T *weight, const int64_t *indices, int64_t n,
                     int64_t rows, int64_t dim) {
  for (int64_t i = 0; i < n; ++i)
    if (indices[i] < 0 || indices[i] >= rows)
      return 3;
#pragma omp parallel for if (n * dim > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(out + i * dim, weight + indices[i] * dim,
                size_t(dim) * sizeof(T));
  return 0;
}

// out[idx] = in[idx with dim d replaced by index[idx]]; shapes are index's
// (out) and in's. An index out of range fails the call (code 3).
// The index is int64 or int32, as PyTorch takes.
template <class T, class I>
inline int gather(T *out, const T *in, const I *index, const int64_t *outShape,
                  const int64_t *inShape, int rank, int dim) {
  int64_t n = 1, inStrides[8];
  for (int d = 0; d < rank; ++d)
    n *= outShape[d];
  for (int64_t d = rank - 1, s = 1; d >= 0; --d) {
    inStrides[d] = s;
    s *= inShape[d];
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = rem % outShape[d];
      rem /= outShape[d];
      if (d == dim) {
        idx = index[i];
        if (idx < 0 || idx >= inShape[d])
          return 3;
      }
      off += idx * inStrides[d];
    }
    out[i] = in[off];
  }
  return 0;
}

// Advanced indexing (index.Tensor) as a gather: output element `i` (over
// `shape`, rank dims) reads in[sum_d coord_d * inStride_d + sum_k
// idx_k[coord . idxStride_k] * idxInStride_k]. inStride is 0 on the output
// dims the index tensors span; idxStride (k rows of rank) is 0 on the others
// and on broadcast dims. An index outside [-limit, limit) fails the call
// (code 3).
template <class T>
inline int index_gather(T *out, const T *in, const int64_t *shape, int rank,
                        const int64_t *inStride, int k,
                        const int64_t *const *idx, const int64_t *idxStride,
                        const int64_t *limit, const int64_t *idxInStride) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  int bad = 0;
#pragma omp parallel for if (n > kParallelGrain) reduction(| : bad)
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0, ioff[8] = {0};
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      off += c * inStride[d];
      for (int j = 0; j < k; ++j)
        ioff[j] += c * idxStride[j * rank + d];
    }
    for (int j = 0; j < k; ++j) {
      int64_t x = idx[j][ioff[j]];
      if (x < 0)
        x += limit[j];
      if (x < 0 || x >= limit[j]) {
        bad = 1;
        x = 0;
      }
      off += x * idxInStride[j];
    }
    out[i] = bad ? T() : in[off];
  }
  return bad ? 3 : 0;
}

// index_put: writes (accumulate: adds) `values`, read at strides `vs` over
// the indexed shape (0 on broadcast dims), into `out` where index_gather
// would read. An index out of range writes nothing and fails the call (3).
// Accumulation runs serially (two indices may name one element).
template <class T>
inline int index_scatter(T *out, const T *values, const int64_t *shape,
                         int rank, const int64_t *outStride,
                         const int64_t *vs, int k,
                         const int64_t *const *idx, const int64_t *idxStride,
                         const int64_t *limit, const int64_t *idxInStride,
                         bool accumulate) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  int bad = 0;
#pragma omp parallel for if (!accumulate && n > kParallelGrain) reduction(| : bad)
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0, voff = 0, ioff[8] = {0};
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      off += c * outStride[d];
      voff += c * vs[d];
      for (int j = 0; j < k; ++j)
        ioff[j] += c * idxStride[j * rank + d];
    }
    bool skip = false;
    for (int j = 0; j < k; ++j) {
      int64_t x = idx[j][ioff[j]];
      if (x < 0)
        x += limit[j];
      if (x < 0 || x >= limit[j]) {
        skip = true;
        break;
      }
      off += x * idxInStride[j];
    }
    if (skip) {
      bad = 1;
      continue;
    }
    if (accumulate) {
      if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>)
        out[off] = T(float(out[off]) + float(values[voff]));
      else if constexpr (std::is_same_v<T, bool>)
        out[off] = out[off] || values[voff];
      else
        out[off] += values[voff];
    } else
      out[off] = values[voff];
  }
  return bad ? 3 : 0;
}

// The scatter family into `out` (a copy of self already): each element c of
// `shape` (rank dims; the index's shape, or for index_add the source's)
// writes src[c . ss] to c with dim `dim` replaced by index[c . is], combined
// by `reduce`: 0 replaces, 1 adds (times `alpha`), 2 multiplies, 3 averages,
// 4 keeps the max, 5 the min. Without `includeSelf` a position that
// receives values starts from the first of them rather than from self's;
// a mean counts self's value only with it. Serial: two elements may write
// one position, and eager's order decides which write wins.
template <class T, class I>
inline int scatter(T *out, const I *index, const int64_t *is, const T *src,
                   const int64_t *ss, const int64_t *shape,
                   const int64_t *outShape, int rank, int dim, int reduce,
                   bool includeSelf, double alpha) {
  int64_t n = 1, outNumel = 1, outStrides[8];
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  for (int d = rank - 1; d >= 0; --d) {
    outStrides[d] = outNumel;
    outNumel *= outShape[d];
  }
  std::vector<int64_t> count;
  if (reduce == 3 || !includeSelf)
    count.assign(size_t(outNumel), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0, io = 0, so = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      io += c * is[d];
      so += c * ss[d];
      if (d != dim)
        off += c * outStrides[d];
    }
    int64_t at = int64_t(index[io]);
    if (at < 0 || at >= outShape[dim])
      return 3;
    off += at * outStrides[dim];
    T v = src[so];
    bool first = !includeSelf && count[off] == 0;
    if (!count.empty())
      ++count[off];
    if (reduce == 0 || first)
      out[off] = reduce == 1 && alpha != 1 ? T(double(v) * alpha) : v;
    else if (reduce == 1)
      out[off] = alpha == 1 ? T(out[off] + v) : T(out[off] + double(v) * alpha);
    else if (reduce == 2)
      out[off] = T(out[off] * v);
    else if (reduce == 3)
      out[off] = T(out[off] + v);
    else if (reduce == 4)
      out[off] = v > out[off] || v != v ? v : out[off];
    else
      out[off] = v < out[off] || v != v ? v : out[off];
  }
  if (reduce == 3)
    for (int64_t o = 0; o < outNumel; ++o) {
      int64_t k = count[o] + (includeSelf ? 1 : 0);
      if (count[o] == 0 || k == 0)
        continue;
      if constexpr (std::is_integral_v<T>) {
        int64_t q = int64_t(out[o]) / k; // floor division, as ATen's
        out[o] = T(q * k > int64_t(out[o]) ? q - 1 : q);
      } else {
        out[o] = T(double(out[o]) / double(k));
      }
    }
  return 0;
}

// Sorts each row along the middle dim of an (outer, n, inner) tensor into
// values and indices (either may be null), keeping the first k (topk; -1:
// all). NaN sorts as the largest value, as ATen's. `stable` keeps equal
// values in their order (std::stable_sort); otherwise std::sort, as ATen's CPU
// kernel, with its comparison, so that equal values come out in its order.
// k > n fails the call (code 3).
template <class T>
inline int sort_rows(T *values, int64_t *indices, const T *in, int64_t outer,
                     int64_t n, int64_t inner, int64_t k, bool descending,
                     bool stable) {
  if (k < 0)
    k = n;
  if (k > n)
    return 3;
#pragma omp parallel for collapse(2) if (outer * inner * n > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *row = in + o * n * inner + i;
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j)
        order[j] = j;
      auto isNan = [](T v) { return v != v; };
      auto before = [&](int64_t a, int64_t b) {
        T x = row[a * inner], y = row[b * inner];
        return descending ? (isNan(x) && !isNan(y)) || x > y
                          : (!isNan(x) && isNan(y)) || x < y;
      };
      if (stable)
        std::stable_sort(order.begin(), order.end(), before);
      else
        std::sort(order.begin(), order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = o * k * inner + j * inner + i;
        if (values)
          values[at] = row[order[j] * inner];
        if (indices)
          indices[at] = order[j];
      }
    }
  return 0;
}

} // namespace dynoc_k
