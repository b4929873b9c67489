#pragma once
// The one way the core and the command-line tool read and write a file. Writes: the text goes to a
// temporary file in the same directory, is flushed to disk (fsync), and only then renamed over the
// target, so a user's file is either the old one or the complete new one, never half-written,
// whatever fails (a full disk, a read-only directory, a killed process). The Qt side does the same
// with QSaveFile.

#include "moe/limits.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace moe {

/// Writes `text` to `path` atomically. A symlink is followed (the file it points at is
/// replaced); an existing file's permissions are kept, a new one gets 0644. A target that is
/// not a regular file (/dev/stdout, a FIFO) is written directly, every write checked.
/// Returns "" on success, else the reason ("cannot create a temporary file beside 'x': No space
/// left on device"); on failure `path` is untouched and no temporary file is left behind.
std::string writeFileAtomically(const std::string& path, std::string_view text);

/// Reads a whole regular file of at most `max_bytes` into `text`. Anything else (a FIFO,
/// /dev/zero, a directory, a larger file) is refused without reading it unbounded. Returns ""
/// on success, else the reason.
std::string readFileBounded(const std::string& path, std::string& text,
                            int64_t max_bytes = limits::kMaxInputFileBytes);

/// Calls `on_line(line_number, line)` (1-based, without the '\n') for every line of a regular
/// file, read block by block, so a log of any length streams through bounded memory; only a
/// single line longer than limits::kMaxInputFileBytes is refused. A FIFO or a directory is
/// refused as by readFileBounded. Returns "" or the reason.
std::string readFileLines(const std::string& path,
                          const std::function<void(int, std::string_view)>& on_line);

} // namespace moe
