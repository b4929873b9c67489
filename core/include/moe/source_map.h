#pragma once
// Where each field of a loaded scenario was written, so that checks after loading (validate.h)
// can point at the file's line and column.

#include <map>
#include <string>

namespace moe {

/// Where each field of a loaded scenario was written, so that later checks can point at it.
struct SourceLocation {
    int line = 0; ///< 1-based
    int column = 0;
};
struct SourceMap {
    std::string file;
    std::map<std::string, SourceLocation> fields; ///< dotted path -> location
    /// Location of `field`, or of its nearest written parent ("layout.ep" -> "layout").
    SourceLocation find(const std::string& field) const;
};

} // namespace moe
