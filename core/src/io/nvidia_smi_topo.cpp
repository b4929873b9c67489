#include "moe/io/nvidia_smi_topo.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <regex>
#include <sstream>

namespace moe::io {

namespace {

std::string trim(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r");
    if (begin == std::string::npos)
        return {};
    return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

/// nvidia-smi underlines the header with ANSI escapes (ESC [ 4 m ... ESC [ 0 m).
std::string withoutAnsi(const std::string& line) {
    static const std::regex escape("\x1b\\[[0-9;]*m");
    return std::regex_replace(line, escape, "");
}

/// Cells: tab-separated as nvidia-smi prints them; runs of spaces when a copy lost the tabs.
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    if (line.find('\t') != std::string::npos) {
        std::size_t start = 0;
        while (start <= line.size()) {
            const std::size_t tab = std::min(line.find('\t', start), line.size());
            out.push_back(trim(line.substr(start, tab - start)));
            start = tab + 1;
        }
        return out;
    }
    std::istringstream in(line);
    std::string word;
    out.push_back(""); // the empty label cell of the header, or the row label
    while (in >> word)
        out.push_back(word);
    return out;
}

bool isDevice(const std::string& label, const char* prefix) {
    const std::size_t n = std::char_traits<char>::length(prefix);
    return label.size() > n && label.compare(0, n, prefix) == 0 &&
           std::all_of(label.begin() + static_cast<std::ptrdiff_t>(n), label.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// Old drivers name NIC columns by device ("mlx5_0") instead of NIC0.
bool isNicLabel(const std::string& label) {
    return isDevice(label, "NIC") || label.rfind("mlx", 0) == 0 || label.rfind("bnxt", 0) == 0 ||
           label.rfind("ib", 0) == 0;
}

struct Cell {
    enum Kind { self, nvlink, path } kind = path;
    int links = 0;
    PathLevel level = PathLevel::sys;
};

std::optional<Cell> readCell(const std::string& text) {
    Cell c;
    if (text == "X") {
        c.kind = Cell::self;
        return c;
    }
    if (text.size() > 2 && text.compare(0, 2, "NV") == 0) {
        int links = 0;
        const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), links);
        if (ec != std::errc() || end != text.data() + text.size() || links < 1)
            return std::nullopt;
        c.kind = Cell::nvlink;
        c.links = links;
        return c;
    }
    static const std::map<std::string, PathLevel> levels = {
        {"PIX", PathLevel::pix},   {"PXB", PathLevel::pxb}, {"PHB", PathLevel::phb},
        {"NODE", PathLevel::node}, {"SYS", PathLevel::sys}, {"SOC", PathLevel::sys}};
    const auto it = levels.find(text);
    if (it == levels.end())
        return std::nullopt;
    c.level = it->second;
    return c;
}

/// Where a file's problems go: the file's diagnostics, at line and column.
struct TopoErrors {
    const std::string& file_label;
    Diagnostics& diagnostics;

    void operator()(int line, int column, const std::string& message) const {
        Diagnostic d;
        d.file = file_label;
        d.line = line;
        d.column = column;
        d.message = message;
        diagnostics.push_back(std::move(d));
    }
};

/// The file's lines without ANSI escapes or a byte-order mark.
std::vector<std::string> textLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        lines.push_back(withoutAnsi(line));
    if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0)
        lines[0].erase(0, 3);
    return lines;
}

bool nonEmpty(const std::string& s) {
    return !s.empty();
}

/// The header: a line whose first labels are GPU0, GPU1, ... then NICs. Its index (-1 when
/// there is none) and its device columns.
int findHeader(const std::vector<std::string>& lines, std::vector<std::string>& columns) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::vector<std::string> c = cells(lines[i]);
        const auto first = std::find_if(c.begin(), c.end(), nonEmpty);
        if (first == c.end() || *first != "GPU0")
            continue;
        // A row starts GPU0 then X; the header GPU0 then the next column.
        const auto next = std::find_if(first + 1, c.end(), nonEmpty);
        if (next != c.end() && *next == "X")
            continue;
        for (auto it = first; it != c.end(); ++it) {
            if (isDevice(*it, "GPU") || isNicLabel(*it))
                columns.push_back(*it);
            else if (!it->empty())
                break;
        }
        return static_cast<int>(i);
    }
    return -1;
}

/// The matrix: its device columns and where its rows start.
struct Matrix {
    std::vector<std::string> columns;
    int header = -1;
    int gpus = 0;
};

/// One GPU row's cells (c: the line's cells; `index`: the row's GPU), checked against the
/// header; nullopt after an error.
std::optional<std::vector<Cell>> readRow(const std::vector<std::string>& c, std::size_t start,
                                         const std::string& text_line, int line, int index,
                                         const Matrix& matrix, const TopoErrors& error) {
    const std::vector<std::string>& columns = matrix.columns;
    const std::string expected = "GPU" + std::to_string(index);
    std::vector<Cell> row;
    for (std::size_t k = 0; k < columns.size(); ++k) {
        const std::size_t at = start + k;
        if (at >= c.size() || c[at].empty()) {
            error(line, 0,
                  expected + " has " + std::to_string(k) + " of " + std::to_string(columns.size()) +
                      " cells (no value for " + columns[k] + "): the matrix is truncated");
            return std::nullopt;
        }
        const std::optional<Cell> cell = readCell(c[at]);
        if (!cell) {
            error(line, static_cast<int>(text_line.find(c[at])) + 1,
                  expected + " / " + columns[k] + ": unknown connection '" + c[at] +
                      "' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)");
            return std::nullopt;
        }
        const bool diagonal = static_cast<int>(k) == index;
        if (diagonal != (cell->kind == Cell::self)) {
            error(line, 0,
                  expected + " / " + columns[k] + ": " +
                      (diagonal ? "expected X on the diagonal" : "X off the diagonal"));
            return std::nullopt;
        }
        if (static_cast<int>(k) >= matrix.gpus && cell->kind != Cell::path) {
            error(line, 0,
                  expected + " / " + columns[k] + ": a NIC is reached over PCIe, got '" + c[at] +
                      "'");
            return std::nullopt;
        }
        row.push_back(*cell);
    }
    return row;
}

/// The GPU rows below the header, one per GPU column; nullopt after an error.
std::optional<std::vector<std::vector<Cell>>> readGpuRows(const std::vector<std::string>& lines,
                                                          bool unterminated, const Matrix& matrix,
                                                          const TopoErrors& error) {
    std::vector<std::vector<Cell>> rows;
    int row_line = matrix.header + 1;
    for (std::size_t i = static_cast<std::size_t>(matrix.header) + 1;
         i < lines.size() && static_cast<int>(rows.size()) < matrix.gpus; ++i) {
        std::vector<std::string> c = cells(lines[i]);
        // The last line of a file cut short may end inside a cell: that cell does not count.
        if (i + 1 == lines.size() && unterminated && !c.empty())
            c.pop_back();
        const auto first = std::find_if(c.begin(), c.end(), nonEmpty);
        if (first == c.end())
            break;
        const int line = static_cast<int>(i) + 1;
        const std::string expected = "GPU" + std::to_string(rows.size());
        if (*first != expected) {
            error(line, 1,
                  "expected the row of " + expected + ", found '" + *first + "' (the matrix has " +
                      std::to_string(matrix.gpus) + " GPU columns)");
            return std::nullopt;
        }
        const std::size_t start = static_cast<std::size_t>(first - c.begin()) + 1;
        std::optional<std::vector<Cell>> row =
            readRow(c, start, lines[i], line, static_cast<int>(rows.size()), matrix, error);
        if (!row)
            return std::nullopt;
        rows.push_back(std::move(*row));
        row_line = line;
    }
    if (static_cast<int>(rows.size()) < matrix.gpus) {
        error(row_line, 0,
              "only " + std::to_string(rows.size()) + " of the " + std::to_string(matrix.gpus) +
                  " GPU rows: the matrix is truncated");
        return std::nullopt;
    }
    return rows;
}

/// NVLink: NV# between every pair means NVSwitches (all the same) or a direct mesh.
void describeNvlink(const std::vector<std::vector<Cell>>& rows, int gpus, NodeDescription& node) {
    bool all_nv = true;
    int min_links = 0, max_links = 0, max_row = 0;
    for (int g = 0; g < gpus; ++g) {
        int row_links = 0;
        for (int h = 0; h < gpus; ++h) {
            if (g == h)
                continue;
            const Cell& c = rows[static_cast<std::size_t>(g)][static_cast<std::size_t>(h)];
            if (c.kind != Cell::nvlink) {
                all_nv = false;
                continue;
            }
            row_links += c.links;
            min_links = min_links == 0 ? c.links : std::min(min_links, c.links);
            max_links = std::max(max_links, c.links);
        }
        max_row = std::max(max_row, row_links);
    }
    node.all_pairs_nvlink = all_nv;
    node.nvswitch = all_nv && min_links == max_links;
    node.nvlinks_per_gpu = gpus < 2 ? 0 : node.nvswitch ? max_links : max_row;
}

/// NIC names from the legend ("  NIC0: mlx5_0"), else the column labels.
std::vector<std::string> nicNames(const std::vector<std::string>& lines, const Matrix& matrix) {
    std::vector<std::string> names(matrix.columns.begin() + matrix.gpus, matrix.columns.end());
    static const std::regex legend("^\\s*(NIC[0-9]+):\\s*(\\S+)\\s*$");
    for (const std::string& line : lines) {
        std::smatch m;
        if (std::regex_match(line, m, legend)) {
            const auto it = std::find(names.begin(), names.end(), m[1].str());
            if (it != names.end())
                *it = m[2].str();
        }
    }
    return names;
}

} // namespace

NodeParse parseNvidiaSmiTopo(const std::string& text, const std::string& file_label) {
    NodeParse result;
    const TopoErrors error{file_label, result.diagnostics};
    const bool unterminated = !text.empty() && text.back() != '\n';
    const std::vector<std::string> lines = textLines(text);

    Matrix matrix;
    matrix.header = findHeader(lines, matrix.columns);
    if (matrix.header < 0) {
        error(0, 0,
              "no topology matrix (a header line of GPU0 GPU1 ... columns): is this the output of "
              "'nvidia-smi topo -m'?");
        return result;
    }
    const std::vector<std::string>& columns = matrix.columns;
    const int gpus = static_cast<int>(std::count_if(
        columns.begin(), columns.end(), [](const std::string& c) { return isDevice(c, "GPU"); }));
    matrix.gpus = gpus;
    for (int g = 0; g < gpus; ++g) {
        if (columns[static_cast<std::size_t>(g)] != "GPU" + std::to_string(g)) {
            error(matrix.header + 1, 0,
                  "the header's GPU columns are not GPU0..GPU" + std::to_string(gpus - 1) +
                      " in order");
            return result;
        }
    }
    const int nics = static_cast<int>(columns.size()) - gpus;
    const std::optional<std::vector<std::vector<Cell>>> rows =
        readGpuRows(lines, unterminated, matrix, error);
    if (!rows)
        return result;

    NodeDescription node;
    node.source = "nvidia-smi topo -m";
    node.gpus = gpus;
    describeNvlink(*rows, gpus, node);
    const std::vector<std::string> names = nicNames(lines, matrix);
    std::vector<std::vector<PathLevel>> distance(static_cast<std::size_t>(gpus));
    for (int g = 0; g < gpus; ++g)
        for (int n = 0; n < nics; ++n)
            distance[static_cast<std::size_t>(g)].push_back(
                (*rows)[static_cast<std::size_t>(g)][static_cast<std::size_t>(gpus + n)].level);
    assignRails(node, distance, names);
    node.notes.insert(node.notes.begin(),
                      "nvidia-smi topo -m gives neither the GPU model, the NVLink generation nor "
                      "NIC speeds: those come from the base scenario (or --nic)");
    result.node = std::move(node);
    return result;
}

} // namespace moe::io
