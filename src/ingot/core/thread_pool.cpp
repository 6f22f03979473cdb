#include "ingot/core/thread_pool.h"

#include <chrono>
#include <cstdlib>
#include <string>

namespace ingot {
namespace {

thread_local bool t_in_parallel_region = false;

// How long an idle thread polls before blocking.
constexpr auto kSpin = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `done()` for up to kSpin; true when it became true.
template <typename Pred>
bool spin_until(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) return done();
  }
}

int default_num_threads() {
  if (const char* env = std::getenv("INGOT_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Marks the current thread as inside a task for the lifetime of the guard.
struct ParallelRegionGuard {
  bool previous = t_in_parallel_region;
  ParallelRegionGuard() { t_in_parallel_region = true; }
  ~ParallelRegionGuard() { t_in_parallel_region = previous; }
};

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(default_num_threads());
  return pool;
}

int num_threads() { return ThreadPool::global().num_threads(); }
bool in_parallel_region() { return t_in_parallel_region; }

// Takes tasks of job `generation` until none are left.
void ThreadPool::drain(uint64_t generation) {
  ParallelRegionGuard guard;
  std::unique_lock lock(mutex_);
  while (generation_ == generation && next_task_ < num_tasks_) {
    const int64_t i = next_task_++;
    const auto* task = task_;
    lock.unlock();
    try {
      (*task)(i);
    } catch (...) {
      std::lock_guard error_lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    lock.lock();
    if (++finished_tasks_ == num_tasks_) done_.notify_all();  // the caller may be asleep
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] { return stopping_.load() || generation_.load() != seen; });
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain(seen);
  }
}

void ThreadPool::run(int64_t num_tasks, const std::function<void(int64_t)>& task) {
  if (num_tasks <= 0) return;
  if (workers_.empty() || num_tasks == 1 || t_in_parallel_region) {
    ParallelRegionGuard guard;
    for (int64_t i = 0; i < num_tasks; ++i) task(i);
    return;
  }
  std::lock_guard run_lock(run_mutex_);
  uint64_t generation;
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    num_tasks_ = num_tasks;
    next_task_ = 0;
    finished_tasks_ = 0;
    error_ = nullptr;
    generation = ++generation_;
  }
  wake_.notify_all();
  drain(generation);
  const int64_t total = num_tasks;
  spin_until([&] { return finished_tasks_.load() == total; });
  std::exception_ptr error;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_tasks_.load() == num_tasks_; });
    error = error_;
    task_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace ingot
