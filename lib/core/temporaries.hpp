// Files and folders halo makes for itself (an output's temporary before its rename, the spool
// of standard input or output) are removed however the process ends: by their owners'
// destructors on a return or an error, and by the handler installed here on SIGINT, SIGTERM,
// SIGHUP, SIGQUIT and SIGPIPE, which removes what is registered and then dies of the same
// signal, so the shell still sees 128+N (141 for a reader that went away, as `head` expects).
// Only SIGKILL leaves them; the next run in that folder sweeps those (core/atomic_file.cpp).
#pragma once

#include <string>

namespace halo {

// Installs the handler for the signals above (main calls it once, first thing).
void install_temporary_cleanup();

// Removes every registered path, then ends the process by `signal` with its default action.
// Async-signal-safe: a handler that catches a signal for its own reasons (a batch's first
// SIGINT) calls it when it decides to die after all.
[[noreturn]] void remove_temporaries_and_die(int signal);

// A path removed on a fatal signal while this object lives (a file is unlinked, a folder
// rmdir'ed once its registered files are gone). Removing it in the normal course
// stays the owner's job. Past 256 live registrations a path goes unregistered and is left to
// the next run's sweep.
class TemporaryPath {
 public:
  explicit TemporaryPath(const std::string& path);
  ~TemporaryPath();
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace halo
