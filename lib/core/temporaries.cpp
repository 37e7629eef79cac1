// Temporaries removed on fatal signals.
#include "core/temporaries.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>

namespace halo {

namespace {

// A fixed table, so that the handler reads it without allocating or locking: a slot is
// claimed (busy), its path copied, then published (ready); the handler reads ready slots only.
struct Slot {
  std::atomic<bool> busy{false};
  std::atomic<bool> ready{false};
  char path[PATH_MAX];
};
constexpr int kSlots = 256;
Slot g_slots[kSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

extern "C" void on_fatal_signal(int signal) {
  remove_temporaries_and_die(signal);
}

}  // namespace

void remove_temporaries_and_die(int signal) {
  // Files first, then the folders they emptied (unlink refuses a folder).
  for (int i = 0; i < kSlots; ++i)
    if (g_slots[i].ready.load(std::memory_order_acquire)) ::unlink(g_slots[i].path);
  for (int i = 0; i < kSlots; ++i)
    if (g_slots[i].ready.load(std::memory_order_acquire)) ::rmdir(g_slots[i].path);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);  // not reached: the default action of these signals ends the process
}

void install_temporary_cleanup() {
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals) sigaddset(&action.sa_mask, signal);
  for (int signal : kSignals) {
    struct sigaction old {};
    ::sigaction(signal, nullptr, &old);
    // A signal the caller's shell ignores (nohup's SIGHUP) stays ignored.
    if (old.sa_handler == SIG_IGN) continue;
    ::sigaction(signal, &action, nullptr);
  }
}

TemporaryPath::TemporaryPath(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].busy.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].ready.store(true, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TemporaryPath::~TemporaryPath() {
  if (slot_ < 0) return;
  g_slots[slot_].ready.store(false, std::memory_order_release);
  g_slots[slot_].busy.store(false, std::memory_order_release);
}

}  // namespace halo
