#include "moe/io/nccl_topo.h"

#include "moe/format.h"
#include "moe/json_writer.h"

#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace moe::io {

namespace {

/// NVIDIA PCI device ids of data-centre GPUs (the PCI ID database, pci-ids.ucw.cz): the model,
/// and the catalog preset when the catalog has that GPU.
struct KnownGpu {
    const char* device;
    const char* model;
    const char* preset;
};
constexpr KnownGpu kKnownGpus[] = {
    {"0x20b0", "A100 SXM4 40GB", ""}, {"0x20b2", "A100 SXM4 80GB", ""},
    {"0x20b5", "A100 PCIe 80GB", ""}, {"0x2330", "H100 SXM5 80GB", "h100-sxm"},
    {"0x2331", "H100 PCIe", ""},      {"0x2335", "H200 SXM 141GB", "h200-sxm"},
    {"0x2901", "B200", "b200"},       {"0x2941", "GB200", "gb200"},
};

/// PCI class of an NVSwitch as NCCL writes it in <nvlink tclass=...> (PCI_NVSWITCH_CLASS).
constexpr const char* kNvSwitchClass = "0x068000";

int lineOf(const std::string& text, std::ptrdiff_t offset) {
    if (offset < 0)
        return 0;
    const std::size_t end = std::min(static_cast<std::size_t>(offset), text.size());
    return 1 + static_cast<int>(
                   std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

std::optional<int> intAttribute(const pugi::xml_node& node, const char* name) {
    const pugi::xml_attribute a = node.attribute(name);
    if (!a)
        return std::nullopt;
    const std::string text = a.value();
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// The element ancestors of `node` up to the document, nearest first.
std::vector<pugi::xml_node> ancestors(pugi::xml_node node) {
    std::vector<pugi::xml_node> out;
    for (pugi::xml_node p = node.parent(); p && p.type() == pugi::node_element; p = p.parent())
        out.push_back(p);
    return out;
}

/// The PCI distance between a GPU's and a NIC's devices in NCCL's tree, as nvidia-smi names it.
PathLevel distance(pugi::xml_node gpu_pci, pugi::xml_node nic_pci, bool gpu_has_c2c) {
    std::vector<pugi::xml_node> a = ancestors(gpu_pci);
    std::vector<pugi::xml_node> b = ancestors(nic_pci);
    pugi::xml_node common;
    for (const pugi::xml_node& x : a) {
        if (std::find(b.begin(), b.end(), x) != b.end()) {
            common = x;
            break;
        }
    }
    const std::string name = common ? common.name() : "";
    if (name == "pci") // below one PCIe switch: one bridge apart, or several
        return gpu_pci.parent() == common && nic_pci.parent() == common ? PathLevel::pix
                                                                        : PathLevel::pxb;
    if (name == "cpu") // the same CPU: over its C2C link for a Grace GPU, else its root ports
        return gpu_has_c2c ? PathLevel::c2c : PathLevel::node;
    return PathLevel::sys;
}

/// Where a dump's problems go: the file's diagnostics, each at its line.
struct DumpErrors {
    const std::string& xml;
    const std::string& file_label;
    Diagnostics& diagnostics;

    void operator()(int line, const std::string& message) const {
        Diagnostic d;
        d.file = file_label;
        d.line = line;
        d.message = message;
        diagnostics.push_back(std::move(d));
    }
    void at(const pugi::xml_node& node, const std::string& message) const {
        (*this)(lineOf(xml, node.offset_debug()), message);
    }
};

/// The <system> root of a well-formed dump, or an empty node after an error.
pugi::xml_node systemElement(const pugi::xml_document& doc, const pugi::xml_parse_result& parsed,
                             const DumpErrors& error) {
    if (!parsed) {
        error(lineOf(error.xml, parsed.offset),
              std::string("not well-formed XML: ") + parsed.description());
        return {};
    }
    const pugi::xml_node system = doc.document_element();
    if (std::string(system.name()) != "system" || !system.attribute("version")) {
        error.at(system,
                 std::string("not an NCCL topology dump: the root element is <") + system.name() +
                     (std::string(system.name()) == "system" ? "> without a version" : ">") +
                     ", expected <system version=\"1\"> (the file NCCL_TOPO_DUMP_FILE writes)");
        return {};
    }
    return system;
}

/// One <gpu> element and the links NCCL found for it.
struct Gpu {
    int dev = 0;
    int sm = 0;
    int links = 0;
    bool to_switch = false;
    bool c2c = false;
    std::set<std::string> peers; ///< bus ids of GPUs linked directly
    std::string busid;
    std::string device;
    pugi::xml_node pci;
};

/// A <gpu>'s <nvlink> children into its link count, switch flag and peers; false on an error.
bool readNvlinks(const pugi::xml_node& g, Gpu& gpu, const DumpErrors& error) {
    bool ok = true;
    for (const pugi::xml_node link : g.children("nvlink")) {
        const std::optional<int> count = intAttribute(link, "count");
        if (!count || *count < 1) {
            error.at(link, "<nvlink> needs a count attribute of at least 1");
            ok = false;
            continue;
        }
        gpu.links += *count;
        if (lower(link.attribute("tclass").value()) == kNvSwitchClass)
            gpu.to_switch = true;
        else
            gpu.peers.insert(lower(link.attribute("target").value()));
    }
    return ok;
}

/// Every <gpu>, sorted by dev; nullopt after an error or when there is none.
std::optional<std::vector<Gpu>> readGpus(const pugi::xml_node& system, const DumpErrors& error) {
    std::vector<Gpu> gpus;
    bool bad = false;
    for (const pugi::xpath_node& x : system.select_nodes(".//gpu")) {
        const pugi::xml_node g = x.node();
        Gpu gpu;
        const std::optional<int> dev = intAttribute(g, "dev");
        const std::optional<int> sm = intAttribute(g, "sm");
        if (!dev || !sm) {
            error.at(g, std::string("<gpu> needs whole-number dev and sm attributes (NCCL writes "
                                    "both), missing or not a number: ") +
                            (!dev ? "dev" : "sm"));
            bad = true;
            continue;
        }
        gpu.dev = *dev;
        gpu.sm = *sm;
        gpu.pci = g.parent();
        if (std::string(gpu.pci.name()) != "pci") {
            error.at(g, "<gpu> is not inside the <pci> element of its device");
            bad = true;
            continue;
        }
        gpu.busid = lower(gpu.pci.attribute("busid").value());
        gpu.device = lower(gpu.pci.attribute("device").value());
        if (!readNvlinks(g, gpu, error))
            bad = true;
        gpu.c2c = static_cast<bool>(g.child("c2c"));
        gpus.push_back(std::move(gpu));
    }
    if (bad)
        return std::nullopt;
    if (gpus.empty()) {
        error.at(system, "the dump has no <gpu> element");
        return std::nullopt;
    }
    std::sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) { return a.dev < b.dev; });
    return gpus;
}

/// The GPU type (from the first GPU's PCI device id) and the NVLink fabric.
void describeGpus(const std::vector<Gpu>& gpus, NodeDescription& node) {
    node.gpus = static_cast<int>(gpus.size());
    node.sm = gpus.front().sm;
    node.gpu_pci_device = gpus.front().device;
    for (const KnownGpu& k : kKnownGpus) {
        if (node.gpu_pci_device == k.device) {
            node.gpu_model = k.model;
            node.gpu_preset = k.preset;
        }
    }
    for (const Gpu& g : gpus) {
        if (g.sm != node.sm || g.device != node.gpu_pci_device)
            node.notes.push_back("the GPUs are not all alike (GPU " + std::to_string(g.dev) +
                                 " differs); the first one's type is used");
    }
    // NVLink: through NVSwitches every GPU reaches every other; a direct mesh needs a link to
    // each peer.
    int links = gpus.front().links;
    bool switched = true, meshed = true;
    for (const Gpu& g : gpus) {
        links = std::min(links, g.links);
        switched = switched && g.to_switch;
        for (const Gpu& h : gpus)
            if (&g != &h && g.peers.count(h.busid) == 0)
                meshed = false;
    }
    node.nvlinks_per_gpu = node.gpus > 1 || switched ? links : 0;
    node.nvswitch = switched && links > 0;
    node.all_pairs_nvlink = node.gpus == 1 || node.nvswitch || (meshed && links > 0);
    // A Grace-Blackwell GPU (C2C to its CPU) with NVLinks to switches is an NVL72/NVL36 tray:
    // the switches are in the rack's NVLink switch trays, so the domain is the rack.
    node.nvswitch_outside_node = node.nvswitch && node.sm >= 100 && gpus.front().c2c;
}

/// The <net> ports NCCL can use: name, PCI device and speed.
struct NicPorts {
    std::vector<std::string> names;
    std::vector<pugi::xml_node> pcis;
    std::vector<double> speeds_gbit;
};

/// Every <net>; nullopt after an error.
std::optional<NicPorts> readNics(const pugi::xml_node& system, const DumpErrors& error) {
    NicPorts nics;
    for (const pugi::xpath_node& x : system.select_nodes(".//net")) {
        const pugi::xml_node net = x.node();
        const std::string name = net.attribute("name").value();
        if (name.empty()) {
            error.at(net, "<net> without a name attribute");
            return std::nullopt;
        }
        nics.names.push_back(name);
        pugi::xml_node device = net.parent();
        if (std::string(device.name()) == "nic")
            device = device.parent();
        nics.pcis.push_back(device);
        const std::optional<int> mbps = intAttribute(net, "speed");
        nics.speeds_gbit.push_back(mbps ? *mbps / 1000.0 : 0.0);
    }
    return nics;
}

/// The rails (NICs next to a GPU) and their speed.
void describeRails(const std::vector<Gpu>& gpus, const NicPorts& nics, NodeDescription& node) {
    const std::vector<std::string>& names = nics.names;
    std::vector<std::vector<PathLevel>> dist(gpus.size());
    for (std::size_t g = 0; g < gpus.size(); ++g)
        for (std::size_t n = 0; n < names.size(); ++n)
            dist[g].push_back(distance(gpus[g].pci, nics.pcis[n], gpus[g].c2c));
    assignRails(node, dist, names);
    for (std::size_t n = 0; n < names.size(); ++n) {
        if (std::find(node.rail_nics.begin(), node.rail_nics.end(), names[n]) ==
            node.rail_nics.end())
            continue;
        const double speed = nics.speeds_gbit[n];
        if (node.nic_speed_gbit > 0 && speed != node.nic_speed_gbit)
            node.notes.push_back("the rail NICs differ in speed (" + names[n] + " " +
                                 formatNumber(speed) + " Gb/s); the first one's is used");
        else if (node.nic_speed_gbit == 0)
            node.nic_speed_gbit = speed;
    }
}

} // namespace

NodeParse parseNcclTopo(const std::string& xml, const std::string& file_label) {
    NodeParse result;
    const DumpErrors error{xml, file_label, result.diagnostics};
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed =
        doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
    const pugi::xml_node system = systemElement(doc, parsed, error);
    if (!system)
        return result;
    const std::optional<std::vector<Gpu>> gpus = readGpus(system, error);
    if (!gpus)
        return result;
    NodeDescription node;
    node.source = "NCCL topology";
    describeGpus(*gpus, node);
    const std::optional<NicPorts> nics = readNics(system, error);
    if (!nics)
        return result;
    describeRails(*gpus, *nics, node);
    result.node = std::move(node);
    return result;
}

} // namespace moe::io
