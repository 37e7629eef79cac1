// What `halo run` is given on its command line, turned into the list of files a batch works on:
// plain files, folders (optionally recursive), shell globs and frame sequences
// (shot.####.exr, shot.%04d.exr, with or without --frames), then the --shard subset.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace halo {

struct InputFile {
  std::string path;      // as found: the argument itself, or joined under the argument's folder
  std::string channels;  // "[R,G,B]" channel selection carried over from the argument, or empty
  std::string root;      // the folder argument it was found under; empty for files and patterns
  std::string frame;     // the frame number's digits as written in the name; empty if none
};

struct InputOptions {
  bool recursive = false;  // descend into subfolders of folder arguments
  std::string frames;      // --frames "1-100", "1-100x5", "1,4,9-12": frames of sequence patterns
};

struct InputList {
  std::vector<InputFile> files;
  // Exactly one argument naming one existing-or-not plain file: the run keeps the single-file
  // behaviour (its error's own exit code) instead of the batch's "exit 2 when any file failed".
  bool single = false;
};

// Expands every argument in order; a name reached twice (a.png and ./a.png, a file of a folder
// also matched by a glob) is kept once, while names that are links to one file (a held frame,
// f0002.exr -> f0001.exr) are each kept: each has its own output. Throws Error(Usage) for
// a malformed --frames or a folder argument without --recursive that holds only folders, and
// Error(NoInput) for a glob, folder or sequence that matches nothing. Missing plain files are
// kept: the batch reports them per file.
InputList expand_inputs(const std::vector<std::string>& arguments, const InputOptions& options);

// Whether `path` names a frame sequence (shot.####.exr, shot.%04d.exr) rather than a file.
bool is_sequence_pattern(const std::string& path);

// One text per file however it is named (./a.png, a.png, a link to it): the weakly canonical
// path, or the lexically normal one when that cannot be had. Outputs written twice and outputs
// over inputs are found by it.
std::string same_file_key(const std::string& path);

// Whether two paths name one file or folder: the same name however written (./a.png), or the
// same device and inode where both exist (a link, a hard link).
bool same_file(const std::string& a, const std::string& b);

// A report or side file a command writes (--json, --junit, --summary, --csv, --plot, ...), as
// {option, path}; an empty path or standard output ("-") is none.
struct WrittenFile {
  std::string option;
  std::string path;
};
// Refuses (Usage, 64, before any work) a written file that is one of `inputs` (the same file
// however named: a link, ./a.png, by device and inode where it exists) or the same file as
// another one written: a swapped argument in a script would otherwise destroy its input, or
// one report silently replace another.
void refuse_clobbering(const std::vector<WrittenFile>& written,
                       const std::vector<std::string>& inputs);

// One text per name: its folder made canonical, its own name kept (a link stays itself).
// Inputs reached twice are found by it.
std::string same_name_key(const std::string& path);

// The formats halo reads, by lower-case extension with the dot (".png", ".exr", ...).
bool is_image_extension(const std::string& extension);

// Frame numbers of a --frames text in the order written; Error(Usage) when malformed.
std::vector<long> parse_frames(const std::string& text);

// "K/N" with 1 <= K <= N. Error(Usage) otherwise.
struct Shard {
  int index = 1;  // K, 1-based
  int count = 1;  // N
};
Shard parse_shard(const std::string& text);

// The K-th of N disjoint subsets whose union is all files: every N-th file of the expanded,
// ordered list starting at the K-th. The same arguments give the same list on every machine
// that sees the same files, so N jobs with K = 1..N cover every file exactly once.
std::vector<InputFile> take_shard(const std::vector<InputFile>& files, const Shard& shard);

}  // namespace halo
