// The records halo keeps in its cache folder (what starting each device cost, tuned launch
// shapes): hints, never trusted. A record is read as a side file (core/paths.hpp: a regular
// file of at most kMaxRecordBytes), its JSON at most kMaxRecordDepth deep; anything else is no
// record, and the reason is said under -v. Records are written through AtomicOutput, which
// replaces a link at their name instead of following it.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace halo {

// The record at `path`, or nothing when there is none or it is not one.
std::optional<nlohmann::json> read_record(const std::filesystem::path& path);

// Writes `doc` as the record at `path` (AtomicOutput: a link at the name is replaced). A FIFO,
// device or link into /dev or /proc there is never written through (a FIFO hung the run):
// CantCreate, which callers that keep records only as hints pass over.
void write_record(const std::filesystem::path& path, const nlohmann::json& doc);

// How deep the arrays and objects of JSON text nest (brackets inside strings not counted), in
// one pass: checked before parsing, since nlohmann-json's depth callback parses 20x slower
// (110 s for a 114 MB report) and its values are freed recursively.
int json_nesting(std::string_view text);

// JSON text as halo writes it into reports and records: invalid UTF-8 in strings (a file
// name's bytes) replaced by U+FFFD instead of throwing, so that one name never loses a report.
std::string json_text(const nlohmann::json& doc, int indent);

}  // namespace halo
