// Builds the explicit hardware graph of a cluster and routes GPU-to-GPU traffic over it.
//
// Vertex ids are laid out by kind so lookups need no maps: GPUs first (vertex id == GPU index),
// then the scale-up switches, the NICs, the leaf switches and the spine switches. Link ids are
// laid out the same way: one scale-up link per GPU (when its domain has a switch), one GPU<->NIC
// link per GPU, one NIC<->leaf link per NIC, then each leaf's uplinks as one contiguous block.
#include "moe/topology.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace moe {

const char* toString(VertexKind k) {
    switch (k) {
    case VertexKind::gpu:
        return "gpu";
    case VertexKind::scale_up_switch:
        return "scale_up_switch";
    case VertexKind::nic:
        return "nic";
    case VertexKind::leaf_switch:
        return "leaf_switch";
    case VertexKind::spine_switch:
        return "spine_switch";
    }
    return "unknown";
}

const char* toString(LinkKind k) {
    switch (k) {
    case LinkKind::scale_up:
        return "scale_up";
    case LinkKind::gpu_nic:
        return "gpu_nic";
    case LinkKind::nic_leaf:
        return "nic_leaf";
    case LinkKind::leaf_spine:
        return "leaf_spine";
    }
    return "unknown";
}

const char* toString(LinkClass c) {
    switch (c) {
    case LinkClass::scale_up:
        return "scale_up";
    case LinkClass::scale_out:
        return "scale_out";
    }
    return "unknown";
}

namespace {

// GPU <-> NIC is a PCIe Gen5 x16 path (through the node's PCIe switch with GPUDirect RDMA):
// 32 GT/s x 16 lanes = 64 GB/s per direction before 128b/130b encoding (~63 GB/s after). It sits
// above a 400 Gb/s NIC (50 GB/s), so it only matters for 800 Gb/s NICs or NICs shared by GPUs.
constexpr double kPcieGen5x16Gbps = 64.0;
// One PCIe traversal with a PCIe switch in the way is well under a microsecond; 1 us also covers
// the NIC's doorbell/DMA setup so short messages are not modelled as free.
constexpr double kPcieLatencyUs = 1.0;

// Leaf and spine switches are 64-port radix switches (NVIDIA Quantum-2 QM9700: 64 x NDR 400G;
// Spectrum-4 SN5600: 64 x 800G). A non-blocking leaf splits its ports half down, half up.
constexpr int kLeafPorts = 64;
constexpr int kLeafDownPorts = kLeafPorts / 2;
constexpr int kLeafUpPorts = kLeafPorts - kLeafDownPorts;
constexpr int kSpinePorts = 64;
// Each leaf links to at most this many spines (one uplink port per spine). Besides matching the
// port budget, it bounds the link count at ~32 per leaf so 100K-GPU graphs stay small.
constexpr int kMaxSpinesPerLeaf = kLeafUpPorts;
// A switch hop adds port-to-port latency plus cable time: ~0.1-0.2 us on InfiniBand switches, a
// few hundred ns more on Ethernet; 0.5 us per leaf<->spine link is the middle of that range.
constexpr double kSwitchHopLatencyUs = 0.5;

// Past this many GPUs the graph would take gigabytes; validation reports such clusters, and the
// graph stays empty instead of exhausting memory (20x the 100K-GPU clusters the tool targets).
constexpr int64_t kMaxGraphGpus = 2'000'000;

int ceilDiv(int64_t a, int64_t b) {
    return static_cast<int>((a + b - 1) / b);
}

/// The graph's sizes, derived once from the cluster: GPUs and scale-up domains, NICs, the
/// fabric's leaves and spines, and where each tier's vertices start.
struct GraphShape {
    int nodes = 0, gpn = 1, nics_per_node = 1, gpd = 1;
    bool rack_domain = false;
    int gpus = 0, domains = 0, nics = 0;
    bool rail = false, fabric = false;
    int nodes_per_leaf = 1, leaves = 0, spines = 0, spines_per_leaf = 0;
    int switches = 0;
    int switch_base = 0, nic_base = 0, leaf_base = 0, spine_base = 0;
    bool too_large = false; ///< past kMaxGraphGpus: the graph stays empty

    /// Domain d's scale-up switch, -1 for a lone GPU. Only the last domain can be partial, so
    /// the switches are numbered like the domains.
    int domainSwitch(int d) const { return std::min(gpd, gpus - d * gpd) > 1 ? d : -1; }
};

/// Fabric shape. A single node talks to nobody over the fabric, so it gets none.
void shapeFabric(const ClusterSpec& c, GraphShape& sh) {
    sh.rail = c.fabric_topology == FabricTopology::rail_optimized;
    sh.fabric = sh.nodes > 1;
    sh.nodes_per_leaf = c.nodes_per_leaf;
    if (sh.nodes_per_leaf <= 0)
        // Rail-optimized: each rail leaf gives one down port to each node of its group.
        // Fat tree: a leaf takes whole nodes, all their NICs, until its down ports are used.
        sh.nodes_per_leaf =
            sh.rail ? kLeafDownPorts : std::max(1, kLeafDownPorts / sh.nics_per_node);
    const int leaf_groups = sh.fabric ? ceilDiv(sh.nodes, sh.nodes_per_leaf) : 0;
    sh.leaves = sh.rail ? leaf_groups * sh.nics_per_node : leaf_groups;
    // Spines: enough 64-port spines to terminate every leaf's up ports. One leaf needs none.
    sh.spines =
        sh.leaves > 1
            ? std::max(1, ceilDiv(static_cast<int64_t>(sh.leaves) * kLeafUpPorts, kSpinePorts))
            : 0;
    sh.spines_per_leaf = std::min(sh.spines, kMaxSpinesPerLeaf);
}

/// Every size of the graph, in O(1): racks aside, nothing here depends on the cluster's size.
GraphShape graphShape(const ClusterSpec& c) {
    GraphShape sh;
    // Degrees below 1 are validation errors; clamping keeps the graph well-formed meanwhile.
    sh.nodes = std::max(0, c.nodes);
    sh.gpn = std::max(1, c.gpus_per_node);
    sh.nics_per_node = std::max(1, c.nics_per_node);
    sh.rack_domain = c.scale_up_domain == ScaleUpDomain::rack;
    sh.gpd = sh.rack_domain ? sh.gpn * std::max(1, c.nodes_per_rack) : sh.gpn;
    sh.too_large = static_cast<int64_t>(sh.nodes) * sh.gpn > kMaxGraphGpus ||
                   static_cast<int64_t>(sh.nodes) * sh.nics_per_node > kMaxGraphGpus ||
                   sh.gpd > kMaxGraphGpus;
    if (sh.too_large)
        return sh;
    sh.gpus = sh.nodes * sh.gpn;
    sh.domains = sh.gpus == 0 ? 0 : ceilDiv(sh.gpus, sh.gpd);
    sh.nics = sh.nodes * sh.nics_per_node;
    shapeFabric(c, sh);
    if (sh.gpd > 1 && sh.domains > 0)
        sh.switches = sh.domainSwitch(sh.domains - 1) >= 0 ? sh.domains : sh.domains - 1;
    sh.switch_base = sh.gpus;
    sh.nic_base = sh.switch_base + sh.switches;
    sh.leaf_base = sh.nic_base + sh.nics;
    sh.spine_base = sh.leaf_base + sh.leaves;
    return sh;
}

std::string nodeLabel(int node) {
    return "node" + std::to_string(node);
}

void addGpuVertices(const GraphShape& sh, HardwareGraph& g) {
    for (int gpu = 0; gpu < sh.gpus; ++gpu) {
        const int node = gpu / sh.gpn;
        const int local = gpu % sh.gpn;
        Vertex v;
        v.kind = VertexKind::gpu;
        v.index = gpu;
        v.rack = g.node_rack[node];
        v.node = node;
        v.domain = gpu / sh.gpd;
        // The NIC rail this GPU sends on: NICs are shared evenly by consecutive local GPUs.
        v.rail = static_cast<int>(static_cast<int64_t>(local) * sh.nics_per_node / sh.gpn);
        v.label = "rack" + std::to_string(v.rack) + "/" + nodeLabel(node) + "/gpu" +
                  std::to_string(local);
        g.gpu_vertex[gpu] = gpu;
        g.gpu_nic_vertex[gpu] = sh.nic_base + node * sh.nics_per_node + v.rail;
        g.vertices.push_back(std::move(v));
    }
}

/// Scale-up switches, one per domain of two or more GPUs.
void addScaleUpSwitchVertices(const GraphShape& sh, HardwareGraph& g) {
    for (int d = 0; d < sh.domains; ++d) {
        if (sh.domainSwitch(d) < 0)
            continue;
        const int first_node = d * sh.gpd / sh.gpn;
        Vertex v;
        v.kind = VertexKind::scale_up_switch;
        v.index = sh.domainSwitch(d);
        v.rack = g.node_rack[first_node];
        v.node = sh.rack_domain ? -1 : first_node;
        v.domain = d;
        v.label = (sh.rack_domain ? "rack" + std::to_string(v.rack) : nodeLabel(first_node)) +
                  "/nvswitch";
        g.vertices.push_back(std::move(v));
    }
}

void addNicVertices(const GraphShape& sh, HardwareGraph& g) {
    for (int nic = 0; nic < sh.nics; ++nic) {
        const int node = nic / sh.nics_per_node;
        Vertex v;
        v.kind = VertexKind::nic;
        v.index = nic;
        v.rack = g.node_rack[node];
        v.node = node;
        v.rail = nic % sh.nics_per_node;
        v.label = nodeLabel(node) + "/nic" + std::to_string(v.rail);
        g.vertices.push_back(std::move(v));
    }
}

/// Leaves. Rail-optimized leaves are numbered group-major: leaf = group * rails + rail.
/// Returns each leaf's downlink count.
std::vector<int> addLeafVertices(const GraphShape& sh, HardwareGraph& g) {
    std::vector<int> leaf_downlinks(sh.leaves, 0);
    for (int leaf = 0; leaf < sh.leaves; ++leaf) {
        const int group = sh.rail ? leaf / sh.nics_per_node : leaf;
        const int first_node = group * sh.nodes_per_leaf;
        const int last_node = std::min(sh.nodes, first_node + sh.nodes_per_leaf) - 1;
        const int group_nodes = last_node - first_node + 1;
        Vertex v;
        v.kind = VertexKind::leaf_switch;
        v.index = leaf;
        v.rack = g.node_rack[first_node] == g.node_rack[last_node] ? g.node_rack[first_node] : -1;
        if (sh.rail) {
            v.rail = leaf % sh.nics_per_node;
            v.label = "leaf-rail" + std::to_string(v.rail) + "-g" + std::to_string(group);
            leaf_downlinks[leaf] = group_nodes;
        } else {
            v.label = "leaf" + std::to_string(leaf);
            leaf_downlinks[leaf] = group_nodes * sh.nics_per_node;
        }
        g.vertices.push_back(std::move(v));
    }
    return leaf_downlinks;
}

void addSpineVertices(const GraphShape& sh, HardwareGraph& g) {
    for (int s = 0; s < sh.spines; ++s) {
        Vertex v;
        v.kind = VertexKind::spine_switch;
        v.index = s;
        v.label = "spine" + std::to_string(s);
        g.vertices.push_back(std::move(v));
    }
}

int addLink(HardwareGraph& g, int a, int b, LinkKind kind, double bw, double lat) {
    Link l;
    l.a = a;
    l.b = b;
    l.kind = kind;
    l.bandwidth_gbps = bw;
    l.latency_us = lat;
    g.links.push_back(l);
    return static_cast<int>(g.links.size()) - 1;
}

// Links. The scale-up latency is split over the two links of a GPU->switch->GPU path, so a
// path costs one scale-up step; likewise the NIC latency (quoted per message across the
// fabric) is split over the two NIC<->leaf links of a NIC->leaf->NIC path.
void addScaleUpAndNicLinks(const ClusterSpec& c, const GraphShape& sh, HardwareGraph& g) {
    for (int gpu = 0; gpu < sh.gpus; ++gpu) {
        const int sw = sh.domainSwitch(gpu / sh.gpd);
        if (sw >= 0)
            g.gpu_scale_up_link[gpu] = addLink(g, gpu, sh.switch_base + sw, LinkKind::scale_up,
                                               c.gpu.scale_up_gbps, c.gpu.scale_up_latency_us / 2);
    }
    for (int gpu = 0; gpu < sh.gpus; ++gpu)
        g.gpu_nic_link[gpu] = addLink(g, gpu, g.gpu_nic_vertex[gpu], LinkKind::gpu_nic,
                                      kPcieGen5x16Gbps, kPcieLatencyUs);
    if (sh.fabric) {
        for (int nic = 0; nic < sh.nics; ++nic) {
            const int node = nic / sh.nics_per_node;
            const int group = node / sh.nodes_per_leaf;
            const int leaf = sh.rail ? group * sh.nics_per_node + nic % sh.nics_per_node : group;
            g.nic_leaf[nic] = leaf;
            g.nic_leaf_link[nic] =
                addLink(g, sh.nic_base + nic, sh.leaf_base + leaf, LinkKind::nic_leaf,
                        c.nic.bandwidth_gbps, c.nic.latency_us / 2);
        }
    }
}

// Uplinks: the leaf's downlink bandwidth divided by the oversubscription, spread evenly over
// a window of spines. Consecutive leaves take consecutive windows (wrapping), so every spine
// ends up with the same number of leaves. Up to 64 leaves every leaf reaches every spine.
void addLeafSpineLinks(const ClusterSpec& c, const GraphShape& sh,
                       const std::vector<int>& leaf_downlinks, HardwareGraph& g) {
    const double oversub = std::max(1.0, c.oversubscription);
    for (int leaf = 0; leaf < sh.leaves && sh.spines > 0; ++leaf) {
        const double total_gbps = leaf_downlinks[leaf] * c.nic.bandwidth_gbps / oversub;
        const int start =
            static_cast<int>(static_cast<int64_t>(leaf) * sh.spines_per_leaf % sh.spines);
        g.leaf_spine_links_begin[leaf] = static_cast<int>(g.links.size());
        g.leaf_spine_links_count[leaf] = sh.spines_per_leaf;
        for (int j = 0; j < sh.spines_per_leaf; ++j)
            addLink(g, sh.leaf_base + leaf, sh.spine_base + (start + j) % sh.spines,
                    LinkKind::leaf_spine, total_gbps / sh.spines_per_leaf, kSwitchHopLatencyUs);
    }
    if (sh.spines == 0)
        g.leaf_spine_links_begin.assign(sh.leaves, static_cast<int>(g.links.size()));
}

} // namespace

HardwareGraph buildHardwareGraph(const ClusterSpec& c) {
    HardwareGraph g;
    const GraphShape sh = graphShape(c);
    g.gpus_per_node = sh.gpn;
    g.nodes_per_rack = std::max(1, c.nodes_per_rack);
    g.gpus_per_domain = sh.gpd;
    if (sh.too_large)
        return g;
    // Racks hold consecutive nodes; a rack listed over capacity (a validation error) widens the
    // capacity so drawings still fit it.
    g.rack_first_node.push_back(0);
    g.node_rack.reserve(static_cast<size_t>(sh.nodes));
    for (const int in_rack : c.nodesInRacks()) {
        g.node_rack.insert(g.node_rack.end(), static_cast<size_t>(in_rack), g.rackCount());
        g.rack_first_node.push_back(g.rack_first_node.back() + in_rack);
        g.nodes_per_rack = std::max(g.nodes_per_rack, in_rack);
    }
    g.scale_up_switches = sh.switches;
    g.nics = sh.nics;
    g.leaves = sh.leaves;
    g.spines = sh.spines;
    g.vertices.reserve(static_cast<size_t>(sh.spine_base + sh.spines));
    g.links.reserve(static_cast<size_t>(2 * sh.gpus + (sh.fabric ? sh.nics : 0) +
                                        sh.leaves * sh.spines_per_leaf));
    g.gpu_vertex.resize(sh.gpus);
    g.gpu_nic_vertex.resize(sh.gpus);
    g.gpu_scale_up_link.assign(sh.gpus, -1);
    g.gpu_nic_link.resize(sh.gpus);
    g.nic_leaf_link.assign(sh.nics, -1);
    g.nic_leaf.assign(sh.nics, -1);
    g.leaf_spine_links_begin.assign(sh.leaves, 0);
    g.leaf_spine_links_count.assign(sh.leaves, 0);

    addGpuVertices(sh, g);
    addScaleUpSwitchVertices(sh, g);
    addNicVertices(sh, g);
    const std::vector<int> leaf_downlinks = addLeafVertices(sh, g);
    addSpineVertices(sh, g);
    addScaleUpAndNicLinks(c, sh, g);
    addLeafSpineLinks(c, sh, leaf_downlinks, g);
    return g;
}

HardwareShape hardwareShape(const ClusterSpec& c) {
    const GraphShape sh = graphShape(c);
    HardwareShape h;
    h.nodes = sh.too_large ? 0 : sh.nodes;
    h.gpus = sh.gpus;
    h.gpus_per_node = sh.gpn;
    h.gpus_per_domain = sh.gpd;
    h.scale_up_switches = sh.switches;
    h.nics = sh.nics;
    h.leaves = sh.leaves;
    h.spines = sh.spines;
    h.nodes_per_rack = std::max(1, c.nodes_per_rack);
    if (c.rack_nodes.empty()) { // full racks and perhaps one partial last rack
        h.racks = ceilDiv(h.nodes, h.nodes_per_rack);
        h.racks_alike = h.racks > 0 && h.nodes % h.nodes_per_rack == 0;
        return h;
    }
    const std::vector<int> racks = c.nodesInRacks(); // as buildHardwareGraph lays them out
    h.racks = static_cast<int>(racks.size());
    for (const int in_rack : racks)
        h.nodes_per_rack = std::max(h.nodes_per_rack, in_rack);
    h.racks_alike = h.racks > 0 && std::all_of(racks.begin(), racks.end(), [&](int in_rack) {
                        return in_rack == h.nodes_per_rack;
                    });
    return h;
}

// Traffic between different nodes takes the simple path through the source GPU's own NIC.
// In a rail-optimized fabric that means cross-rail traffic climbs to a spine; NCCL's PXN
// instead first moves the data over NVLink to the peer GPU on the destination rail and stays
// on one rail leaf. That is not modelled here.
std::vector<int> HardwareGraph::route(int src_gpu, int dst_gpu) const {
    const int n = gpuCount();
    if (src_gpu == dst_gpu || src_gpu < 0 || dst_gpu < 0 || src_gpu >= n || dst_gpu >= n)
        return {};
    if (domainOf(src_gpu) == domainOf(dst_gpu))
        return {gpu_scale_up_link[src_gpu], gpu_scale_up_link[dst_gpu]};

    std::vector<int> path;
    path.reserve(6);
    path.push_back(gpu_nic_link[src_gpu]);
    const int nic_s = vertices[gpu_nic_vertex[src_gpu]].index;
    const int nic_d = vertices[gpu_nic_vertex[dst_gpu]].index;
    if (nic_s != nic_d && nic_leaf_link[nic_s] >= 0 && nic_leaf_link[nic_d] >= 0) {
        path.push_back(nic_leaf_link[nic_s]);
        const int leaf_s = nic_leaf[nic_s];
        const int leaf_d = nic_leaf[nic_d];
        const int ws = leaf_spine_links_count[leaf_s];
        const int wd = leaf_spine_links_count[leaf_d];
        if (leaf_s != leaf_d && ws > 0 && wd > 0) {
            const int spine_base = static_cast<int>(vertices.size()) - spines;
            const int bs = leaf_spine_links_begin[leaf_s];
            const int bd = leaf_spine_links_begin[leaf_d];
            const int start_s = links[bs].b - spine_base;
            const int start_d = links[bd].b - spine_base;
            // Position of spine s inside the destination leaf's window, or -1.
            auto inDst = [&](int s) {
                const int off = ((s - start_d) % spines + spines) % spines;
                return off < wd ? off : -1;
            };
            int shared = 0;
            for (int j = 0; j < ws; ++j)
                shared += inDst((start_s + j) % spines) >= 0;
            // Symmetric in src/dst so both directions of a pair use the same spine.
            const auto hash = static_cast<uint64_t>(src_gpu) + static_cast<uint64_t>(dst_gpu);
            if (shared > 0) {
                int pick = static_cast<int>(hash % static_cast<uint64_t>(shared));
                for (int j = 0; j < ws; ++j) {
                    const int off = inDst((start_s + j) % spines);
                    if (off < 0)
                        continue;
                    if (pick-- == 0) {
                        path.push_back(bs + j);
                        path.push_back(bd + off);
                        break;
                    }
                }
            } else {
                // The leaves share no spine: a cluster this large needs a third switch tier,
                // which is taken as non-blocking; only the two leaf uplinks are charged.
                path.push_back(bs + static_cast<int>(hash % static_cast<uint64_t>(ws)));
                path.push_back(bd + static_cast<int>(hash % static_cast<uint64_t>(wd)));
            }
        }
        path.push_back(nic_leaf_link[nic_d]);
    }
    path.push_back(gpu_nic_link[dst_gpu]);
    return path;
}

} // namespace moe
