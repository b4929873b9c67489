#pragma once
// The cluster's hardware graph as a draw.io (diagrams.net) diagram: mxGraph XML with racks and
// nodes as containers, GPUs, NICs, NVSwitch, leaf and spine switches as shapes (the Networks
// library's switch) and every link as a connector labelled with its bandwidth, so a reviewer
// can edit the diagram rather than paste a picture. Built from buildHardwareGraph, not from
// any view, so the CLI and the desktop app write the same file.

#include "moe/scenario.h"

#include <string>

namespace moe::io {

/// Above this many GPUs a node is drawn as one GPU box and one NIC box ("8 x GPU"), with links
/// aggregated per node, so the diagram stays usable in draw.io.
constexpr int kDrawioDetailedGpuLimit = 512;

/// The mxfile document (UTF-8 XML).
std::string exportDrawio(const Scenario& scenario);

} // namespace moe::io
