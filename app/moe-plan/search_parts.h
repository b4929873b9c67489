#pragma once
// The file a shard of `moe-plan search --shard I/N` writes and `search --merge` reads back: every
// structure's counts, rejection examples, closest memory miss and evaluated layouts with their
// full figures (numbers written as the shortest text that reads back to the same double), so the
// merge ranks exactly what an unsharded search would (schemas/search-part.schema.json).

#include "moe/search.h"

#include <string>

namespace moe::cli {

/// Identifies one search: the effective scenario and the options that change what the shards
/// find (pins, --max-pp, --reserve). The merge refuses parts of another search.
std::string searchFingerprint(const Scenario& s, const SearchOptions& options);

std::string searchPartJson(const Scenario& s, const SearchPart& part,
                           const std::string& fingerprint);

/// Reads a part written by searchPartJson for `input`; returns the reason on failure (bad JSON,
/// another tool version or search).
std::string readSearchPart(const std::string& text, const Scenario& input,
                           const std::string& fingerprint, SearchPart& part);

} // namespace moe::cli
