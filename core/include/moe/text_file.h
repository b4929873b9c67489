#pragma once
// Whole-file text I/O shared by every reader and writer: a user's file is never half-written
// (temporary file beside it, flushed, then renamed over it) and a read reports why it failed.

#include <string>

namespace moe {

/// Reads a whole file into `text`; returns "" on success, else the reason (strerror text).
std::string readTextFile(const std::string& path, std::string& text);

/// Writes `text` to a temporary file beside `path` and renames it over `path` (a symlink's
/// target is replaced, not the link; an existing file keeps its permissions). Returns "" on
/// success, else the reason; on failure `path` is untouched and no temporary file is left.
std::string writeTextFileAtomically(const std::string& path, const std::string& text);

} // namespace moe
