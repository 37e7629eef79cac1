// Small concurrency pieces that know nothing of images: a bounded queue between two threads,
// a reorder buffer that hands out in order what workers finish in any order, the first
// failure of several threads, values computed once for every thread that asks, and a fixed
// set of worker threads (the PNG and EXR codecs' chunk encoders and decoders). The streaming
// executor (lib/pipeline/stream.cpp) is built of them.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace halo {

// A bounded queue from one thread to another. close() ends it: push() then refuses and pop()
// drains what is left, then returns nothing.
template <class T>
class Channel {
 public:
  explicit Channel(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

  bool push(T item) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    changed_.notify_all();
    return true;
  }

  // Waits until a push would not wait (false once closed): a producer that allocates what it
  // pushes asks first, so nothing waits in its hands for room.
  bool wait_for_room() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    return !closed_;
  }

  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    changed_.notify_all();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<T> items_;
  bool closed_ = false;
};

// Strips that lanes finish in any order, handed out in order. A lane more than `capacity`
// strips ahead of the next one out waits, so memory stays bounded.
template <class T>
class Reorder {
 public:
  explicit Reorder(int capacity) : capacity_(std::max(capacity, 1)) {}

  bool push(int k, T item) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || k < next_ + capacity_; });
    if (closed_) return false;
    items_.emplace(k, std::move(item));
    changed_.notify_all();
    return true;
  }

  // The next strip in order; nothing once closed (or finished) with that strip not there.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || finished_ || items_.count(next_); });
    const auto it = items_.find(next_);
    if (it == items_.end()) return std::nullopt;
    T item = std::move(it->second);
    items_.erase(it);
    ++next_;
    changed_.notify_all();
    return item;
  }

  void finish() {  // no more pushes: pop() drains what is there
    std::lock_guard lock(mutex_);
    finished_ = true;
    changed_.notify_all();
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

 private:
  const int capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, T> items_;
  int next_ = 0;
  bool closed_ = false, finished_ = false;
};

// The first failure of any thread, rethrown by the caller once all have stopped.
class FirstFailure {
 public:
  void set(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!first_) first_ = e;
  }
  void rethrow() {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

// The value under `key` in `values` (guarded by `mutex`), computed by `compute` unless a thread
// has it or is computing it; threads asking meanwhile wait for it. A failure reaches every
// waiter and leaves no entry (a later ask computes again). `computed`: whether this call did.
template <class Key, class T>
T compute_once(std::mutex& mutex, std::map<Key, std::shared_future<T>>& values, const Key& key,
               const std::function<T()>& compute, bool* computed = nullptr) {
  std::promise<T> promise;
  std::shared_future<T> future;
  bool mine = false;
  {
    std::lock_guard lock(mutex);
    auto it = values.find(key);
    if (it == values.end()) {
      it = values.emplace(key, promise.get_future().share()).first;
      mine = true;
    }
    future = it->second;
  }
  if (computed) *computed = mine;
  if (mine) {
    try {
      promise.set_value(compute());
    } catch (...) {
      {
        std::lock_guard lock(mutex);
        values.erase(key);
      }
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

// Runs tasks on a fixed set of threads; results come back through futures.
class Workers {
 public:
  explicit Workers(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Workers() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs task(0) .. task(count - 1) on the threads and waits for them all; the first failure
  // is rethrown once every task has ended (none is left running on the caller's data).
  template <class F>
  void run(std::size_t count, const F& task) {
    std::vector<std::future<void>> done;
    for (std::size_t i = 0; i < count; ++i) done.push_back(submit([&task, i] { task(i); }));
    std::exception_ptr failure;
    for (auto& f : done) try {
        f.get();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    if (failure) std::rethrow_exception(failure);
  }
  template <class F>
  std::future<void> submit(F task) {
    auto packaged = std::make_shared<std::packaged_task<void()>>(std::move(task));
    auto future = packaged->get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back([packaged] { (*packaged)(); });
    }
    ready_.notify_one();
    return future;
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace halo
