// The pairs `halo compare` compares: two files, two folders (every image of either matched by
// its relative path), or two frame sequences, and with -a every subimage and MIP level of each
// pair as a pair of its own, with where each pair's difference image and exposure map go.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/checked_file.hpp"
#include "core/error.hpp"
#include "io/codec.hpp"

namespace halo {

struct Pair {
  std::string a, b;            // as reports name them
  std::string read_a, read_b;  // the files read, when not a and b (standard input's spool)
  std::string diff_out;        // where its difference image goes if it fails; empty: nowhere
  std::string exposure_map;    // where HDR-FLIP's exposure map goes; empty: nowhere
  // With -a: the subimage and MIP level compared, named for reports ("subimage 1, MIP
  // level 2"); or why the files cannot be compared part by part (their counts differ, or a
  // file's parts cannot be counted) and, when not comparable, the code idiff gives that.
  ImagePart part;
  std::string part_label;
  std::optional<Error> refused;
  int idiff_incomparable = 2;
  // The files as opened and checked when their parts were counted (-a); null: opened when
  // compared. Each file is opened once and read only through that descriptor.
  std::shared_ptr<const CheckedFile> file_a, file_b;
  std::optional<long> frame;  // two sequences: the frame both files are of
};

// What pairing reads of the command line.
struct PairingOptions {
  std::string a, b;                    // files, folders or frame sequences (shot.####.exr)
  std::string frames;                  // --frames, for two sequences
  std::string diff_out, exposure_map;  // a file, or for folders a folder; empty: none
  bool recursive = false;              // folders: their subfolders too
  bool temporal = false;               // --metrics temporal, which needs two sequences
};

// Two files, two folders (a name on one side only becomes a pair with a missing file, which
// reports as not comparable), or two frame sequences (a frame b lacks likewise). Usage errors
// for both standard input, a file beside a folder, a sequence beside a file, --frames or temporal
// measures without two sequences; CantCreate for a --diff-out or --exposure-map that is one of the
// inputs. Creates the output folders.
std::vector<Pair> pairs_of(const PairingOptions& options);

// idiff's -a: every subimage and every MIP level of each pair, compared as a pair of its own.
// Files whose subimage or MIP level counts differ are one pair that is not comparable (idiff
// 2.4.7: FAILURE, and exit 3 for MIP levels); a missing file stays one pair, which reports it,
// and a file whose parts cannot be counted is refused with the reason.
std::vector<Pair> every_part(const std::vector<Pair>& pairs);

}  // namespace halo
