#include "moe/io/node_description.h"

#include "moe/catalog.h"
#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/scenario_io.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace moe::io {

double nvlinkGbpsPerLink(int sm) {
    // NVIDIA datasheets: V100 300 GB/s over 6 links, A100 600 GB/s over 12, H100 900 GB/s over
    // 18 (both directions together: 50 GB/s per link, 25 each way); B200 1.8 TB/s over 18
    // (100 GB/s per link, 50 each way).
    if (sm >= 100)
        return 50;
    if (sm >= 70)
        return 25;
    return 0;
}

namespace {

/// The compute capability of a catalog GPU preset, for the NVLink generation when a dump does
/// not say (nvidia-smi topo -m). 0 = no NVLink (MI300X's Infinity Fabric).
int computeCapabilityOf(const std::string& preset) {
    if (preset == "h100-sxm" || preset == "h800-sxm" || preset == "h200-sxm")
        return 90;
    if (preset == "b200" || preset == "gb200")
        return 100;
    return 0;
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
    std::string text;
    for (const std::string& item : items)
        text += (text.empty() ? "" : separator) + item;
    return text;
}

std::string plural(int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// The NIC preset for a line rate and fabric, or nullptr when the catalog has none.
const NicSpec* nicForSpeed(double speed_gbit, Fabric fabric) {
    for (const NicSpec& nic : builtinCatalog().nics) {
        const bool ethernet = nic.preset.rfind("eth", 0) == 0;
        if (std::abs(nic.speed_gbit - speed_gbit) < 1 && ethernet == (fabric == Fabric::ethernet))
            return &nic;
    }
    return nullptr;
}

} // namespace

void assignRails(NodeDescription& node, const std::vector<std::vector<PathLevel>>& distance,
                 const std::vector<std::string>& nic_names) {
    const int gpus = static_cast<int>(distance.size());
    const int nics = static_cast<int>(nic_names.size());
    std::vector<int> load(static_cast<std::size_t>(nics), 0);
    std::vector<int> rail_of(static_cast<std::size_t>(nics), -1);
    node.gpu_nic.assign(static_cast<std::size_t>(gpus), -1);
    node.rail_nics.clear();
    node.other_nics.clear();
    int unplaced = 0;
    for (int g = 0; g < gpus; ++g) {
        const std::vector<PathLevel>& row = distance[static_cast<std::size_t>(g)];
        PathLevel best = PathLevel::sys;
        for (const PathLevel level : row)
            best = std::min(best, level);
        if (best > PathLevel::c2c) {
            ++unplaced;
            continue;
        }
        int pick = -1;
        for (int n = 0; n < nics; ++n)
            if (row[static_cast<std::size_t>(n)] == best && (pick < 0 || load[n] < load[pick]))
                pick = n;
        ++load[static_cast<std::size_t>(pick)];
        if (rail_of[static_cast<std::size_t>(pick)] < 0) {
            rail_of[static_cast<std::size_t>(pick)] = static_cast<int>(node.rail_nics.size());
            node.rail_nics.push_back(nic_names[static_cast<std::size_t>(pick)]);
        }
        node.gpu_nic[static_cast<std::size_t>(g)] = rail_of[static_cast<std::size_t>(pick)];
    }
    for (int n = 0; n < nics; ++n)
        if (rail_of[static_cast<std::size_t>(n)] < 0)
            node.other_nics.push_back(nic_names[static_cast<std::size_t>(n)]);
    if (unplaced > 0 && unplaced < gpus)
        node.notes.push_back(std::to_string(unplaced) + " of " + std::to_string(gpus) +
                             " GPUs have no NIC near them; they reach the fabric through another "
                             "GPU's NIC");
    if (unplaced == gpus && nics > 0)
        node.notes.push_back("no NIC is near any GPU (every path is NODE or SYS), so the dump "
                             "cannot tell the GPUs' NICs from storage or management NICs");
    // The scenario puts GPU g on rail g x rails / gpus (consecutive GPUs share a NIC).
    const int rails = static_cast<int>(node.rail_nics.size());
    for (int g = 0; g < gpus && rails > 0 && unplaced == 0; ++g) {
        if (node.gpu_nic[static_cast<std::size_t>(g)] != g * rails / gpus) {
            node.notes.push_back("the GPUs share NICs in another pattern than the scenario's "
                                 "consecutive rails; the NIC count and sharing are what it "
                                 "models");
            break;
        }
    }
}

std::string describeNode(const NodeDescription& n) {
    std::ostringstream out;
    out << "Node from " << n.source << ": " << plural(n.gpus, "GPU", "GPUs");
    if (!n.gpu_model.empty())
        out << " (" << n.gpu_model << (n.gpu_preset.empty() ? ", not in the catalog" : "") << ")";
    else if (!n.gpu_pci_device.empty())
        out << " (PCI device " << n.gpu_pci_device << ", unknown)";
    if (n.sm > 0)
        out << ", compute capability " << n.sm / 10 << "." << n.sm % 10;
    out << "\n";
    if (n.nvlinks_per_gpu > 0)
        out << "  NVLink: " << n.nvlinks_per_gpu << " links per GPU"
            << (n.nvswitch_outside_node.value_or(false)
                    ? " to NVSwitches outside the node (rack-scale NVLink)"
                : n.nvswitch ? " through NVSwitches"
                             : " in a direct mesh")
            << "\n";
    else
        out << "  NVLink: none\n";
    if (!n.rail_nics.empty()) {
        out << "  NICs next to the GPUs (rails): " << join(n.rail_nics);
        if (n.nic_speed_gbit > 0)
            out << " at " << formatNumber(n.nic_speed_gbit) << " Gb/s";
        out << "\n  GPU -> NIC:";
        for (std::size_t g = 0; g < n.gpu_nic.size(); ++g)
            out << " " << g << "->"
                << (n.gpu_nic[g] >= 0 ? n.rail_nics[static_cast<std::size_t>(n.gpu_nic[g])] : "?");
        out << "\n";
    }
    if (!n.other_nics.empty())
        out << "  Other NICs (not next to a GPU: storage, management): " << join(n.other_nics)
            << "\n";
    for (const std::string& note : n.notes)
        out << "  Note: " << note << "\n";
    return out.str();
}

namespace {

/// The --set assignments an import makes, each with its reason in `result.changes`.
struct NodeEdits {
    NodeImport& result;
    const NodeImportOptions& options;
    std::vector<std::string> sets;

    void set(const std::string& path, const std::string& value, const std::string& why) {
        sets.push_back(path + "=" + value);
        result.changes.push_back(path + " = " + value + (why.empty() ? "" : " (" + why + ")"));
    }
    /// A field left as the base has it, and why.
    void kept(const std::string& text) { result.changes.push_back(text); }
    void error(const std::string& message) {
        Diagnostic d;
        d.file = options.file_label;
        d.message = message;
        result.diagnostics.push_back(std::move(d));
    }
};

/// The GPU: from the PCI device when the catalog has it, else the base's. Returns the preset.
std::string applyGpuModel(const NodeDescription& node, NodeEdits& edits) {
    std::string preset = edits.options.base.cluster.gpu.preset;
    if (!node.gpu_preset.empty() && node.gpu_preset != preset) {
        preset = node.gpu_preset;
        edits.set("cluster.gpu", preset,
                  node.gpu_model + ", PCI device " + node.gpu_pci_device + "; its catalog figures");
    } else if (node.gpu_preset.empty() && !node.gpu_model.empty()) {
        edits.kept("cluster.gpu stays " + preset + ": the " + node.gpu_model +
                   " is not in the catalog (set cluster.gpu_overrides.* for its figures)");
    }
    return preset;
}

/// GPUs per node and the node count (--nodes, else the base's GPU count); false on an error.
bool applyNodeCount(const NodeDescription& node, NodeEdits& edits) {
    const Scenario& base = edits.options.base;
    edits.set("cluster.gpus_per_node", std::to_string(node.gpus), "GPUs in the dump");
    const int base_gpus = base.cluster.gpuCount();
    int nodes = edits.options.nodes;
    if (nodes <= 0) {
        if (base_gpus % node.gpus != 0) {
            edits.error("the base scenario's " + std::to_string(base_gpus) +
                        " GPUs do not fill nodes of " + std::to_string(node.gpus) +
                        "; pass --nodes N");
            return false;
        }
        nodes = base_gpus / node.gpus;
    }
    if (nodes != base.cluster.nodes)
        edits.set("cluster.nodes", std::to_string(nodes),
                  nodes * node.gpus == base_gpus
                      ? "the base's " + std::to_string(base_gpus) + " GPUs"
                      : "--nodes");
    return true;
}

/// NVLink: links x the generation's rate; the domain is the node unless the switches are outside
/// it (GB200 NVL72 trays: the rack). False on an error.
bool applyNvlink(const NodeDescription& node, const std::string& preset, NodeEdits& edits) {
    if (node.gpus <= 1)
        return true;
    const int sm = node.sm > 0 ? node.sm : computeCapabilityOf(preset);
    const double per_link = nvlinkGbpsPerLink(sm);
    if (per_link <= 0) {
        edits.error("the NVLink generation is unknown (no compute capability in the dump and the "
                    "GPU preset " +
                    preset + " has no NVLink)");
        return false;
    }
    const double gbps = node.nvlinks_per_gpu * per_link;
    edits.set("cluster.scale_up.bandwidth_gbps", formatNumber(gbps),
              std::to_string(node.nvlinks_per_gpu) + " NVLinks x " + formatNumber(per_link) +
                  " GB/s per direction (compute capability " + std::to_string(sm / 10) + "." +
                  std::to_string(sm % 10) + (node.sm > 0 ? "" : " of " + preset) + ")");
    if (!node.nvswitch)
        edits.kept("the NVLinks form a direct mesh: the scenario treats them as one switch of the "
                   "GPU's total NVLink bandwidth");
    if (!node.nvswitch_outside_node) {
        edits.kept(std::string("cluster.scale_up.domain stays ") +
                   toString(edits.options.base.cluster.scale_up_domain) +
                   ": the dump does not say whether the NVSwitches are in the node or in the "
                   "rack");
    } else if (*node.nvswitch_outside_node) {
        edits.set("cluster.scale_up.domain", "rack",
                  "the NVSwitches are outside the node: multi-node NVLink");
    } else {
        edits.set("cluster.scale_up.domain", "node", "NVLink ends in the node");
    }
    return true;
}

/// NICs: one rail per NIC next to a GPU; the speed (or --nic) picks the NIC preset.
void applyNics(const NodeDescription& node, NodeEdits& edits) {
    const ClusterSpec& base = edits.options.base.cluster;
    const int rails = static_cast<int>(node.rail_nics.size());
    if (rails > 0) {
        edits.set("cluster.scale_out.nics_per_node", std::to_string(rails),
                  "NICs next to a GPU: " + join(node.rail_nics));
    } else {
        edits.kept("cluster.scale_out.nics_per_node stays " + std::to_string(base.nics_per_node) +
                   ": the dump does not show which NICs are the GPUs' (set it with --set "
                   "cluster.scale_out.nics_per_node=N)");
    }
    if (!edits.options.nic_preset.empty()) {
        edits.set("cluster.scale_out.nic", edits.options.nic_preset, "--nic");
    } else if (node.nic_speed_gbit > 0) {
        if (const NicSpec* nic = nicForSpeed(node.nic_speed_gbit, base.fabric)) {
            edits.set("cluster.scale_out.nic", nic->preset,
                      formatNumber(node.nic_speed_gbit) + " Gb/s " + displayName(base.fabric));
        } else {
            // Same achievable share of the line rate as the preset kept (catalog figures).
            const NicSpec& kept = base.nic;
            const double gbps = kept.bandwidth_gbps / kept.speed_gbit * node.nic_speed_gbit;
            edits.set(
                "cluster.scale_out.bandwidth_gbps", formatNumber(gbps),
                formatNumber(node.nic_speed_gbit) + " Gb/s has no catalog NIC: " + kept.preset +
                    "'s achievable share of its line rate (" + formatNumber(kept.bandwidth_gbps) +
                    " of " + formatNumber(kept.speed_gbit / 8) + " GB/s)");
        }
    } else {
        edits.kept("cluster.scale_out.nic stays " + base.nic.preset +
                   ": the dump does not give NIC speeds (pass --nic PRESET)");
    }
}

/// Loads the base with the edits and the user's --set; problems of the edits name the dump.
void loadEditedScenario(NodeEdits& edits) {
    const NodeImportOptions& options = edits.options;
    std::vector<std::string> sets = edits.sets;
    for (const std::string& o : options.overrides)
        sets.push_back(o);
    LoadResult loaded = loadScenarioTextWithOverrides(toYaml(options.base), options.file_label,
                                                      options.base_dir, sets);
    auto fromUser = [&](const std::string& field) {
        for (const std::string& o : options.overrides)
            if (!field.empty() && o.rfind(field + "=", 0) == 0)
                return true;
        return false;
    };
    for (Diagnostic d : loaded.diagnostics) {
        if (d.file != "--set" || !fromUser(d.field)) {
            d.file = options.file_label;
            d.line = 0;
            d.column = 0;
            d.message = "the scenario with this node: " + d.message;
        }
        edits.result.diagnostics.push_back(std::move(d));
    }
    edits.result.scenario = std::move(loaded.scenario);
}

} // namespace

NodeImport applyNodeDescription(const NodeDescription& node, const NodeImportOptions& options) {
    NodeImport result;
    NodeEdits edits{result, options, {}};
    if (node.gpus < 1) {
        edits.error("the dump shows no GPUs");
        return result;
    }
    if (node.gpus > 1 && !node.all_pairs_nvlink) {
        edits.error("not every GPU pair is connected by NVLink, so the node has no single "
                    "scale-up domain; the scenario models a node (or rack) whose GPUs all reach "
                    "each other over NVLink");
        return result;
    }
    const std::string preset = applyGpuModel(node, edits);
    if (!applyNodeCount(node, edits) || !applyNvlink(node, preset, edits))
        return result;
    applyNics(node, edits);
    loadEditedScenario(edits);
    return result;
}

} // namespace moe::io
