//===- main.cpp - a C++ serving loop over one dynoc model -----------------===//
//
//   serving MODEL.so [--threads N] [--requests R] [--batch B[,B...]]
//                    [--rate QPS]
//
// Loads the model once and serves R requests from a pool of N worker threads.
// Requests arrive at QPS per second (open loop), or all at once without
// --rate.
// Each worker owns a dynrt::Context (its workspace); all share the model.
// Request inputs are random float32 (or int64 ids) shaped from the manifest,
// with every dynamic dim set to a batch size from --batch (round-robin). Prints
// latency percentiles (queueing included, and the run alone), throughput and
// the process's peak resident memory.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

/// One request input: float32 in [-1, 1), or int64 in [0, 4) (token ids and
/// masks, small enough for any vocabulary).
struct RequestTensor {
  std::vector<int64_t> shape;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  DLTensor view() {
    bool isInt = floats.empty() && !ints.empty();
    return DLTensor{isInt ? static_cast<void *>(ints.data())
                          : static_cast<void *>(floats.data()),
                    {kDLCPU, 0},
                    (int32_t)shape.size(),
                    isInt ? DLDataType{kDLInt, 64, 1}
                          : DLDataType{kDLFloat, 32, 1},
                    shape.data(),
                    nullptr,
                    0};
  }
};

struct Request {
  std::vector<RequestTensor> inputs;
  Clock::time_point enqueued;
  double totalUs = 0, runUs = 0;
  bool failed = false;
};

/// A blocking FIFO of request indices; -1 tells a worker to stop.
class Queue {
public:
  void push(long i) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(i);
    }
    cv_.notify_one();
  }
  long pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !items_.empty(); });
    long i = items_.front();
    items_.pop_front();
    return i;
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<long> items_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t k = std::min(v.size() - 1, size_t(p / 100.0 * (v.size() - 1) + 0.5));
  return v[k];
}

std::vector<long> parseList(const std::string &s) {
  std::vector<long> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    out.push_back(std::stol(s.substr(pos, comma - pos)));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

/// This process's peak resident set (VmHWM, Linux), or 0 where unknown.
/// (getrusage's ru_maxrss would include the parent's memory before exec.)
double peakRssMiB() {
  std::FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return 0;
  char line[256];
  double kib = 0;
  while (std::fgets(line, sizeof(line), f))
    if (std::sscanf(line, "VmHWM: %lf kB", &kib) == 1)
      break;
  std::fclose(f);
  return kib / 1024;
}

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s MODEL.so [--threads N] [--requests R] "
               "[--batch B[,B...]] [--rate QPS]\n",
               argv0);
  return 2;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-')
    return usage(argv[0]);
  std::string modelPath = argv[1];
  long threads = 4, requests = 2000;
  double rate = 0;
  std::vector<long> batches = {1};
  try {
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if (i + 1 >= argc)
        return usage(argv[0]);
      if (a == "--threads")
        threads = std::stol(argv[++i]);
      else if (a == "--requests")
        requests = std::stol(argv[++i]);
      else if (a == "--batch")
        batches = parseList(argv[++i]);
      else if (a == "--rate")
        rate = std::stod(argv[++i]);
      else
        return usage(argv[0]);
    }
  } catch (const std::exception &) {
    return usage(argv[0]);
  }
  if (threads < 1 || requests < 1 || batches.empty() || rate < 0)
    return usage(argv[0]);

  try {
    dynrt::Model model(modelPath);
    auto manifest = nlohmann::json::parse(model.manifest());
    const auto &graph = manifest["graphs"][0];

    // Requests, made before serving starts.
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<Request> reqs(requests);
    for (long r = 0; r < requests; ++r) {
      long batch = batches[r % batches.size()];
      for (const auto &in : graph["inputs"]) {
        if (in["kind"] != "user")
          continue;
        if (in["dtype"] != "float32" && in["dtype"] != "int64")
          throw std::runtime_error(
              "input '" + in["name"].get<std::string>() + "' is " +
              in["dtype"].get<std::string>() +
              "; this example makes float32 and int64 requests only");
        RequestTensor t;
        size_t n = 1;
        for (int64_t d : in["shape"]) {
          t.shape.push_back(d < 0 ? batch : d);
          n *= static_cast<size_t>(t.shape.back());
        }
        if (in["dtype"] == "int64") {
          std::uniform_int_distribution<int64_t> ids(0, 3);
          for (size_t k = 0; k < n; ++k)
            t.ints.push_back(ids(rng));
        } else {
          for (size_t k = 0; k < n; ++k)
            t.floats.push_back(dist(rng));
        }
        reqs[r].inputs.push_back(std::move(t));
      }
    }

    Queue queue;
    auto worker = [&] {
      dynrt::Context context(model);
      for (long i; (i = queue.pop()) >= 0;) {
        Request &req = reqs[i];
        std::vector<DLTensor> views;
        for (auto &t : req.inputs)
          views.push_back(t.view());
        std::vector<const DLTensor *> ptrs;
        for (auto &v : views)
          ptrs.push_back(&v);
        auto start = Clock::now();
        try {
          auto outputs = context.run(ptrs);
        } catch (const dynrt::Error &e) {
          req.failed = true;
          std::fprintf(stderr, "serving: request %ld failed: %s\n", i,
                       e.what());
        }
        auto end = Clock::now();
        req.runUs =
            std::chrono::duration<double, std::micro>(end - start).count();
        req.totalUs =
            std::chrono::duration<double, std::micro>(end - req.enqueued)
                .count();
      }
    };
    std::vector<std::thread> pool;
    for (long t = 0; t < threads; ++t)
      pool.emplace_back(worker);
    auto start = Clock::now();
    for (long r = 0; r < requests; ++r) {
      if (rate > 0) {
        // Latency counts from the scheduled arrival, so a late producer
        // does not hide queueing.
        reqs[r].enqueued = start + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(r / rate));
        std::this_thread::sleep_until(reqs[r].enqueued);
      } else {
        reqs[r].enqueued = Clock::now();
      }
      queue.push(r);
    }
    for (long t = 0; t < threads; ++t)
      queue.push(-1);
    for (auto &th : pool)
      th.join();
    double secs = std::chrono::duration<double>(Clock::now() - start).count();

    std::vector<double> total, run;
    long failed = 0;
    for (auto &r : reqs) {
      failed += r.failed;
      total.push_back(r.totalUs);
      run.push_back(r.runUs);
    }
    std::printf("model: %s\nthreads: %ld, requests: %ld, arrival: %s, batch "
                "sizes:",
                modelPath.c_str(), threads, requests,
                rate > 0 ? (std::to_string(long(rate)) + "/s").c_str()
                         : "all at once");
    for (long b : batches)
      std::printf(" %ld", b);
    std::printf("\nrun latency (us):     p50 %.1f  p99 %.1f\n",
                percentile(run, 50), percentile(run, 99));
    std::printf("request latency (us): p50 %.1f  p99 %.1f  (includes "
                "queueing)\n",
                percentile(total, 50), percentile(total, 99));
    std::printf("throughput: %.0f requests/s, failed: %ld\n", requests / secs,
                failed);
    if (double mib = peakRssMiB(); mib > 0)
      std::printf("peak RSS: %.1f MiB\n", mib);
    return failed ? 1 : 0;
  } catch (const dynrt::Error &e) {
    std::fprintf(stderr, "serving: error: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "serving: error: %s\n", e.what());
    return 1;
  }
}
