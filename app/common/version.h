#pragma once
// The version every program reports (--version, JSON documents, manual pages): the CMake
// project's.

namespace moe::cmdline {

const char* version(); ///< "0.1.0"

} // namespace moe::cmdline
