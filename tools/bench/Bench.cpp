//===- Bench.cpp - dynoc bench / dynrt-bench: time a model .so ------------===//
//
// As onnxruntime_perf_test and iree-benchmark-module do: random inputs shaped
// from the manifest (dynamic dims from --shape), warm-up runs, then timed
// runs of dynrt_context_run_into on one context per thread; latency
// percentiles, throughput and memory. A device model's inputs and outputs
// live on the device and each run is waited for. It links libdynrt only (no
// MLIR, no fmt), so that dynrt-bench runs on a serving machine.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "dynrt/dynrt.hpp"

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <thread>

namespace dynoc::bench {
namespace {
using Clock = std::chrono::steady_clock;

/// printf into a std::string.
std::string format(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *f, ...) {
  va_list a, b;
  va_start(a, f);
  va_copy(b, a);
  int n = std::vsnprintf(nullptr, 0, f, a);
  va_end(a);
  std::string out(n > 0 ? size_t(n) : 0, '\0');
  std::vsnprintf(out.data(), out.size() + 1, f, b);
  va_end(b);
  return out;
}

/// "<prog>: error: <message>" on stderr; the exit code of a failure.
int fail(const std::string &prog, const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), message.c_str());
  return 1;
}
// DLPack 0.8 added kDLBool (6); Debian ships an older header.
constexpr uint8_t kDLBoolCode = 6;

struct InputSpec {
  std::string name, dtype;
  std::vector<int64_t> shape;
};

/// DLPack's type of a manifest dtype ("float32"), or false.
bool dlType(const std::string &dtype, DLDataType &out) {
  static const std::map<std::string, DLDataType> types = {
      {"float32", {kDLFloat, 32, 1}}, {"float64", {kDLFloat, 64, 1}},
      {"float16", {kDLFloat, 16, 1}}, {"bfloat16", {kDLBfloat, 16, 1}},
      {"int64", {kDLInt, 64, 1}},     {"int32", {kDLInt, 32, 1}},
      {"int16", {kDLInt, 16, 1}},     {"int8", {kDLInt, 8, 1}},
      {"uint8", {kDLUInt, 8, 1}},     {"bool", {kDLBoolCode, 8, 1}}};
  auto it = types.find(dtype);
  if (it == types.end())
    return false;
  out = it->second;
  return true;
}

/// "2x3x4" as dims, or false.
bool parseDims(const std::string &text, std::vector<int64_t> &dims) {
  dims.clear();
  size_t at = 0;
  while (at <= text.size()) {
    size_t x = text.find('x', at);
    std::string part = text.substr(at, x == std::string::npos ? x : x - at);
    if (part.empty() || part.size() > 12 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    dims.push_back(std::stoll(part));
    if (x == std::string::npos)
      return true;
    at = x + 1;
  }
  return false;
}

/// The inputs of the model's first graph with every dim fixed: the
/// manifest's, and --shape's where the manifest has -1.
bool inputSpecs(const nlohmann::json &manifest, const Options &o,
                std::vector<InputSpec> &out, std::string &error) {
  const auto &graph = manifest.at("graphs").at(0);
  for (const auto &in : graph.at("inputs"))
    if (in.at("kind") == "user")
      out.push_back({in.at("name").get<std::string>(),
                     in.at("dtype").get<std::string>(),
                     in.at("shape").get<std::vector<int64_t>>()});
  std::vector<bool> given(out.size(), false);
  for (const std::string &s : o.shapes) {
    size_t eq = s.find('=');
    std::vector<int64_t> dims;
    if (eq == std::string::npos || !parseDims(s.substr(eq + 1), dims)) {
      error = "--shape '" + s + "' is not NAME=DIMxDIM... (e.g. x=8x3x224x224)";
      return false;
    }
    std::string key = s.substr(0, eq);
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const InputSpec &i) { return i.name == key; });
    if (it == out.end() && !key.empty() &&
        key.find_first_not_of("0123456789") == std::string::npos &&
        std::stoul(key) < out.size())
      it = out.begin() + std::stoul(key);
    if (it == out.end()) {
      std::string names;
      for (const auto &i : out)
        names += (names.empty() ? "" : ", ") + i.name;
      error = "--shape '" + s + "': the model has no input '" + key +
              "' (its inputs: " + names + ")";
      return false;
    }
    if (dims.size() != it->shape.size()) {
      error = format("--shape '%s': input '%s' has rank %zu", s.c_str(),
                     it->name.c_str(), it->shape.size());
      return false;
    }
    for (size_t d = 0; d < dims.size(); ++d)
      if (it->shape[d] >= 0 && it->shape[d] != dims[d]) {
        error = format("--shape '%s': dim %zu of input '%s' is %lld in every "
                       "graph of the model",
                       s.c_str(), d, it->name.c_str(), (long long)it->shape[d]);
        return false;
      }
    it->shape = dims;
    given[it - out.begin()] = true;
  }
  for (const auto &i : out)
    for (size_t d = 0; d < i.shape.size(); ++d)
      if (i.shape[d] < 0) {
        error = format("input '%s' has a dynamic dim %zu: give its shape "
                       "with --shape %s=...",
                       i.name.c_str(), d, i.name.c_str());
        return false;
      }
  return true;
}

/// Random bytes for `spec`: floats uniform in [-1, 1), integers in
/// [0, intHigh), bools fair.
std::vector<uint8_t> randomData(const InputSpec &spec, const DLDataType &t,
                                int64_t intHigh, std::mt19937_64 &rng) {
  size_t n = 1;
  for (int64_t d : spec.shape)
    n *= size_t(d);
  size_t item = t.bits / 8;
  std::vector<uint8_t> bytes(n * item);
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  std::uniform_int_distribution<int64_t> integer(
      0, std::max<int64_t>(intHigh, 1) - 1);
  for (size_t i = 0; i < n; ++i) {
    uint8_t *at = bytes.data() + i * item;
    if (t.code == kDLFloat && t.bits == 32) {
      float v = real(rng);
      std::memcpy(at, &v, 4);
    } else if (t.code == kDLFloat && t.bits == 64) {
      double v = real(rng);
      std::memcpy(at, &v, 8);
    } else if (t.code == kDLBfloat || (t.code == kDLFloat && t.bits == 16)) {
      // bf16: the high half of the f32; f16: sign, a small exponent, mantissa.
      float v = real(rng);
      uint32_t b;
      std::memcpy(&b, &v, 4);
      uint16_t h =
          t.code == kDLBfloat
              ? uint16_t(b >> 16)
              : uint16_t(((b >> 16) & 0x8000) | 0x3800 | ((b >> 13) & 0x3ff));
      std::memcpy(at, &h, 2);
    } else if (t.code == kDLBoolCode) {
      *at = uint8_t(integer(rng) & 1);
    } else {
      int64_t v = integer(rng);
      std::memcpy(at, &v, item); // little-endian: the low bytes
    }
  }
  return bytes;
}

double percentile(const std::vector<double> &sorted, double p) {
  if (sorted.empty())
    return 0;
  size_t k = size_t(p / 100.0 * double(sorted.size() - 1) + 0.5);
  return sorted[std::min(k, sorted.size() - 1)];
}

long peakRssKiB() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

std::string bytesText(double b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3)
    b /= 1024, ++u;
  return u ? format("%.1f %s", b, units[u]) : format("%.0f B", b);
}

/// The runs of one thread: its own context, inputs shared.
struct Worker {
  std::vector<double> latenciesMs;
  std::string error;
};

} // namespace

int run(const Options &o, const std::string &prog) {
  if (o.threads < 1 || o.warmup < 0 || o.iterations < 0 || o.seconds < 0)
    return fail(prog,
                "--threads must be at least 1; --warmup, --iterations and "
                "--time not negative");
  long rssBefore = peakRssKiB();
  if (!o.profilePath.empty())
    if (dynrt_status_t *s = dynrt_profile_start(o.profilePath.c_str()))
      return fail(prog, dynrt::Error(s).what());
  try {
    dynrt::Model model(o.model);
    long rssLoaded = peakRssKiB();
    auto manifest = nlohmann::json::parse(model.manifest());
    std::vector<InputSpec> specs;
    std::string error;
    if (!inputSpecs(manifest, o, specs, error))
      return fail(prog, error);
    DLDevice device = dynrt_model_device(model.get());
    bool onDevice = device.device_type != kDLCPU;

    // The inputs: random host data, copied to the device for device models.
    std::mt19937_64 rng(o.seed);
    std::vector<dynrt::Tensor> inputs;
    std::vector<const DLTensor *> inputPtrs;
    for (const InputSpec &spec : specs) {
      DLDataType t;
      if (!dlType(spec.dtype, t))
        return fail(prog, "input '" + spec.name + "' has dtype '" + spec.dtype +
                              "', which dynoc bench cannot make");
      std::vector<uint8_t> data = randomData(spec, t, o.intHigh, rng);
      DLManagedTensor *raw = nullptr;
      dynrt::check(dynrt_model_alloc_tensor(
          model.get(), t, int32_t(spec.shape.size()), spec.shape.data(), &raw));
      inputs.emplace_back(raw, [](DLManagedTensor *p) { p->deleter(p); });
      DLTensor host{data.data(),
                    {kDLCPU, 0},
                    int32_t(spec.shape.size()),
                    t,
                    const_cast<int64_t *>(spec.shape.data()),
                    nullptr,
                    0};
      dynrt::check(
          dynrt_model_copy_tensor(model.get(), &host, &raw->dl_tensor));
      inputPtrs.push_back(&raw->dl_tensor);
    }

    std::string graphName = manifest["graphs"][0].value("name", "?");
    std::string inputText;
    for (const InputSpec &s : specs) {
      std::string dims;
      for (int64_t d : s.shape)
        dims += (dims.empty() ? "" : ",") + std::to_string(d);
      inputText += format("%s%s %s[%s]", inputText.empty() ? "" : ", ",
                          s.name.c_str(), s.dtype.c_str(), dims.c_str());
    }
    std::fprintf(stderr, "[%s] %s (%s), inputs %s\n", prog.c_str(),
                 o.model.c_str(),
                 onDevice ? format("cuda:%d", device.device_id).c_str() : "cpu",
                 inputText.c_str());

    size_t numOutputs = model.numOutputs();
    std::vector<Worker> workers(o.threads);
    std::atomic<bool> stop{false};
    std::atomic<long> started{0};
    std::atomic<bool> go{false};
    Clock::time_point t0, t1;
    auto work = [&](Worker &w) {
      try {
        dynrt::Context ctx(model, device);
        // Outputs allocated once, as a serving loop would (run_into).
        std::vector<int64_t *> shapePtrs;
        std::vector<std::vector<int64_t>> shapes(numOutputs);
        for (size_t i = 0; i < numOutputs; ++i) {
          shapes[i].resize(
              std::max<int32_t>(dynrt_model_output_ndim(model.get(), i), 1));
          shapePtrs.push_back(shapes[i].data());
        }
        dynrt::check(dynrt_context_output_shapes(ctx.get(), inputPtrs.data(),
                                                 inputPtrs.size(),
                                                 shapePtrs.data(), numOutputs));
        std::vector<dynrt::Tensor> outs;
        std::vector<const DLTensor *> outPtrs;
        for (size_t i = 0; i < numOutputs; ++i) {
          std::string dtype =
              manifest["graphs"][0]["outputs"][i].value("dtype", "float32");
          DLDataType t;
          if (!dlType(dtype, t))
            throw std::runtime_error("output " + std::to_string(i) +
                                     " has dtype '" + dtype + "'");
          DLManagedTensor *raw = nullptr;
          dynrt::check(dynrt_model_alloc_tensor(
              model.get(), t, dynrt_model_output_ndim(model.get(), i),
              shapes[i].data(), &raw));
          outs.emplace_back(raw, [](DLManagedTensor *p) { p->deleter(p); });
          outPtrs.push_back(&raw->dl_tensor);
        }
        auto once = [&] {
          ctx.runInto(inputPtrs, outPtrs);
          dynrt::check(dynrt_context_synchronize(ctx.get()));
        };
        for (int i = 0; i < o.warmup; ++i)
          once();
        // Every thread starts timing together, once all warmed up.
        ++started;
        while (!go.load())
          std::this_thread::yield();
        for (long i = 0; !stop.load(); ++i) {
          if (o.iterations && i >= o.iterations)
            break;
          Clock::time_point a = Clock::now();
          once();
          w.latenciesMs.push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - a)
                  .count());
          if (!o.iterations &&
              std::chrono::duration<double>(Clock::now() - t0).count() >=
                  o.seconds)
            break;
        }
      } catch (const std::exception &e) {
        w.error = e.what();
        stop = true;
        ++started;
      }
    };
    std::vector<std::thread> pool;
    for (auto &w : workers)
      pool.emplace_back(work, std::ref(w));
    while (started.load() < o.threads)
      std::this_thread::yield();
    t0 = Clock::now();
    go = true;
    for (auto &t : pool)
      t.join();
    t1 = Clock::now();
    for (const Worker &w : workers)
      if (!w.error.empty())
        return fail(prog, w.error);

    std::vector<double> all;
    for (const Worker &w : workers)
      all.insert(all.end(), w.latenciesMs.begin(), w.latenciesMs.end());
    std::sort(all.begin(), all.end());
    double wall = std::chrono::duration<double>(t1 - t0).count();
    double mean = 0;
    for (double v : all)
      mean += v / double(all.size());
    double runsPerSec = wall > 0 ? double(all.size()) / wall : 0;
    int64_t batch =
        specs.empty() || specs[0].shape.empty() ? 1 : specs[0].shape[0];
    long rssPeak = peakRssKiB();
    int64_t weightBytes = 0;
    for (const auto &in : manifest["graphs"][0]["inputs"])
      if (in["kind"] != "user" && in["kind"] != "prepared") {
        DLDataType t;
        int64_t n = dlType(in.value("dtype", ""), t) ? t.bits / 8 : 4;
        for (int64_t d : in["shape"].get<std::vector<int64_t>>())
          n *= std::max<int64_t>(d, 1);
        weightBytes += n;
      }
    int64_t workspace = manifest["graphs"][0].value("workspace_bytes", -1);

    std::printf("%s: %s (graph '%s', %s)\n", prog.c_str(), o.model.c_str(),
                graphName.c_str(), onDevice ? "cuda" : "cpu");
    std::printf("  inputs      %s\n", inputText.c_str());
    std::printf("  runs        %zu in %.2f s on %d thread(s), after %d "
                "warm-up run(s) each\n",
                all.size(), wall, o.threads, o.warmup);
    std::printf("  latency ms  min %.4f  p50 %.4f  p90 %.4f  p99 %.4f  "
                "max %.4f  mean %.4f\n",
                all.empty() ? 0 : all.front(), percentile(all, 50),
                percentile(all, 90), percentile(all, 99),
                all.empty() ? 0 : all.back(), mean);
    std::printf("  throughput  %.1f runs/s (%.1f samples/s at batch %lld)\n",
                runsPerSec, runsPerSec * double(batch), (long long)batch);
    std::printf(
        "  memory      peak RSS %s (%s more than before the model loaded, %s "
        "after load); weights %s, workspace %s\n",
        bytesText(double(rssPeak) * 1024).c_str(),
        bytesText(double(rssPeak - rssBefore) * 1024).c_str(),
        bytesText(double(rssLoaded - rssBefore) * 1024).c_str(),
        bytesText(double(weightBytes)).c_str(),
        workspace >= 0 ? (bytesText(double(workspace)) + " per context").c_str()
                       : "dynamic");
    if (onDevice)
      std::printf("  note        device memory is not measured: weights and "
                  "workspace above are what the model allocates there\n");
    std::fflush(stdout);
    if (!o.jsonPath.empty()) {
      nlohmann::json j = {
          {"model", o.model},
          {"device", onDevice ? "cuda" : "cpu"},
          {"graph", graphName},
          {"threads", o.threads},
          {"warmup", o.warmup},
          {"runs", all.size()},
          {"seconds", wall},
          {"latency_ms",
           {{"min", all.empty() ? 0 : all.front()},
            {"p50", percentile(all, 50)},
            {"p90", percentile(all, 90)},
            {"p99", percentile(all, 99)},
            {"max", all.empty() ? 0 : all.back()},
            {"mean", mean}}},
          {"runs_per_second", runsPerSec},
          {"batch", batch},
          {"samples_per_second", runsPerSec * double(batch)},
          {"peak_rss_bytes", int64_t(rssPeak) * 1024},
          {"model_rss_bytes", int64_t(rssPeak - rssBefore) * 1024},
          {"weight_bytes", weightBytes},
          {"workspace_bytes", workspace}};
      std::ofstream f(o.jsonPath);
      f << j.dump(2) << "\n";
      if (!f)
        return fail(prog, "cannot write '" + o.jsonPath + "'");
    }
  } catch (const dynrt::Error &e) {
    if (!o.profilePath.empty())
      if (dynrt_status_t *s = dynrt_profile_stop())
        dynrt_status_free(s);
    return fail(prog, e.what());
  }
  if (!o.profilePath.empty()) {
    if (dynrt_status_t *s = dynrt_profile_stop())
      return fail(prog, dynrt::Error(s).what());
    std::fprintf(stderr, "[%s] wrote the profile %s\n", prog.c_str(),
                 o.profilePath.c_str());
  }
  return 0;
}
void addOptions(CLI::App &cmd, Options &o) {
  cmd.add_option("MODEL", o.model, "model .so built by 'dynoc build'")
      ->required();
  cmd.add_option("-s,--shape", o.shapes,
                 "NAME=DxDx... (or INDEX=...): an input's shape, needed where "
                 "the manifest's dims are dynamic (repeat per input)");
  cmd.add_option("--warmup", o.warmup, "untimed runs per thread first")
      ->capture_default_str();
  cmd.add_option("-n,--iterations", o.iterations,
                 "timed runs per thread (0: run for --time)")
      ->capture_default_str();
  cmd.add_option("-t,--time", o.seconds,
                 "seconds to run for when --iterations is 0")
      ->capture_default_str();
  cmd.add_option("--threads", o.threads,
                 "threads running the model at once, one context each")
      ->capture_default_str();
  cmd.add_option("--int-high", o.intHigh,
                 "integer inputs are drawn from [0, N) (token ids, indices)")
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "random seed of the inputs")
      ->capture_default_str();
  cmd.add_option("--json", o.jsonPath, "also write the figures as JSON here");
  cmd.add_option("--profile", o.profilePath,
                 "record a Chrome trace / Perfetto file of the runs (as "
                 "DYNOC_PROFILE)");
}

} // namespace dynoc::bench
