//===- GlooCommunicatorTest.cpp - libdynrt's gloo communicator ------------===//
//
// dynrt_gloo_communicator_create through the C API, with its ranks as threads
// of this process (gloo's TCP transport over 127.0.0.1, a file store in a
// fresh folder): every collective of dynrt_communicator_t against values
// computed here, for float32, bfloat16 and int64, uneven all-to-all splits,
// several collectives in flight before their waits, and the failures a
// caller sees: a rank out of range, a rendezvous whose peer never comes, a
// collective whose peer never issues it, another process group.
//
//===----------------------------------------------------------------------===//
#include "dynrt/dynrt.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

/// A fresh, empty store folder for one rendezvous.
std::string freshStore(const char *name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("dynrt-gloo-test-" + std::string(name) + "-" +
              std::to_string(
                  std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// A 1-D CPU DLTensor over `data` (the caller keeps both alive).
template <typename T>
DLTensor view(std::vector<T> &data, DLDataType type, int64_t &shape) {
  shape = int64_t(data.size());
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = type;
  t.shape = &shape;
  return t;
}

constexpr int kRanks = 3;
constexpr DLDataType kF32{kDLFloat, 32, 1}, kBf16{kDLBfloat, 16, 1},
    kI64{kDLInt, 64, 1};

/// What a rank's thread found wrong (Catch2's assertions are for the main
/// thread only): EXPECT records a failed condition with its line.
using Failures = std::vector<std::string>;
#define EXPECT(...)                                                            \
  do {                                                                         \
    if (!(__VA_ARGS__))                                                        \
      failures.push_back("line " + std::to_string(__LINE__) +                  \
                         ": " #__VA_ARGS__);                                   \
  } while (0)

/// Runs `body(rank, communicator, failures)` on `size` threads, each with a
/// communicator of one rendezvous; returns what each rank found wrong (its
/// rendezvous's error included).
std::vector<Failures> onRanks(
    int size, const char *name,
    const std::function<void(int, dynrt_communicator_t *, Failures &)> &body,
    int timeoutMs = 20000) {
  std::string store = freshStore(name);
  std::vector<Failures> errors(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      dynrt_communicator_t *c = nullptr;
      if (dynrt_status_t *s = dynrt_gloo_communicator_create(
              store.c_str(), size, r, "0", nullptr, timeoutMs, &c)) {
        errors[r].push_back(dynrt_status_message(s));
        dynrt_status_free(s);
        return;
      }
      body(r, c, errors[r]);
      dynrt_gloo_communicator_free(c);
    });
  for (std::thread &t : threads)
    t.join();
  std::filesystem::remove_all(store);
  return errors;
}

/// Issues through `issue` (which sets the work handle) and waits.
int issueAndWait(dynrt_communicator_t *c,
                 const std::function<int(void **)> &issue) {
  void *work = nullptr;
  if (int rc = issue(&work))
    return rc;
  return c->wait(c->self, work, nullptr);
}

uint16_t bf16(float f) { // exact for the small integers used here
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return uint16_t(bits >> 16);
}
float fromBf16(uint16_t v) {
  uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

TEST_CASE("gloo: every collective on 3 ranks equals the values computed here") {
  auto errors = onRanks(
      kRanks, "all", [](int r, dynrt_communicator_t *c, Failures &failures) {
        int size = 0, rank = -1;
        EXPECT(c->group_size(c->self, "0", &size, &rank) == 0);
        EXPECT(size == kRanks);
        EXPECT(rank == r);
        int64_t n1, n2, n3, n4;

        // all_reduce: sum and average (f32), max (i64), sum (bf16), several in
        // flight at once, waited for in order.
        std::vector<float> sum = {float(r), float(2 * r), 1.f};
        std::vector<float> avg = {float(3 * r), 6.f};
        std::vector<int64_t> mx = {int64_t(r), int64_t(-r)};
        std::vector<uint16_t> half = {bf16(float(r + 1)), bf16(2.f)};
        DLTensor tSum = view(sum, kF32, n1), tAvg = view(avg, kF32, n2),
                 tMax = view(mx, kI64, n3), tHalf = view(half, kBf16, n4);
        void *w[4];
        EXPECT(c->all_reduce(c->self, "0", &tSum, DYNRT_REDUCE_SUM, nullptr,
                             &w[0]) == 0);
        EXPECT(c->all_reduce(c->self, "0", &tAvg, DYNRT_REDUCE_AVG, nullptr,
                             &w[1]) == 0);
        EXPECT(c->all_reduce(c->self, "0", &tMax, DYNRT_REDUCE_MAX, nullptr,
                             &w[2]) == 0);
        EXPECT(c->all_reduce(c->self, "0", &tHalf, DYNRT_REDUCE_SUM, nullptr,
                             &w[3]) == 0);
        for (void *work : w)
          EXPECT(c->wait(c->self, work, nullptr) == 0);
        EXPECT(sum == std::vector<float>{3.f, 6.f, 3.f});
        EXPECT(avg == std::vector<float>{3.f, 6.f});
        EXPECT(mx == std::vector<int64_t>{2, 0});
        EXPECT(fromBf16(half[0]) == 6.f);
        EXPECT(fromBf16(half[1]) == 6.f);

        // all_gather: the ranks' inputs in rank order.
        std::vector<float> in = {float(r), float(10 + r)}, out(2 * kRanks);
        DLTensor tIn = view(in, kF32, n1), tOut = view(out, kF32, n2);
        EXPECT(issueAndWait(c, [&](void **work) {
                 return c->all_gather(c->self, "0", &tIn, &tOut, nullptr, work);
               }) == 0);
        EXPECT(out == std::vector<float>{0, 10, 1, 11, 2, 12});

        // reduce_scatter: this rank's slice of the sum.
        std::vector<float> whole = {1.f * r, 2.f * r, 3.f * r}, mine(1);
        DLTensor tWhole = view(whole, kF32, n1), tMine = view(mine, kF32, n2);
        EXPECT(issueAndWait(c, [&](void **work) {
                 return c->reduce_scatter(c->self, "0", &tWhole, &tMine,
                                          DYNRT_REDUCE_SUM, nullptr, work);
               }) == 0);
        EXPECT(mine[0] == float(3 * (r + 1))); // (0+1+2) * (r+1)

        // broadcast from the last rank.
        std::vector<float> b = {float(r), float(r)};
        DLTensor tB = view(b, kF32, n1);
        EXPECT(issueAndWait(c, [&](void **work) {
                 return c->broadcast(c->self, "0", &tB, kRanks - 1, nullptr,
                                     work);
               }) == 0);
        EXPECT(b == std::vector<float>{2.f, 2.f});

        // all_to_all with uneven splits: rank r sends j + 1 elements to rank j
        // (values 100 r + j), so it receives r + 1 from each rank.
        std::vector<int64_t> inCounts, outCounts;
        std::vector<float> send, recv;
        for (int j = 0; j < kRanks; ++j) {
          inCounts.push_back(j + 1);
          outCounts.push_back(r + 1);
          for (int k = 0; k <= j; ++k)
            send.push_back(float(100 * r + j));
        }
        recv.resize(size_t(kRanks * (r + 1)));
        DLTensor tSend = view(send, kF32, n1), tRecv = view(recv, kF32, n2);
        EXPECT(issueAndWait(c, [&](void **work) {
                 return c->all_to_all(c->self, "0", &tSend, &tRecv,
                                      inCounts.data(), outCounts.data(),
                                      nullptr, work);
               }) == 0);
        std::vector<float> want;
        for (int j = 0; j < kRanks; ++j)
          for (int k = 0; k <= r; ++k)
            want.push_back(float(100 * j + r));
        EXPECT(recv == want);

        // Another process group: refused, naming both.
        void *work = nullptr;
        EXPECT(c->all_reduce(c->self, "7", &tSum, DYNRT_REDUCE_SUM, nullptr,
                             &work) != 0);
        EXPECT(std::string(c->last_error(c->self)).find("group '7'") !=
               std::string::npos);
      });
  for (size_t r = 0; r < errors.size(); ++r) {
    INFO("rank " << r);
    for (const std::string &e : errors[r])
      FAIL_CHECK(e);
  }
}

TEST_CASE("gloo: a collective whose peer never issues it fails, then every "
          "later one names it") {
  auto errors = onRanks(
      2, "stuck",
      [](int r, dynrt_communicator_t *c, Failures &failures) {
        if (r == 1) { // joins the mesh, then issues nothing
          std::this_thread::sleep_for(std::chrono::milliseconds(3000));
          return;
        }
        std::vector<float> x = {1.f};
        int64_t n;
        DLTensor t = view(x, kF32, n);
        auto start = std::chrono::steady_clock::now();
        EXPECT(issueAndWait(c, [&](void **work) {
                 return c->all_reduce(c->self, "0", &t, DYNRT_REDUCE_SUM,
                                      nullptr, work);
               }) != 0);
        EXPECT(std::chrono::steady_clock::now() - start <
               std::chrono::seconds(20));
        std::string first = c->last_error(c->self);
        EXPECT(first.find("all_reduce on rank 0") != std::string::npos);
        EXPECT(issueAndWait(c, [&](void **work) {
                 return c->broadcast(c->self, "0", &t, 0, nullptr, work);
               }) != 0);
        EXPECT(std::string(c->last_error(c->self))
                   .find("an earlier collective failed") != std::string::npos);
      },
      /*timeoutMs=*/1000);
  for (size_t r = 0; r < errors.size(); ++r) {
    INFO("rank " << r);
    for (const std::string &e : errors[r])
      FAIL_CHECK(e);
  }
}

TEST_CASE("gloo: bad arguments and a peer that never comes are statuses") {
  dynrt_communicator_t *c = nullptr;
  std::string store = freshStore("alone");
  dynrt_status_t *s = dynrt_gloo_communicator_create(store.c_str(), 2, 2, "0",
                                                     nullptr, 500, &c);
  REQUIRE(s);
  CHECK(dynrt_status_code(s) == DYNRT_INVALID_ARGUMENT);
  CHECK(std::string(dynrt_status_message(s)).find("rank 2 of 2") !=
        std::string::npos);
  dynrt_status_free(s);
  s = dynrt_gloo_communicator_create(store.c_str(), 2, 0, "0", nullptr, 500,
                                     &c);
  REQUIRE(s);
  CHECK(dynrt_status_code(s) == DYNRT_DEADLINE_EXCEEDED);
  CHECK(std::string(dynrt_status_message(s)).find(store) != std::string::npos);
  CHECK(c == nullptr);
  dynrt_status_free(s);
  std::filesystem::remove_all(store);
}
