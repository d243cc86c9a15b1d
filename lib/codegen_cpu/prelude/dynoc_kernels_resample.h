// dynoc_kernels_resample.h - spatial resampling over the last 1-3 dims of an
// (outer..., spatial...) tensor: gathers through per-dim index maps (reflection
// and replication padding, nearest upsampling), multilinear interpolation
// through per-dim corner tables (linear, bilinear, trilinear upsampling) and
// adaptive average pooling through per-dim windows. The emitter computes the
// tables at build time with ATen's arithmetic (lib/codegen/EmitResampling.cpp);
// the kernels only read them. Appended to dynoc_kernels.h in the embedded
// prelude (see lib/codegen_cpu/BUILD.bazel).

namespace dynoc_k {

// The spatial shape of a resampling call: `dims` (1-3) input and output sizes.
struct SpatialShape {
  int dims;
  int64_t in[3], out[3];
  int64_t inCount() const { return in[0] * in[1] * in[2]; }
  int64_t outCount() const { return out[0] * out[1] * out[2]; }
};

// Sizes padded to three dims with leading 1s (a 1-D call is [1, 1, n]).
inline SpatialShape spatialShape(int dims, const int64_t *in,
                                 const int64_t *out) {
  SpatialShape s{dims, {1, 1, 1}, {1, 1, 1}};
  for (int d = 0; d < dims; ++d) {
    s.in[3 - dims + d] = in[d];
    s.out[3 - dims + d] = out[d];
  }
  return s;
}

// Per-dim tables padded the same way (a missing leading dim reads entry 0).
template <class P> struct SpatialTables {
  const P *t[3];
  SpatialTables(int dims, const P *const *given, const P *zero) {
    for (int d = 0; d < 3; ++d)
      t[d] = d < 3 - dims ? zero : given[d - (3 - dims)];
  }
};

// out[o, a, b, c] = f(plane o of in, a, b, c) for every output position of
// each of `outer` planes, in order; planes and rows in parallel.
template <class T, class F>
inline void each_output(T *out, const T *in, int64_t outer,
                        const SpatialShape &s, int64_t work, F f) {
  const int64_t inPlane = s.inCount(), outPlane = s.outCount();
#pragma omp parallel for collapse(2) if (work > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < s.out[0]; ++a) {
      const T *plane = in + o * inPlane;
      T *dst = out + o * outPlane + a * s.out[1] * s.out[2];
      for (int64_t b = 0; b < s.out[1]; ++b)
        for (int64_t c = 0; c < s.out[2]; ++c)
          *dst++ = f(plane, a, b, c);
    }
}

// out[o, a, b, c] = in[o, map0[a], map1[b], map2[c]] for each of `outer`
// planes.
template <class T>
inline void spatial_gather(T *out, const T *in, int64_t outer, int dims,
                           const int64_t *inShape, const int64_t *outShape,
                           const int64_t *const *maps) {
  static const int64_t zero = 0;
  const SpatialShape s = spatialShape(dims, inShape, outShape);
  const SpatialTables<int64_t> m(dims, maps, &zero);
  each_output(out, in, outer, s, outer * s.outCount(),
              [&](const T *plane, int64_t a, int64_t b, int64_t c) {
                return plane[(m.t[0][a] * s.in[1] + m.t[1][b]) * s.in[2] +
                             m.t[2][c]];
              });
}

// Multilinear interpolation: along each dim, output position p reads input
// positions lo[p] and hi[p] with weights wlo[p] and whi[p] (W: ATen's
// computation type, float for float tensors), nested outermost dim first as
// ATen's CPU kernels nest them.
template <class T, class W>
inline void spatial_linear(T *out, const T *in, int64_t outer, int dims,
                           const int64_t *inShape, const int64_t *outShape,
                           const int64_t *const *lo, const int64_t *const *hi,
                           const W *const *wlo, const W *const *whi) {
  static const int64_t zero = 0;
  static const W one = W(1), none = W(0);
  const SpatialShape s = spatialShape(dims, inShape, outShape);
  const SpatialTables<int64_t> l(dims, lo, &zero), h(dims, hi, &zero);
  const SpatialTables<W> wl(dims, wlo, &one), wh(dims, whi, &none);
  each_output(
      out, in, outer, s, outer * s.outCount(),
      [&](const T *plane, int64_t a, int64_t b, int64_t c) {
        auto at = [&](int64_t i, int64_t j, int64_t k) {
          return W(plane[(i * s.in[1] + j) * s.in[2] + k]);
        };
        auto row = [&](int64_t i, int64_t j) {
          return wl.t[2][c] * at(i, j, l.t[2][c]) +
                 wh.t[2][c] * at(i, j, h.t[2][c]);
        };
        auto slab = [&](int64_t i) {
          return dims < 2 ? row(i, 0)
                          : wl.t[1][b] * row(i, l.t[1][b]) +
                                wh.t[1][b] * row(i, h.t[1][b]);
        };
        return T(dims < 3 ? slab(0)
                          : wl.t[0][a] * slab(l.t[0][a]) +
                                wh.t[0][a] * slab(h.t[0][a]));
      });
}

// Adaptive average pooling: output position p along a dim averages input
// positions [start[p], end[p]); accumulated in A (double for f64, float
// otherwise, as ATen's opmath type).
template <class T, class A>
inline void adaptive_avg_pool(T *out, const T *in, int64_t outer, int dims,
                              const int64_t *inShape, const int64_t *outShape,
                              const int64_t *const *starts,
                              const int64_t *const *ends) {
  static const int64_t zero = 0, one = 1;
  const SpatialShape s = spatialShape(dims, inShape, outShape);
  const SpatialTables<int64_t> st(dims, starts, &zero), en(dims, ends, &one);
  each_output(out, in, outer, s, outer * s.inCount(),
              [&](const T *plane, int64_t a, int64_t b, int64_t c) {
                A sum = 0;
                for (int64_t i = st.t[0][a]; i < en.t[0][a]; ++i)
                  for (int64_t j = st.t[1][b]; j < en.t[1][b]; ++j)
                    for (int64_t k = st.t[2][c]; k < en.t[2][c]; ++k)
                      sum += A(plane[(i * s.in[1] + j) * s.in[2] + k]);
                const int64_t count = (en.t[0][a] - st.t[0][a]) *
                                      (en.t[1][b] - st.t[1][b]) *
                                      (en.t[2][c] - st.t[2][c]);
                return T(sum / A(count));
              });
}

} // namespace dynoc_k
