// A fixed pool of worker threads for data-parallel kernels.
//
// One global pool sized to the machine's cores (INGOT_NUM_THREADS overrides). The
// calling thread takes part in the work, so a pool of N threads starts N - 1 workers.
// Work submitted from inside a task runs inline on the calling thread (no nesting, no
// deadlock). Exceptions thrown by a task are rethrown on the caller after all tasks end.
// Idle workers spin briefly (kSpinMicros) before sleeping, and the caller spins before
// waiting for stragglers, so back-to-back kernels (a decode step runs hundreds) do not
// pay a futex wake-up each (~50 us on a loaded 2-core machine).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ingot {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return int(workers_.size()) + 1; }

  // Calls task(i) for every i in [0, num_tasks), spread over the pool; returns when all
  // calls have finished.
  void run(int64_t num_tasks, const std::function<void(int64_t)>& task);

  // The process-wide pool.
  static ThreadPool& global();

 private:
  void worker_loop();
  void drain(uint64_t generation);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // State of the current job, guarded by mutex_ except the atomics' fast paths.
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t num_tasks_ = 0;
  int64_t next_task_ = 0;
  std::atomic<int64_t> finished_tasks_{0};
  std::atomic<uint64_t> generation_{0};  // written under mutex_, read by spinners
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
  std::mutex run_mutex_;  // one job at a time
};

// Threads of the global pool.
int num_threads();
// True while running inside a pool task (nested parallel regions run inline).
bool in_parallel_region();

// Splits [begin, end) into at most num_threads() contiguous chunks of at least `grain`
// elements and calls fn(chunk_begin, chunk_end) for each, in parallel.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int64_t chunks = std::min<int64_t>(num_threads(), max_chunks);
  if (chunks <= 1 || in_parallel_region()) {
    fn(begin, end);
    return;
  }
  const int64_t step = (n + chunks - 1) / chunks;
  ThreadPool::global().run(chunks, [&](int64_t c) {
    const int64_t b = begin + c * step;
    const int64_t e = std::min(end, b + step);
    if (b < e) fn(b, e);
  });
}

}  // namespace ingot
