#include "moe/io/megatron_args.h"

#include "moe/catalog.h"
#include "moe/edits.h"
#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/scenario_io.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>

namespace moe::io {

namespace {

// ---------------------------------------------------------------------------------------------
// Reading: a small shell-word reader, enough for launch scripts. It knows quotes, comments,
// line continuations, variable assignments and ${NAME:-default} expansions; it does not run
// anything ($(...) and $((...)) stay unresolved).

bool isNameStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

std::string trim(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return {};
    return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

struct Word {
    std::string text;
    std::vector<int> char_lines; ///< the line of each character of `text`
    int line = 0;
    bool line_start = false; ///< first word of a logical line
    bool quoted = false;
    bool structural = false; ///< ( ) ; | && || or an assignment: ends a flag's values
    bool array_reference_only = false;
    std::vector<std::string> unresolved;
};

class ShellReader {
public:
    ShellReader(const std::string& text, const std::map<std::string, std::string>& vars)
        : text_(text)
        , user_vars_(vars) {
        // A UTF-8 byte order mark is not part of the first word.
        if (text_.rfind("\xEF\xBB\xBF", 0) == 0)
            pos_ = 3;
    }

    void run() {
        while (pos_ < text_.size())
            step();
        endWord();
    }

    std::vector<Word> words;
    std::vector<MegatronAnnotation> annotations;

private:
    char peek(std::size_t ahead = 0) const {
        return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
    }

    void newline() {
        ++line_;
        line_start_ = true;
    }

    void step() {
        const char c = text_[pos_];
        if (c == '\\' && peek(1) == '\n') { // continuation: the logical line goes on
            pos_ += 2;
            ++line_;
            return;
        }
        if (c == '\\' && peek(1) == '\r' && peek(2) == '\n') {
            pos_ += 3;
            ++line_;
            return;
        }
        if (c == '\n') {
            endWord();
            ++pos_;
            newline();
            return;
        }
        if (isSpace(c)) {
            endWord();
            ++pos_;
            return;
        }
        if (c == '#' && !in_word_) {
            comment();
            return;
        }
        if (c == ';' || c == '|' || c == '&') {
            endWord();
            while (peek() == ';' || peek() == '|' || peek() == '&')
                ++pos_;
            structural(";");
            return;
        }
        startWord();
        if (c == '\'') {
            ++pos_;
            current_.quoted = true;
            while (pos_ < text_.size() && text_[pos_] != '\'') {
                append(text_[pos_]);
                if (text_[pos_++] == '\n')
                    ++line_;
            }
            ++pos_;
            return;
        }
        if (c == '"') {
            ++pos_;
            current_.quoted = true;
            doubleQuoted();
            return;
        }
        if (c == '$') {
            expansion();
            return;
        }
        if (c == '\\') {
            if (pos_ + 1 < text_.size())
                append(text_[pos_ + 1]);
            pos_ += 2;
            return;
        }
        if (c == ')' && open_arrays_ > 0 && word_parens_ == 0) { // "... $PP)" closes the array
            endWord();
            ++pos_;
            --open_arrays_;
            structural(")");
            return;
        }
        if (c == '(')
            ++word_parens_;
        else if (c == ')')
            --word_parens_;
        if (c == '=' && !assign_checked_) {
            assign_checked_ = true;
            const std::string& name = current_.text;
            const bool append = !name.empty() && name.back() == '+';
            const std::string bare = append ? name.substr(0, name.size() - 1) : name;
            if (!current_.quoted && !bare.empty() && isNameStart(bare[0]) &&
                std::all_of(bare.begin(), bare.end(), isNameChar)) {
                ++pos_;
                if (peek() == '(') { // NAME=( ... ): the array body is read as words
                    ++pos_;
                    ++open_arrays_;
                    current_ = Word{};
                    in_word_ = false;
                    structural("(");
                    return;
                }
                assignment_name_ = bare;
                current_.text.clear();
                current_.char_lines.clear();
                return;
            }
        }
        append(c);
        ++pos_;
    }

    void append(char c) {
        current_.text += c;
        current_.char_lines.push_back(line_);
    }
    void append(const std::string& text) {
        for (const char c : text)
            append(c);
    }

    void comment() {
        const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
        std::string body = trim(text_.substr(pos_ + 1, end - pos_ - 1));
        static const std::string kTag = "moe-plan:";
        if (body.rfind(kTag, 0) == 0)
            annotations.push_back({trim(body.substr(kTag.size())), line_});
        pos_ = end;
    }

    void startWord() {
        if (in_word_)
            return;
        in_word_ = true;
        assign_checked_ = false;
        word_parens_ = 0;
        assignment_name_.clear();
        current_ = Word{};
        current_.line = line_;
        current_.line_start = line_start_;
        line_start_ = false;
    }

    void structural(const std::string& text) {
        Word w;
        w.text = text;
        w.line = line_;
        w.structural = true;
        w.line_start = line_start_;
        line_start_ = false;
        words.push_back(std::move(w));
    }

    void doubleQuoted() {
        while (pos_ < text_.size() && text_[pos_] != '"') {
            const char c = text_[pos_];
            if (c == '\\' && pos_ + 1 < text_.size()) {
                const char next = text_[pos_ + 1];
                if (next == '\n') {
                    ++line_;
                    pos_ += 2;
                    continue;
                }
                if (next == '"' || next == '\\' || next == '$' || next == '`') {
                    append(next);
                    pos_ += 2;
                    continue;
                }
            }
            if (c == '$') {
                expansion();
                continue;
            }
            append(c);
            if (c == '\n')
                ++line_;
            ++pos_;
        }
        ++pos_;
    }

    /// Skips a balanced (...) starting at pos_ (on the opening parenthesis); returns its text.
    std::string balanced(char open, char close) {
        const std::size_t start = pos_;
        int depth = 0;
        while (pos_ < text_.size()) {
            const char c = text_[pos_++];
            if (c == '\n')
                ++line_;
            if (c == open)
                ++depth;
            else if (c == close && --depth == 0)
                break;
        }
        return text_.substr(start, pos_ - start);
    }

    /// Expands $NAME, ${NAME}, ${NAME:-default}, ${ARRAY[@]}, $1, $(...) at pos_ into the word.
    void expansion() {
        const int at = line_;
        ++pos_; // '$'
        const char c = peek();
        std::string out;
        if (c == '(') {
            const std::string body = balanced('(', ')');
            current_.unresolved.push_back("$" + body);
            out = "$" + body;
        } else if (c == '{') {
            const std::string body = balanced('{', '}');
            braced(body.substr(1, body.size() - 2), out);
        } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '@' || c == '*' ||
                   c == '#') {
            ++pos_;
            lookup(std::string(1, c), out);
        } else if (isNameStart(c)) {
            std::string name;
            while (isNameChar(peek()))
                name += text_[pos_++];
            lookup(name, out);
        } else {
            out = "$";
        }
        const int now = line_;
        line_ = at;
        append(out);
        line_ = now;
    }

    void braced(const std::string& body, std::string& out) {
        std::size_t name_end = 0;
        while (name_end < body.size() && isNameChar(body[name_end]))
            ++name_end;
        const std::string name = body.substr(0, name_end);
        const std::string rest = body.substr(name_end);
        if (rest.rfind("[@]", 0) == 0 || rest.rfind("[*]", 0) == 0) {
            // An array used on a command line: its flags were read where it was written.
            array_reference_ = true;
            return;
        }
        const bool use_default = rest.rfind(":-", 0) == 0 || rest.rfind(":=", 0) == 0 ||
                                 rest.rfind('-', 0) == 0 || rest.rfind('=', 0) == 0;
        if (use_default && !name.empty()) {
            const std::size_t skip = rest[0] == ':' ? 2 : 1;
            if (value(name)) {
                lookup(name, out);
                return;
            }
            out += expandDefault(rest.substr(skip));
            return;
        }
        lookup(name.empty() ? body : name, out);
    }

    /// The default text of ${NAME:-text}: quotes removed, $VARs expanded.
    std::string expandDefault(const std::string& text) {
        std::string result;
        for (std::size_t i = 0; i < text.size(); ++i) {
            const char c = text[i];
            if (c == '"' || c == '\'')
                continue;
            if (c == '$') {
                std::size_t j = i + 1;
                const bool brace = j < text.size() && text[j] == '{';
                if (brace)
                    ++j;
                std::string name;
                while (j < text.size() && isNameChar(text[j]))
                    name += text[j++];
                if (brace && j < text.size() && text[j] == '}')
                    ++j;
                lookup(name, result);
                i = j - 1;
                continue;
            }
            result += c;
        }
        return result;
    }

    /// The value of a shell variable: --var first, then the script's assignments.
    const std::string* value(const std::string& name) const {
        if (const auto it = user_vars_.find(name); it != user_vars_.end())
            return &it->second;
        if (const auto it = script_vars_.find(name); it != script_vars_.end())
            return &it->second;
        return nullptr;
    }

    void lookup(const std::string& name, std::string& out) {
        if (const std::string* v = value(name)) {
            // A variable holding flags ("--a 1 --b 2") was read where it was assigned.
            if (trim(*v).rfind("--", 0) == 0 && user_vars_.count(name) == 0) {
                array_reference_ = true;
                return;
            }
            out += *v;
            return;
        }
        current_.unresolved.push_back(name);
        out += "${" + name + "}";
    }

    void endWord() {
        if (!in_word_)
            return;
        in_word_ = false;
        Word w = std::move(current_);
        current_ = Word{};
        if (w.char_lines.empty())
            w.char_lines.assign(w.text.size(), w.line);
        const bool array_only = array_reference_ && w.text.empty();
        array_reference_ = false;
        if (!assignment_name_.empty()) {
            assign(w);
            return;
        }
        if (array_only || (w.text.empty() && !w.quoted))
            return;
        if (w.text == "(" || w.text == ")") {
            if (w.text == ")" && open_arrays_ > 0)
                --open_arrays_;
            w.structural = true;
            words.push_back(std::move(w));
            return;
        }
        // A quoted "--flag value" (an array element) splits as the unquoted array expansion
        // would split it.
        if (w.quoted && w.text.rfind("--", 0) == 0 &&
            w.text.find_first_of(" \t\n") != std::string::npos) {
            splitInto(w);
            return;
        }
        words.push_back(std::move(w));
    }

    void assign(Word& w) {
        const std::string name = assignment_name_;
        assignment_name_.clear();
        // The user's --var wins over the script, as the environment wins over ${X:-default}.
        if (user_vars_.count(name) == 0) {
            if (w.unresolved.empty())
                script_vars_[name] = w.text;
            else
                script_vars_.erase(name);
        }
        Word marker;
        marker.text = name + "=";
        marker.line = w.line;
        marker.line_start = w.line_start;
        marker.structural = true;
        words.push_back(std::move(marker));
        // ARGS="--a 1 --b 2": the flags are read here.
        if (trim(w.text).rfind("--", 0) == 0)
            splitInto(w);
    }

    /// Splits a word on white space as an unquoted expansion would; each piece keeps the line
    /// it was written on.
    void splitInto(const Word& w) {
        bool first = true;
        std::size_t i = 0;
        while (i < w.text.size()) {
            while (i < w.text.size() && std::isspace(static_cast<unsigned char>(w.text[i])))
                ++i;
            const std::size_t start = i;
            while (i < w.text.size() && !std::isspace(static_cast<unsigned char>(w.text[i])))
                ++i;
            if (i == start)
                break;
            Word part;
            part.text = w.text.substr(start, i - start);
            part.line = start < w.char_lines.size() ? w.char_lines[start] : w.line;
            part.line_start = first && w.line_start;
            part.unresolved = w.unresolved;
            words.push_back(std::move(part));
            first = false;
        }
    }

    std::string text_;
    const std::map<std::string, std::string>& user_vars_;
    std::map<std::string, std::string> script_vars_;
    std::size_t pos_ = 0;
    int line_ = 1;
    bool line_start_ = true;
    bool in_word_ = false;
    bool assign_checked_ = false;
    bool array_reference_ = false;
    int open_arrays_ = 0; ///< NAME=( ... ) bodies being read
    int word_parens_ = 0; ///< '(' minus ')' in the current word
    std::string assignment_name_;
    Word current_;
};

bool isFlagWord(const Word& w) {
    return !w.structural && w.text.size() > 2 && w.text.rfind("--", 0) == 0 &&
           isNameChar(w.text[2]);
}

/// A word that ends a flag's values: another option, a structural token or a new line.
bool endsValues(const Word& w) {
    if (w.structural || w.line_start)
        return true;
    if (w.text.size() > 1 && w.text[0] == '-' && !w.quoted) {
        const char next = w.text[1];
        return !(std::isdigit(static_cast<unsigned char>(next)) || next == '.');
    }
    return false;
}

} // namespace

MegatronArgs readMegatronArgs(const std::string& text,
                              const std::map<std::string, std::string>& vars) {
    ShellReader reader(text, vars);
    reader.run();
    MegatronArgs args;
    args.annotations = std::move(reader.annotations);
    const std::vector<Word>& words = reader.words;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (!isFlagWord(words[i]))
            continue;
        MegatronFlag flag;
        flag.line = words[i].line;
        std::string name = words[i].text;
        flag.unresolved = words[i].unresolved;
        if (const std::size_t eq = name.find('='); eq != std::string::npos) {
            flag.values.push_back(name.substr(eq + 1));
            name.resize(eq);
        } else if (name.back() == ':') { // "--num-layers: 61" (Megatron-MoE-ModelZoo YAML)
            name.pop_back();
            flag.yaml_form = true;
        }
        flag.name = name;
        std::size_t j = i + 1;
        if (flag.values.empty()) {
            for (; j < words.size() && !endsValues(words[j]); ++j) {
                flag.values.push_back(words[j].text);
                flag.unresolved.insert(flag.unresolved.end(), words[j].unresolved.begin(),
                                       words[j].unresolved.end());
            }
        }
        std::sort(flag.unresolved.begin(), flag.unresolved.end());
        flag.unresolved.erase(std::unique(flag.unresolved.begin(), flag.unresolved.end()),
                              flag.unresolved.end());
        args.flags.push_back(std::move(flag));
        i = j - 1;
    }
    return args;
}

const char* toString(FlagStatus status) {
    switch (status) {
    case FlagStatus::mapped:
        return "mapped";
    case FlagStatus::not_modelled:
        return "recognized, not modelled yet";
    case FlagStatus::no_effect:
        return "no effect on the estimate";
    case FlagStatus::unknown:
        return "unknown, ignored";
    }
    return "?";
}

namespace {

// ---------------------------------------------------------------------------------------------
// --moe-layer-freq: an integer N (every N-th layer is MoE) or a Python list expression such as
// "([0]*3+[1]*58)", evaluated here without Python: lists of integers, +, *, parentheses.

struct PatternValue {
    bool is_list = false;
    int64_t number = 0;
    std::vector<int> list;
};

class PatternParser {
public:
    explicit PatternParser(const std::string& text)
        : text_(text) {}

    std::optional<PatternValue> parse(std::string& error) {
        std::optional<PatternValue> v = sum();
        skipSpace();
        if (v && pos_ != text_.size())
            fail("unexpected '" + text_.substr(pos_, 1) + "'");
        if (!error_.empty()) {
            error = error_;
            return std::nullopt;
        }
        return v;
    }

private:
    // Bounds the work a hostile expression can cause ("[1]*10**9" is refused, not allocated).
    static constexpr std::size_t kMaxLength = 100000;

    void skipSpace() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
    }
    void fail(const std::string& why) {
        if (error_.empty())
            error_ = why;
    }

    std::optional<PatternValue> sum() {
        std::optional<PatternValue> left = product();
        while (left) {
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != '+')
                break;
            ++pos_;
            std::optional<PatternValue> right = product();
            if (!right)
                return std::nullopt;
            if (left->is_list != right->is_list) {
                fail("cannot add a list and a number");
                return std::nullopt;
            }
            if (left->is_list) {
                if (left->list.size() + right->list.size() > kMaxLength) {
                    fail("the pattern is longer than " + std::to_string(kMaxLength));
                    return std::nullopt;
                }
                left->list.insert(left->list.end(), right->list.begin(), right->list.end());
            } else {
                left->number += right->number;
            }
        }
        return left;
    }

    std::optional<PatternValue> product() {
        std::optional<PatternValue> left = atom();
        while (left) {
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != '*')
                break;
            ++pos_;
            std::optional<PatternValue> right = atom();
            if (!right)
                return std::nullopt;
            if (left->is_list && right->is_list) {
                fail("cannot multiply two lists");
                return std::nullopt;
            }
            if (!left->is_list && !right->is_list) {
                left->number *= right->number;
                if (left->number > static_cast<int64_t>(kMaxLength))
                    return fail("number too large"), std::nullopt;
                continue;
            }
            const PatternValue& list = left->is_list ? *left : *right;
            const int64_t times = left->is_list ? right->number : left->number;
            if (times < 0 || list.list.size() * static_cast<std::size_t>(times) > kMaxLength) {
                fail("the pattern is longer than " + std::to_string(kMaxLength));
                return std::nullopt;
            }
            PatternValue repeated;
            repeated.is_list = true;
            for (int64_t k = 0; k < times; ++k)
                repeated.list.insert(repeated.list.end(), list.list.begin(), list.list.end());
            left = std::move(repeated);
        }
        return left;
    }

    std::optional<PatternValue> atom() {
        skipSpace();
        if (pos_ >= text_.size()) {
            fail("unexpected end");
            return std::nullopt;
        }
        const char c = text_[pos_];
        if (c == '(') {
            ++pos_;
            std::optional<PatternValue> inner = sum();
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != ')') {
                fail("missing ')'");
                return std::nullopt;
            }
            ++pos_;
            return inner;
        }
        if (c == '[') {
            ++pos_;
            PatternValue v;
            v.is_list = true;
            skipSpace();
            while (pos_ < text_.size() && text_[pos_] != ']') {
                std::optional<PatternValue> item = sum();
                if (!item || item->is_list) {
                    fail("list items must be numbers");
                    return std::nullopt;
                }
                v.list.push_back(static_cast<int>(item->number));
                skipSpace();
                if (pos_ < text_.size() && text_[pos_] == ',')
                    ++pos_;
                skipSpace();
            }
            if (pos_ >= text_.size()) {
                fail("missing ']'");
                return std::nullopt;
            }
            ++pos_;
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            PatternValue v;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                v.number = v.number * 10 + (text_[pos_++] - '0');
                if (v.number > static_cast<int64_t>(kMaxLength)) {
                    fail("number too large");
                    return std::nullopt;
                }
            }
            return v;
        }
        fail(std::string("unexpected '") + c + "'");
        return std::nullopt;
    }

    std::string text_;
    std::size_t pos_ = 0;
    std::string error_;
};

// ---------------------------------------------------------------------------------------------
// The mapping table. One row per flag: its arity, what becomes of it and, when mapped, how it
// sets the scenario (and how export writes it back). Adding a scenario field for a flag that
// is "not modelled yet" is a one-line change: replace notModelled(...) by intField(...).

enum class Arity { none, one, many };
enum class Group { model, moe, training, parallel };

struct ImportState;
using IntRef = int& (*)(Scenario&);
using ApplyFn = std::function<void(ImportState&, const MegatronFlag&, FlagReport&)>;
using WriteFn = std::function<void(const Scenario&, std::vector<std::string>&)>;

struct Rule {
    std::string flag;
    Arity arity = Arity::one;
    FlagStatus status = FlagStatus::no_effect;
    std::string note;
    Group group = Group::model;
    bool optional_value = false; ///< an unresolved variable in its value is not an error
    ApplyFn apply;
    WriteFn write; ///< export: appends "--flag value" lines
};

/// Where a scenario field's value came from, for messages.
struct Origin {
    int line = 0;
    std::string flag;
};

struct ImportState {
    const MegatronImportOptions* options = nullptr;
    Scenario s;
    Diagnostics diagnostics;
    std::map<std::string, Origin> origin; ///< scenario path -> flag that set it
    std::vector<std::string> notes;       ///< warnings in words
    std::set<std::string> unresolved;     ///< variables mapped flags need
    /// Flags whose outcome finish() decided from the others: flag -> (status, note).
    std::map<std::string, std::pair<FlagStatus, std::string>> outcome;
    int gpus_per_node = 8; ///< of the cluster the result will have

    // Flags whose effect depends on others, resolved in finish().
    bool gqa = false, swiglu = false, mla = false;
    std::optional<int> query_groups, ffn, kv_channels, etp, moe_ffn, topk, shared_size;
    std::optional<int> layers_per_virtual_stage, virtual_stages;
    std::optional<MegatronFlag> moe_layer_freq;
    std::optional<int64_t> train_iters, train_samples, global_batch, vocab;
    int vocab_divisible_by = 128;
    bool bf16 = false, fp16 = false, fp8 = false, grads_bf16 = false;
    bool distributed_optimizer = false, fsdp = false;
    std::string sharding = "optim_grads_params";
    std::optional<int> router_groups, router_group_topk;
    std::string recompute;
    bool tp_pp_dp_mapping = false;
    std::optional<int> torchrun_nnodes, torchrun_nproc;

    void error(const MegatronFlag& flag, const std::string& message) {
        Diagnostic d;
        d.file = options->file_label;
        d.line = flag.line;
        d.message = flag.name + ": " + message;
        diagnostics.push_back(std::move(d));
    }
    void set(const std::string& path, const MegatronFlag& flag) {
        origin[path] = {flag.line, flag.name};
    }
};

std::string joined(const std::vector<std::string>& values) {
    std::string text;
    for (const std::string& v : values)
        text += (text.empty() ? "" : " ") + v;
    return text;
}

/// The flag's single value, or an error (missing, or several where one is due).
std::optional<std::string> single(ImportState& st, const MegatronFlag& flag) {
    if (flag.values.empty()) {
        st.error(flag, "needs a value");
        return std::nullopt;
    }
    return flag.values.front();
}

std::optional<int64_t> wholeNumber(ImportState& st, const MegatronFlag& flag, int64_t min = 0) {
    const std::optional<std::string> text = single(st, flag);
    if (!text)
        return std::nullopt;
    int64_t value = 0;
    const char* first = text->data();
    const char* last = first + text->size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end != last) {
        st.error(flag, "expected a whole number, got '" + *text + "'");
        return std::nullopt;
    }
    if (value < min) {
        st.error(flag,
                 "expected a whole number of at least " + std::to_string(min) + ", got " + *text);
        return std::nullopt;
    }
    return value;
}

std::optional<int> intValue(ImportState& st, const MegatronFlag& flag, int min = 0) {
    const std::optional<int64_t> v = wholeNumber(st, flag, min);
    if (!v)
        return std::nullopt;
    if (*v > std::numeric_limits<int>::max()) {
        st.error(flag, "value " + std::to_string(*v) + " is too large");
        return std::nullopt;
    }
    return static_cast<int>(*v);
}

std::optional<double> realValue(ImportState& st, const MegatronFlag& flag) {
    const std::optional<std::string> text = single(st, flag);
    if (!text)
        return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(value)) {
        st.error(flag, "expected a number, got '" + *text + "'");
        return std::nullopt;
    }
    return value;
}

/// One of `choices`, or an error naming them.
std::optional<std::string> choice(ImportState& st, const MegatronFlag& flag,
                                  const std::vector<std::string>& choices) {
    const std::optional<std::string> text = single(st, flag);
    if (!text)
        return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *text) != choices.end())
        return text;
    std::string known;
    for (const std::string& c : choices)
        known += (known.empty() ? "" : ", ") + c;
    st.error(flag, "expected one of " + known + ", got '" + *text + "'");
    return std::nullopt;
}

std::string line(const std::string& flag, const std::string& value = {}) {
    return value.empty() ? flag : flag + " " + value;
}

// Row builders -------------------------------------------------------------------------------

/// A flag that sets one integer field directly (both ways).
Rule intField(std::string flag, Group group, std::string path, IntRef ref, int min = 1) {
    Rule r;
    r.flag = flag;
    r.arity = Arity::one;
    r.status = FlagStatus::mapped;
    r.note = path;
    r.group = group;
    r.apply = [path, ref, min](ImportState& st, const MegatronFlag& f, FlagReport&) {
        if (const std::optional<int> v = intValue(st, f, min)) {
            ref(st.s) = *v;
            st.set(path, f);
        }
    };
    r.write = [flag, ref](const Scenario& s, std::vector<std::string>& out) {
        out.push_back(line(flag, std::to_string(ref(const_cast<Scenario&>(s)))));
    };
    return r;
}

Rule mapped(std::string flag, Arity arity, Group group, std::string note, ApplyFn apply,
            WriteFn write = {}) {
    Rule r;
    r.flag = std::move(flag);
    r.arity = arity;
    r.status = FlagStatus::mapped;
    r.note = std::move(note);
    r.group = group;
    r.apply = std::move(apply);
    r.write = std::move(write);
    return r;
}

/// A launcher flag (torchrun): used when it can be, never an error when it cannot.
Rule launcher(std::string flag, Arity arity, Group group, std::string note, ApplyFn apply) {
    Rule r = mapped(std::move(flag), arity, group, std::move(note), std::move(apply));
    r.optional_value = true;
    return r;
}

Rule notModelled(std::string flag, Arity arity, std::string what) {
    Rule r;
    r.flag = std::move(flag);
    r.arity = arity;
    r.status = FlagStatus::not_modelled;
    r.note = std::move(what);
    return r;
}

Rule noEffect(std::string flag, Arity arity, std::string why) {
    Rule r;
    r.flag = std::move(flag);
    r.arity = arity;
    r.status = FlagStatus::no_effect;
    r.note = std::move(why);
    return r;
}

/// A switch that states what the model assumes anyway (its absence is noted in finish()).
Rule assumption(std::string flag, std::string note, Group group, bool (*wanted)(const Scenario&)) {
    Rule r;
    r.flag = flag;
    r.arity = Arity::none;
    r.status = FlagStatus::mapped;
    r.note = std::move(note);
    r.group = group;
    r.write = [flag, wanted](const Scenario& s, std::vector<std::string>& out) {
        if (wanted(s))
            out.push_back(flag);
    };
    return r;
}

#define MOE_INT(expr) [](Scenario& s) -> int& { return s.expr; }

std::string layerFreqText(const ModelSpec& m) {
    if (m.dense_layers == 0)
        return "1";
    return "\"([0]*" + std::to_string(m.dense_layers) + "+[1]*" +
           std::to_string(m.layers - m.dense_layers) + ")\"";
}

/// The EP group's span in nodes when it fills whole nodes (Megatron's expert groups for
/// group-limited routing are then the nodes), else 0.
int epNodeSpan(const LayoutSpec& layout, int gpus_per_node) {
    if (gpus_per_node <= 0 || layout.ep < gpus_per_node || layout.ep % gpus_per_node != 0)
        return 0;
    return layout.ep / gpus_per_node;
}

/// The largest divisor d of 128 with vocab divisible by d*tp: Megatron pads the vocabulary to a
/// multiple of make-vocab-size-divisible-by x TP (vocab_size_with_padding in
/// megatron/core/tokenizers/utils/build_tokenizer.py), so this keeps the exported size as is.
int vocabDivisor(int vocab, int tp) {
    if (tp <= 0 || vocab % tp != 0)
        return 1;
    return std::gcd(vocab / tp, 128);
}

std::vector<Rule> buildRules() {
    using A = Arity;
    using G = Group;
    std::vector<Rule> r;
    auto add = [&](Rule rule) { r.push_back(std::move(rule)); };

    // Model shape.
    add(intField("--num-layers", G::model, "model.layers", MOE_INT(model.layers)));
    add(intField("--hidden-size", G::model, "model.hidden", MOE_INT(model.hidden)));
    add(mapped(
        "--ffn-hidden-size", A::one, G::model, "model.ffn_hidden",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.ffn = intValue(st, f, 1)))
                st.set("model.ffn_hidden", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.ffn_hidden > 0)
                out.push_back(line("--ffn-hidden-size", std::to_string(s.model.ffn_hidden)));
        }));
    add(intField("--num-attention-heads", G::model, "model.heads", MOE_INT(model.heads)));
    add(mapped(
        "--group-query-attention", A::none, G::model, "model.kv_heads (with --num-query-groups)",
        [](ImportState& st, const MegatronFlag&, FlagReport&) { st.gqa = true; },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.attention == AttentionKind::gqa && s.model.kv_heads != s.model.heads) {
                out.push_back("--group-query-attention");
                out.push_back(line("--num-query-groups", std::to_string(s.model.kv_heads)));
            }
        }));
    add(mapped("--num-query-groups", A::one, G::model, "model.kv_heads",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.query_groups = intValue(st, f, 1)))
                       st.set("model.kv_heads", f);
               }));
    add(mapped(
        "--kv-channels", A::one, G::model, "model.head_dim",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.kv_channels = intValue(st, f, 1)))
                st.set("model.head_dim", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            // With MLA the head sizes are MLA's own; scripts give the per-head size there.
            const int kv = s.model.attention == AttentionKind::mla ? s.model.mla.qk_nope_head_dim
                                                                   : s.model.effectiveHeadDim();
            out.push_back(line("--kv-channels", std::to_string(kv)));
        }));
    add(intField("--seq-length", G::model, "model.seq_len", MOE_INT(model.seq_len)));
    add(mapped(
        "--max-position-embeddings", A::one, G::model,
        "no field: the scenario trains at model.seq_len",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) { intValue(st, f, 1); },
        [](const Scenario& s, std::vector<std::string>& out) {
            out.push_back(line("--max-position-embeddings", std::to_string(s.model.seq_len)));
        }));
    add(mapped(
        "--vocab-size", A::one, G::model, "model.vocab (padded as Megatron pads it)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.vocab = wholeNumber(st, f, 1)))
                st.set("model.vocab", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            out.push_back(line("--vocab-size", std::to_string(s.model.vocab)));
            out.push_back(line("--make-vocab-size-divisible-by",
                               std::to_string(vocabDivisor(s.model.vocab, s.layout.tp))));
        }));
    add(mapped("--make-vocab-size-divisible-by", A::one, G::model, "model.vocab (padding)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<int> v = intValue(st, f, 1))
                       st.vocab_divisible_by = *v;
               }));
    add(assumption("--swiglu", "the scenario's FFNs are SwiGLU", G::model,
                   [](const Scenario&) { return true; }));
    add(mapped(
        "--multi-latent-attention", A::none, G::model, "model.attention = mla",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.mla = true;
            st.set("model.attention", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.attention != AttentionKind::mla)
                return;
            out.push_back("--multi-latent-attention");
            const MlaDims& m = s.model.mla;
            if (m.q_lora_rank > 0)
                out.push_back(line("--q-lora-rank", std::to_string(m.q_lora_rank)));
            out.push_back(line("--kv-lora-rank", std::to_string(m.kv_lora_rank)));
            out.push_back(line("--qk-head-dim", std::to_string(m.qk_nope_head_dim)));
            out.push_back(line("--qk-pos-emb-head-dim", std::to_string(m.qk_rope_head_dim)));
            out.push_back(line("--v-head-dim", std::to_string(m.v_head_dim)));
        }));
    // MLA dimensions; their export is part of --multi-latent-attention's.
    auto mla = [&](const char* flag, const char* path, IntRef ref, int min) {
        Rule rule = intField(flag, G::model, path, ref, min);
        rule.write = {};
        add(std::move(rule));
    };
    mla("--q-lora-rank", "model.mla.q_lora_rank", MOE_INT(model.mla.q_lora_rank), 0);
    mla("--kv-lora-rank", "model.mla.kv_lora_rank", MOE_INT(model.mla.kv_lora_rank), 1);
    mla("--qk-head-dim", "model.mla.qk_nope_head_dim", MOE_INT(model.mla.qk_nope_head_dim), 1);
    mla("--qk-pos-emb-head-dim", "model.mla.qk_rope_head_dim", MOE_INT(model.mla.qk_rope_head_dim),
        0);
    mla("--v-head-dim", "model.mla.v_head_dim", MOE_INT(model.mla.v_head_dim), 1);

    // Precision.
    add(mapped(
        "--bf16", A::none, G::model, "model.precision (weights, activations, dispatch, compute)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.bf16 = true;
            st.set("model.precision", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.weight_precision == Precision::bf16)
                out.push_back("--bf16");
            else if (s.model.weight_precision == Precision::fp16)
                out.push_back("--fp16");
        }));
    add(mapped("--fp16", A::none, G::model,
               "model.precision (weights, activations, dispatch, compute)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.fp16 = true;
                   st.set("model.precision", f);
               }));
    add(mapped(
        "--fp8-format", A::one, G::model, "model.precision.compute = fp8",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if (choice(st, f, {"e4m3", "hybrid"})) {
                st.fp8 = true;
                st.set("model.precision.compute", f);
            }
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.compute_precision == Precision::fp8)
                out.push_back(line("--fp8-format", "e4m3"));
        }));
    add(notModelled("--fp8-recipe", A::one,
                    "FP8 GEMMs run at one efficiency whatever the scaling recipe (precision "
                    "modes are not in the scenario yet)"));
    add(notModelled("--fp8-param-gather", A::none,
                    "FP8 weight all-gather (weights stay model.precision.weights)"));
    add(mapped(
        "--grad-reduce-in-bf16", A::none, G::training, "model.precision.grads = bf16",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.grads_bf16 = true;
            st.set("model.precision.grads", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.grad_precision == Precision::bf16)
                out.push_back("--grad-reduce-in-bf16");
        }));
    add(mapped("--accumulate-allreduce-grads-in-fp32", A::none, G::training,
               "model.precision.grads = fp32 (the default)",
               [](ImportState&, const MegatronFlag&, FlagReport&) {}));

    // Mixture of experts.
    add(intField("--num-experts", G::moe, "model.experts", MOE_INT(model.experts)));
    r.back().write = [](const Scenario& s, std::vector<std::string>& out) {
        const ModelSpec& m = s.model;
        if (!m.isMoe())
            return;
        out.push_back(line("--num-experts", std::to_string(m.experts)));
        out.push_back(line("--moe-ffn-hidden-size", std::to_string(m.expert_ffn_hidden)));
        out.push_back(line("--moe-router-topk", std::to_string(m.top_k)));
        out.push_back(line("--moe-layer-freq", layerFreqText(m)));
        if (m.shared_experts > 0)
            out.push_back(line("--moe-shared-expert-intermediate-size",
                               std::to_string(m.shared_experts * m.effectiveSharedFfn())));
        if (m.capacity_factor > 0)
            out.push_back(line("--moe-expert-capacity-factor", formatNumber(m.capacity_factor)));
        out.push_back("--moe-grouped-gemm");
        out.push_back(line("--moe-token-dispatcher-type", "alltoall"));
    };
    add(mapped("--moe-ffn-hidden-size", A::one, G::moe, "model.expert_ffn_hidden",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.moe_ffn = intValue(st, f, 1)))
                       st.set("model.expert_ffn_hidden", f);
               }));
    add(mapped("--moe-router-topk", A::one, G::moe, "model.top_k",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.topk = intValue(st, f, 1)))
                       st.set("model.top_k", f);
               }));
    add(mapped("--moe-layer-freq", A::one, G::moe, "model.dense_layers",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.moe_layer_freq = f;
                   st.set("model.dense_layers", f);
               }));
    add(mapped("--moe-shared-expert-intermediate-size", A::one, G::moe,
               "model.shared_experts = 1, model.shared_expert_ffn_hidden",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.shared_size = intValue(st, f, 0)))
                       st.set("model.shared_expert_ffn_hidden", f);
               }));
    add(mapped("--moe-expert-capacity-factor", A::one, G::moe, "model.capacity_factor",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<double> v = realValue(st, f)) {
                       st.s.model.capacity_factor = *v;
                       st.set("model.capacity_factor", f);
                   }
               }));
    add(mapped(
        "--moe-router-num-groups", A::one, G::moe,
        "layout.max_nodes_per_token (with --moe-router-group-topk, when the groups are the "
        "EP group's nodes)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.router_groups = intValue(st, f, 1);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            const int span = epNodeSpan(s.layout, s.cluster.gpus_per_node);
            if (s.layout.max_nodes_per_token > 0 && span > 0) {
                out.push_back(line("--moe-router-num-groups", std::to_string(span)));
                out.push_back(
                    line("--moe-router-group-topk", std::to_string(s.layout.max_nodes_per_token)));
            }
        }));
    add(mapped("--moe-router-group-topk", A::one, G::moe, "layout.max_nodes_per_token",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.router_group_topk = intValue(st, f, 1)))
                       st.set("layout.max_nodes_per_token", f);
               }));
    add(mapped("--moe-router-topk-limited-devices", A::one, G::moe,
               "layout.max_nodes_per_token (when the EP group spans whole nodes)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.router_group_topk = intValue(st, f, 1)))
                       st.set("layout.max_nodes_per_token", f);
               }));
    add(notModelled("--moe-router-load-balancing-type", A::many,
                    "the expert popularity comes from routing.* (set routing.balance: 0 = raw, "
                    "1 = perfectly balanced), not from the balancing algorithm"));
    add(notModelled("--moe-router-enable-expert-bias", A::none,
                    "aux-loss-free balancing shows as routing.balance, not as an argument"));
    add(notModelled("--moe-router-force-load-balancing", A::none,
                    "forced balance is routing.balance = 1"));
    add(mapped("--moe-token-dispatcher-type", A::one, G::moe,
               "matches the model's all-to-all dispatch",
               [](ImportState& st, const MegatronFlag& f, FlagReport& report) {
                   const std::optional<std::string> v =
                       choice(st, f, {"alltoall", "flex", "allgather", "alltoall_seq"});
                   if (v && *v == "allgather") {
                       report.status = FlagStatus::not_modelled;
                       report.note = "the model's dispatch is an all-to-all; an all-gather "
                                     "dispatcher moves more bytes";
                   }
               }));
    add(notModelled("--moe-shared-expert-overlap", A::none,
                    "shared-expert compute overlapping the dispatch"));
    add(notModelled("--overlap-moe-expert-parallel-comm", A::none,
                    "1F1B all-to-all overlap between micro-batches (the nearest is "
                    "layout.schedule: dualpipe)"));
    add(notModelled("--delay-wgrad-compute", A::none,
                    "weight-gradient GEMMs deferred to hide the all-to-all"));
    add(notModelled("--moe-layer-recompute", A::none,
                    "recomputing whole MoE layers (training.recompute covers all layers alike)"));
    add(notModelled("--moe-pad-expert-input-to-capacity", A::none,
                    "padding experts to capacity (the model drops, it does not pad)"));
    add(notModelled("--mtp-num-layers", A::one,
                    "multi-token prediction layers are not in the scenario yet"));
    add(noEffect("--mtp-loss-scaling-factor", A::one, "loss weighting"));

    // Training batch, tokens, optimizer, recompute.
    add(intField("--micro-batch-size", G::training, "training.micro_batch",
                 MOE_INT(training.micro_batch)));
    add(mapped(
        "--global-batch-size", A::one, G::training, "training.global_batch",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.global_batch = wholeNumber(st, f, 1)))
                st.set("training.global_batch", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            out.push_back(line("--global-batch-size", std::to_string(s.training.global_batch)));
        }));
    add(mapped(
        "--train-samples", A::one, G::training, "training.total_tokens (samples x seq_len)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.train_samples = wholeNumber(st, f, 1)))
                st.set("training.total_tokens", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.total_tokens > 0)
                out.push_back(
                    line("--train-samples",
                         formatNumber(std::ceil(s.training.total_tokens / s.model.seq_len))));
        }));
    add(mapped("--train-iters", A::one, G::training,
               "training.total_tokens (iterations x global batch x seq_len)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.train_iters = wholeNumber(st, f, 1)))
                       st.set("training.total_tokens", f);
               }));
    add(mapped("--optimizer", A::one, G::training, "training.optimizer",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (choice(st, f, {"adam", "sgd", "muon"}) && f.values.front() != "adam")
                       st.error(f, "the scenario models Adam(W) only (12 bytes of optimizer "
                                   "state per parameter)");
               }));
    add(mapped(
        "--use-distributed-optimizer", A::none, G::training, "training.zero_stage = 1",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.distributed_optimizer = true;
            st.set("training.zero_stage", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.zero_stage == 1)
                out.push_back("--use-distributed-optimizer");
            if (s.training.zero_stage >= 2) {
                out.push_back("--use-megatron-fsdp");
                out.push_back(
                    line("--data-parallel-sharding-strategy",
                         s.training.zero_stage == 2 ? "optim_grads" : "optim_grads_params"));
            }
        }));
    add(mapped("--use-megatron-fsdp", A::none, G::training,
               "training.zero_stage (from --data-parallel-sharding-strategy)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.fsdp = true;
                   st.set("training.zero_stage", f);
               }));
    add(mapped("--data-parallel-sharding-strategy", A::one, G::training,
               "training.zero_stage (with --use-megatron-fsdp)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<std::string> v = choice(
                           st, f, {"no_shard", "optim", "optim_grads", "optim_grads_params"}))
                       st.sharding = *v;
               }));
    add(mapped(
        "--recompute-granularity", A::one, G::training, "training.recompute",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if (const std::optional<std::string> v = choice(st, f, {"full", "selective"})) {
                st.recompute = *v;
                st.set("training.recompute", f);
            }
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.recompute != Recompute::none)
                out.push_back(line("--recompute-granularity", toString(s.training.recompute)));
        }));
    add(mapped("--recompute-activations", A::none, G::training, "training.recompute = selective",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (st.recompute.empty())
                       st.recompute = "selective";
                   st.set("training.recompute", f);
               }));
    add(notModelled("--recompute-method", A::one,
                    "full recompute of some layers only (training.recompute applies to all)"));
    add(notModelled("--recompute-num-layers", A::one,
                    "full recompute of some layers only (training.recompute applies to all)"));
    add(notModelled("--recompute-modules", A::many,
                    "the modules selective recompute re-runs are fixed in the model (norms, "
                    "activations, MLA up-projections)"));
    add(notModelled("--cpu-offloading", A::none, "activation offload to host memory"));
    add(notModelled("--optimizer-cpu-offload", A::none, "optimizer state offload to host memory"));
    add(notModelled("--tp-comm-overlap", A::none,
                    "TP communication overlapped with GEMMs (the model exposes TP collectives)"));

    // Parallel layout.
    add(intField("--tensor-model-parallel-size", G::parallel, "layout.tp", MOE_INT(layout.tp)));
    add(intField("--pipeline-model-parallel-size", G::parallel, "layout.pp", MOE_INT(layout.pp)));
    add(intField("--context-parallel-size", G::parallel, "layout.cp", MOE_INT(layout.cp)));
    add(intField("--expert-model-parallel-size", G::parallel, "layout.ep", MOE_INT(layout.ep)));
    add(mapped(
        "--expert-tensor-parallel-size", A::one, G::parallel, "layout.etp",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.etp = intValue(st, f, 1)))
                st.set("layout.etp", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.isMoe())
                out.push_back(line("--expert-tensor-parallel-size", std::to_string(s.layout.etp)));
        }));
    add(mapped(
        "--num-virtual-stages-per-pipeline-rank", A::one, G::parallel,
        "layout.vpp, layout.schedule = interleaved",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.virtual_stages = intValue(st, f, 1)))
                st.set("layout.vpp", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.layout.vpp > 1)
                out.push_back(
                    line("--num-virtual-stages-per-pipeline-rank", std::to_string(s.layout.vpp)));
        }));
    add(mapped("--num-layers-per-virtual-pipeline-stage", A::one, G::parallel,
               "layout.vpp = layers / (pp x this), layout.schedule = interleaved",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.layers_per_virtual_stage = intValue(st, f, 1)))
                       st.set("layout.vpp", f);
               }));
    add(mapped(
        "--use-tp-pp-dp-mapping", A::none, G::parallel, "layout.order = tp-cp-ep-pp-dp",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.tp_pp_dp_mapping = true;
            st.set("layout.order", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (toString(s.layout.order) == std::string("tp-cp-ep-pp-dp"))
                out.push_back("--use-tp-pp-dp-mapping");
        }));
    add(assumption("--sequence-parallel", "the model's TP uses sequence parallelism", G::parallel,
                   [](const Scenario& s) { return s.layout.tp > 1; }));
    add(assumption("--overlap-grad-reduce",
                   "the model overlaps the data-parallel gradient sync with backward", G::training,
                   [](const Scenario&) { return true; }));
    add(assumption("--overlap-param-gather",
                   "the model overlaps the ZeRO weight all-gather with forward", G::training,
                   [](const Scenario& s) { return s.training.zero_stage >= 1; }));
    add(assumption("--use-flash-attn", "the model's attention is flash attention", G::model,
                   [](const Scenario&) { return false; }));
    add(notModelled("--decoder-first-pipeline-num-layers", A::one,
                    "uneven pipeline stages (the first stage's layer count) are not in the "
                    "scenario yet"));
    add(notModelled("--decoder-last-pipeline-num-layers", A::one,
                    "uneven pipeline stages (the last stage's layer count) are not in the "
                    "scenario yet"));
    add(notModelled("--pipeline-model-parallel-layout", A::one,
                    "a custom pipeline layout (uneven stages, embedding and loss placement)"));
    add(notModelled("--account-for-embedding-in-pipeline-split", A::none,
                    "the embedding counted as a layer in the pipeline split"));
    add(notModelled("--account-for-loss-in-pipeline-split", A::none,
                    "the loss counted as a layer in the pipeline split"));
    add(notModelled("--num-distributed-optimizer-instances", A::one,
                    "hybrid-sharded optimizer (the model shards over the whole DP group)"));

    // Model details that do not change the estimate (the model assumes the usual choices).
    add(assumption("--untie-embeddings-and-output-weights",
                   "the model counts a separate output head", G::model,
                   [](const Scenario&) { return true; }));
    add(assumption("--disable-bias-linear", "the model has no linear biases", G::model,
                   [](const Scenario&) { return true; }));
    add(mapped(
        "--normalization", A::one, G::model, "the model's norms are RMSNorm-sized",
        [](ImportState&, const MegatronFlag&, FlagReport&) {},
        [](const Scenario&, std::vector<std::string>& out) {
            out.push_back(line("--normalization", "RMSNorm"));
        }));
    add(mapped(
        "--position-embedding-type", A::one, G::model, "the model uses rotary embeddings",
        [](ImportState&, const MegatronFlag&, FlagReport&) {},
        [](const Scenario&, std::vector<std::string>& out) {
            out.push_back(line("--position-embedding-type", "rope"));
        }));
    // The launcher's own flags: nodes and GPUs per node.
    add(launcher("--nnodes", A::one, G::parallel,
                 "cluster.nodes when the import gives --gpu without --nodes",
                 [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                     if (!f.unresolved.empty())
                         return;
                     st.torchrun_nnodes = intValue(st, f, 1);
                 }));
    add(launcher("--nproc_per_node", A::one, G::parallel, "checked against cluster.gpus_per_node",
                 [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                     if (!f.unresolved.empty())
                         return;
                     st.torchrun_nproc = intValue(st, f, 1);
                 }));
    return r;
}

/// Flags that change nothing the planner estimates, by family (one line each).
struct Family {
    const char* prefix;
    const char* why;
};
constexpr Family kNoEffectFamilies[] = {
    {"--lr", "learning-rate schedule"},
    {"--min-lr", "learning-rate schedule"},
    {"--decoupled-", "learning-rate schedule"},
    {"--weight-decay", "optimizer hyperparameter"},
    {"--clip-grad", "optimizer hyperparameter"},
    {"--adam-", "optimizer hyperparameter"},
    {"--sgd-", "optimizer hyperparameter"},
    {"--init-method", "initialisation"},
    {"--hidden-dropout", "regularisation"},
    {"--attention-dropout", "regularisation"},
    {"--log", "logging"},
    {"--tensorboard", "logging"},
    {"--wandb", "logging"},
    {"--timing-log", "logging"},
    {"--save", "checkpointing"},
    {"--load", "checkpointing"},
    {"--no-load-", "checkpointing"},
    {"--no-save-", "checkpointing"},
    {"--ckpt-", "checkpointing"},
    {"--dist-ckpt-", "checkpointing"},
    {"--auto-detect-ckpt-format", "checkpointing"},
    {"--finetune", "checkpointing"},
    {"--pretrained-checkpoint", "checkpointing"},
    {"--eval-", "evaluation"},
    {"--data-", "data"},
    {"--split", "data"},
    {"--mock-data", "data"},
    {"--tokenizer-", "data (the tokenizer decides the vocabulary: --set model.vocab=N)"},
    {"--vocab-file", "data"},
    {"--merge-file", "data"},
    {"--tiktoken-", "data"},
    {"--num-workers", "data"},
    {"--no-mmap-bin-files", "data"},
    {"--no-create-attention-mask-in-dataloader", "data"},
    {"--seed", "reproducibility"},
    {"--profile", "profiling"},
    {"--exit-", "job control"},
    {"--manual-gc", "job control"},
    {"--distributed-timeout-minutes", "job control"},
    {"--distributed-backend", "job control"},
    {"--use-mcore-models", "implementation choice"},
    {"--transformer-impl", "implementation choice"},
    {"--attention-backend", "implementation choice (the model assumes fused flash attention)"},
    {"--rotary-", "position encoding detail"},
    {"--rope-", "position encoding detail"},
    {"--no-rope-fusion", "kernel fusion"},
    {"--no-position-embedding", "position encoding detail"},
    {"--mscale", "position encoding detail"},
    {"--norm-epsilon", "numerics detail"},
    {"--layernorm-epsilon", "numerics detail"},
    {"--apply-layernorm-1p", "numerics detail"},
    {"--qk-layernorm", "numerics detail"},
    {"--no-masked-softmax-fusion", "kernel fusion"},
    {"--no-bias-", "kernel fusion"},
    {"--no-gradient-accumulation-fusion", "kernel fusion"},
    {"--cross-entropy-", "kernel fusion"},
    {"--calculate-per-token-loss", "loss detail"},
    {"--empty-unused-memory-level", "allocator detail"},
    {"--enable-experimental", "feature gate"},
    {"--no-check-for-nan-in-loss-and-grad", "checking"},
    {"--check-for-nan-in-loss-and-grad", "checking"},
    {"--moe-aux-loss-coeff", "router loss weight"},
    {"--moe-z-loss-coeff", "router loss weight"},
    {"--moe-router-score-function", "router detail"},
    {"--moe-router-pre-softmax", "router detail"},
    {"--moe-router-topk-scaling-factor", "router detail"},
    {"--moe-router-bias-update-rate", "router detail"},
    {"--moe-router-dtype", "router detail"},
    {"--moe-router-fusion", "kernel fusion"},
    {"--moe-router-padding-for-fp8", "kernel detail"},
    {"--moe-permute-fusion", "kernel fusion"},
    {"--moe-grouped-gemm", "kernel choice (the model assumes grouped GEMMs)"},
    {"--moe-token-drop-policy", "router detail"},
    {"--moe-input-jitter-eps", "router detail"},
    {"--moe-per-layer-logging", "logging"},
    {"--moe-flex-dispatcher-backend", "dispatcher implementation"},
    {"--moe-enable-deepep", "dispatcher implementation"},
    {"--use-nccl-ub", "communication implementation"},
    {"--fsdp-double-buffer", "communication implementation"},
    {"--init-model-with-meta-device", "initialisation"},
    {"--megatron-fsdp-", "FSDP implementation detail"},
    {"--ddp-", "bucketing detail"},
    {"--fp8-amax-", "FP8 scaling detail"},
    {"--fp8-margin", "FP8 scaling detail"},
    {"--fp8-interval", "FP8 scaling detail"},
    {"--use-rotary-position-embeddings", "position encoding detail"},
    {"--node_rank", "launcher"},
    {"--node-rank", "launcher"},
    {"--master_addr", "launcher"},
    {"--master_port", "launcher"},
    {"--master-addr", "launcher"},
    {"--master-port", "launcher"},
    {"--rdzv", "launcher"},
    {"--train-data-path", "data"},
    {"--valid-data-path", "data"},
    {"--test-data-path", "data"},
    {"--warmup", "learning-rate schedule"},
};

const std::vector<Rule>& rules() {
    static const std::vector<Rule> table = buildRules();
    return table;
}

const Rule* findRule(const std::string& flag) {
    for (const Rule& r : rules())
        if (r.flag == flag)
            return &r;
    return nullptr;
}

const Family* findFamily(const std::string& flag) {
    for (const Family& f : kNoEffectFamilies)
        if (flag.rfind(f.prefix, 0) == 0)
            return &f;
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Import

/// A scenario with the model, training and layout reset to Megatron's defaults (what a run with
/// no such flags would do), keeping the base's cluster, routing, economics and optimizer.
Scenario megatronDefaults(const Scenario& base) {
    Scenario s;
    s.cluster = base.cluster;
    s.routing = base.routing;
    s.training.total_tokens = base.training.total_tokens;
    s.training.optimizer = base.training.optimizer;
    s.training.checkpoint_interval_s = base.training.checkpoint_interval_s;
    s.model.vocab = base.model.vocab;
    s.model.name = base.model.name;
    // Megatron trains in FP32 unless --bf16/--fp16; its distributed optimizer is opt-in.
    s.training.zero_stage = 0;
    s.training.recompute = Recompute::none;
    return s;
}

void note(ImportState& st, const MegatronFlag* flag, const std::string& text) {
    st.notes.push_back((flag ? "line " + std::to_string(flag->line) + ": " : std::string()) + text);
}

void applyLayerFreq(ImportState& st, ModelSpec& m) {
    const MegatronFlag& f = *st.moe_layer_freq;
    const std::optional<std::string> text = single(st, f);
    if (!text)
        return;
    std::string error;
    const std::optional<PatternValue> pattern = PatternParser(*text).parse(error);
    if (!pattern) {
        st.error(f, "cannot read '" + *text + "': " + error +
                        " (expected N or a Python list expression such as ([0]*3+[1]*58))");
        return;
    }
    std::vector<int> moe(static_cast<std::size_t>(m.layers), 0);
    if (pattern->is_list) {
        if (static_cast<int>(pattern->list.size()) != m.layers) {
            st.error(f, "the pattern has " + std::to_string(pattern->list.size()) +
                            " entries for " + std::to_string(m.layers) +
                            " layers (--num-layers); Megatron requires one per layer");
            return;
        }
        for (std::size_t i = 0; i < moe.size(); ++i) {
            if (pattern->list[i] != 0 && pattern->list[i] != 1) {
                st.error(f, "pattern entries must be 0 (dense) or 1 (MoE)");
                return;
            }
            moe[i] = pattern->list[i];
        }
    } else {
        if (pattern->number < 1) {
            st.error(f, "the frequency must be at least 1");
            return;
        }
        // Megatron: layer i is a MoE layer when i % N == 0.
        for (std::size_t i = 0; i < moe.size(); ++i)
            moe[i] = static_cast<int64_t>(i) % pattern->number == 0 ? 1 : 0;
    }
    const int dense = static_cast<int>(std::count(moe.begin(), moe.end(), 0));
    const bool leading =
        std::all_of(moe.begin(), moe.begin() + dense, [](int v) { return v == 0; });
    m.dense_layers = dense;
    if (dense == m.layers) {
        st.error(f, "the pattern makes every layer dense; drop --num-experts for a dense model");
        return;
    }
    if (!leading)
        note(st, &f,
             "--moe-layer-freq " + *text + " interleaves " + std::to_string(dense) +
                 " dense layers among the MoE layers; the scenario puts them first "
                 "(model.dense_layers = " +
                 std::to_string(dense) +
                 ": same counts, so the same work, but pipeline stages may split differently)");
}

/// Resolves the flags whose meaning depends on others, in Megatron's own way.
void finish(ImportState& st, int gpus, const std::set<std::string>& present) {
    ModelSpec& m = st.s.model;
    LayoutSpec& lay = st.s.layout;
    TrainingSpec& t = st.s.training;
    auto given = [&](const std::string& path) { return st.origin.count(path) > 0; };
    Diagnostic missing;
    for (const auto& [path, flag] : std::initializer_list<std::pair<const char*, const char*>>{
             {"model.layers", "--num-layers"},
             {"model.hidden", "--hidden-size"},
             {"model.heads", "--num-attention-heads"},
             {"model.seq_len", "--seq-length"}}) {
        if (!given(path) && present.count(flag) == 0) {
            Diagnostic d;
            d.file = st.options->file_label;
            d.field = path;
            d.message = std::string("missing ") + flag + " (Megatron requires it too)";
            st.diagnostics.push_back(std::move(d));
        }
    }
    if (hasErrors(st.diagnostics))
        return;

    // Megatron's defaults (megatron/training/arguments.py, validate_args).
    if (st.ffn) {
        m.ffn_hidden = *st.ffn;
    } else {
        m.ffn_hidden =
            st.swiglu ? static_cast<int>((4.0 * m.hidden * 2 / 3) / 64) * 64 : 4 * m.hidden;
        st.notes.push_back("model.ffn_hidden = " + std::to_string(m.ffn_hidden) +
                           ": Megatron's default (no --ffn-hidden-size)");
    }
    if (st.mla && st.gqa) {
        Diagnostic d;
        d.file = st.options->file_label;
        d.message = "--multi-latent-attention and --group-query-attention exclude each other "
                    "(Megatron refuses both)";
        st.diagnostics.push_back(std::move(d));
    }
    m.attention = st.mla ? AttentionKind::mla : AttentionKind::gqa;
    if (st.mla) {
        // arguments.py defaults for the MLA sizes not given (q-lora-rank None = no compression).
        const MlaDims megatron{0, 32, 128, 64, 128};
        const std::pair<const char*, int MlaDims::*> dims[] = {
            {"model.mla.q_lora_rank", &MlaDims::q_lora_rank},
            {"model.mla.kv_lora_rank", &MlaDims::kv_lora_rank},
            {"model.mla.qk_nope_head_dim", &MlaDims::qk_nope_head_dim},
            {"model.mla.qk_rope_head_dim", &MlaDims::qk_rope_head_dim},
            {"model.mla.v_head_dim", &MlaDims::v_head_dim}};
        for (const auto& [path, member] : dims)
            if (!given(path))
                m.mla.*member = megatron.*member;
    }
    // Without --group-query-attention Megatron ignores --num-query-groups (default 1 with it).
    m.kv_heads = st.gqa ? st.query_groups.value_or(1) : m.heads;
    if (st.query_groups && !st.gqa)
        st.notes.push_back("--num-query-groups without --group-query-attention: Megatron "
                           "ignores it, so kv_heads = heads");
    m.head_dim = 0;
    // MLA's head sizes are its own (--qk-head-dim, --v-head-dim); kv-channels plays no part.
    if (st.kv_channels && !st.mla &&
        (m.heads <= 0 || m.hidden % m.heads != 0 || *st.kv_channels != m.hidden / m.heads))
        m.head_dim = *st.kv_channels;
    if (!st.swiglu)
        st.notes.push_back("no --swiglu: Megatron would build a 2-matrix GELU MLP; the scenario's "
                           "FFNs are SwiGLU (3 matrices), so FFN work is counted 1.5x");

    if (m.experts > 0) {
        m.expert_ffn_hidden = st.moe_ffn.value_or(m.ffn_hidden);
        m.top_k = st.topk.value_or(2);
        if (st.shared_size && *st.shared_size > 0) {
            m.shared_experts = 1;
            m.shared_expert_ffn_hidden = *st.shared_size;
        }
        if (st.moe_layer_freq)
            applyLayerFreq(st, m);
    } else {
        m.top_k = 0;
        m.expert_ffn_hidden = 0;
        for (const char* path : {"model.expert_ffn_hidden", "model.top_k", "model.dense_layers",
                                 "model.shared_expert_ffn_hidden"}) {
            if (given(path))
                st.notes.push_back(std::string(path) + ": ignored without --num-experts");
        }
    }

    // Layout. ETP defaults to TP (arguments.py); a dense model has no expert grid.
    lay.etp = m.isMoe() ? st.etp.value_or(lay.tp) : 1;
    if (!m.isMoe())
        lay.ep = 1;
    if (st.tp_pp_dp_mapping)
        lay.order = *parseRankOrder("tp-cp-ep-pp-dp");
    if (st.virtual_stages) {
        lay.vpp = *st.virtual_stages;
    } else if (st.layers_per_virtual_stage) {
        const int per_rank = lay.pp > 0 ? m.layers / lay.pp : 0;
        if (lay.pp <= 0 || m.layers % lay.pp != 0 || per_rank % *st.layers_per_virtual_stage != 0) {
            Diagnostic d;
            d.file = st.options->file_label;
            d.line = st.origin["layout.vpp"].line;
            d.field = "layout.vpp";
            d.message = "--num-layers-per-virtual-pipeline-stage " +
                        std::to_string(*st.layers_per_virtual_stage) + " does not divide the " +
                        std::to_string(per_rank) + " layers of each of the " +
                        std::to_string(lay.pp) + " pipeline stages";
            st.diagnostics.push_back(std::move(d));
        } else {
            lay.vpp = per_rank / *st.layers_per_virtual_stage;
        }
    }
    lay.schedule = lay.vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    const int model_parallel = lay.tp * lay.cp * lay.pp;
    lay.dp = model_parallel > 0 && gpus % model_parallel == 0 ? gpus / model_parallel : 1;
    if (model_parallel <= 0 || gpus % model_parallel != 0) {
        Diagnostic d;
        d.file = st.options->file_label;
        d.field = "layout.dp";
        d.message = "TP x CP x PP = " + std::to_string(model_parallel) + " does not divide the " +
                    std::to_string(gpus) + " GPUs of the cluster (Megatron derives DP from it)";
        st.diagnostics.push_back(std::move(d));
    }

    // Batch and tokens.
    t.global_batch = st.global_batch.value_or(static_cast<int64_t>(t.micro_batch) * lay.dp);
    if (!st.global_batch)
        st.notes.push_back("training.global_batch = " + std::to_string(t.global_batch) +
                           ": Megatron's default, micro-batch x DP");
    if (st.train_samples)
        t.total_tokens = static_cast<double>(*st.train_samples) * m.seq_len;
    else if (st.train_iters)
        t.total_tokens = static_cast<double>(*st.train_iters) * t.global_batch * m.seq_len;

    // Precision: FP32 unless --bf16/--fp16 (Megatron's default); FP8 GEMMs with --fp8-format.
    const Precision half = st.fp16 ? Precision::fp16 : st.bf16 ? Precision::bf16 : Precision::fp32;
    m.weight_precision = m.activation_precision = m.dispatch_precision = half;
    m.compute_precision = st.fp8 ? Precision::fp8 : half;
    m.grad_precision = st.grads_bf16 ? Precision::bf16 : Precision::fp32;
    if (!st.fp16 && !st.bf16)
        st.notes.push_back("no --bf16 or --fp16: Megatron trains in FP32");

    // ZeRO: the distributed optimizer shards the optimizer state (stage 1); Megatron-FSDP's
    // sharding strategy names what else is sharded.
    if (st.fsdp) {
        const std::map<std::string, int> stage = {
            {"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
        t.zero_stage = stage.at(st.sharding);
    } else {
        t.zero_stage = st.distributed_optimizer ? 1 : 0;
    }
    t.recompute = st.recompute == "full"        ? Recompute::full
                  : st.recompute == "selective" ? Recompute::selective
                                                : Recompute::none;

    // Group-limited routing limits the expert groups a token reaches; it is the scenario's
    // node-limited routing when the groups are the nodes an EP group spans.
    if (st.router_group_topk) {
        const int span = epNodeSpan(lay, st.gpus_per_node);
        const int groups = st.router_groups.value_or(span);
        if (span > 0 && groups == span) {
            lay.max_nodes_per_token = *st.router_group_topk;
        } else {
            st.origin.erase("layout.max_nodes_per_token");
            const std::string why =
                "group-limited routing over " + std::to_string(groups) +
                " expert groups is node-limited routing (layout.max_nodes_per_token) only when "
                "the groups are the nodes an EP group spans; EP " +
                std::to_string(lay.ep) + " spans " +
                (span > 0 ? std::to_string(span) + (span == 1 ? " node" : " nodes")
                          : std::string("part of a node"));
            for (const char* flag : {"--moe-router-group-topk", "--moe-router-num-groups",
                                     "--moe-router-topk-limited-devices"})
                st.outcome[flag] = {FlagStatus::not_modelled, why};
        }
    }

    // Vocabulary: Megatron pads it to a multiple of divisible-by x TP.
    if (st.vocab) {
        const int64_t multiple = static_cast<int64_t>(st.vocab_divisible_by) * lay.tp;
        const int64_t padded = (*st.vocab + multiple - 1) / multiple * multiple;
        m.vocab = static_cast<int>(std::min<int64_t>(padded, std::numeric_limits<int>::max()));
        if (padded != *st.vocab)
            st.notes.push_back("model.vocab = " + std::to_string(padded) + ": --vocab-size " +
                               std::to_string(*st.vocab) + " padded to a multiple of " +
                               std::to_string(multiple) +
                               " (--make-vocab-size-divisible-by x TP), as Megatron pads it");
    }

    // The launcher's view of the node.
    if (st.torchrun_nproc && *st.torchrun_nproc != st.gpus_per_node)
        st.notes.push_back("torchrun --nproc_per_node " + std::to_string(*st.torchrun_nproc) +
                           " differs from the cluster's " + std::to_string(st.gpus_per_node) +
                           " GPUs per node");
}

std::string fileStem(const std::string& label) {
    std::string stem = std::filesystem::path(label).stem().string();
    return stem.empty() ? std::string("imported") : stem;
}

/// Quotes a --set value when the field is free text, so "a: b" stays text.
std::string assignmentFor(const std::string& path, const std::string& value) {
    const FieldInfo* info = findScenarioField(path);
    const bool text = info && info->kind == FieldKind::text && path != "layout.order";
    return path + "=" + (text ? JsonWriter::escape(value) : value);
}

struct Built {
    ImportState state;
    std::vector<FlagReport> reports;
    std::vector<std::string> cluster_overrides;
};

Built buildFromFlags(const MegatronArgs& args, const MegatronImportOptions& options) {
    Built b;
    ImportState& st = b.state;
    st.options = &options;
    st.s = megatronDefaults(options.base);
    st.s.name = fileStem(options.file_label);
    st.s.model.name = st.s.name;
    st.s.description = "imported from " +
                       std::filesystem::path(options.file_label).filename().string() +
                       " by moe-plan import megatron";
    st.gpus_per_node = options.base.cluster.gpus_per_node;

    // Last occurrence wins (argparse); a conflicting repeat is worth a note.
    std::map<std::string, const MegatronFlag*> last;
    for (const MegatronFlag& f : args.flags) {
        const Rule* rule = findRule(f.name);
        if (const auto it = last.find(f.name);
            it != last.end() && rule && rule->status == FlagStatus::mapped &&
            it->second->values != f.values && f.unresolved.empty() &&
            it->second->unresolved.empty())
            st.notes.push_back("lines " + std::to_string(it->second->line) + " and " +
                               std::to_string(f.line) + " give " + f.name + " different values (" +
                               joined(it->second->values) + ", " + joined(f.values) +
                               "); the last one wins, as in argparse");
        last[f.name] = &f;
    }
    st.swiglu = last.count("--swiglu") > 0;

    for (const MegatronFlag& f : args.flags) {
        FlagReport report;
        report.flag = f.name;
        report.line = f.line;
        const Rule* rule = findRule(f.name);
        std::vector<std::string> values = f.values;
        if (rule && rule->arity == Arity::none)
            values.clear();
        if (rule && rule->arity == Arity::one && values.size() > 1)
            values.resize(1);
        report.value = joined(values);
        if (!rule) {
            const Family* family = findFamily(f.name);
            report.status = family ? FlagStatus::no_effect : FlagStatus::unknown;
            report.note = family ? family->why : "";
            report.value = joined(f.values);
            b.reports.push_back(std::move(report));
            continue;
        }
        report.status = rule->status;
        report.note = rule->note;
        // YAML "--switch: false" means the switch is off.
        const bool switched_off = rule->arity == Arity::none && f.yaml_form && !f.values.empty() &&
                                  f.values.front() == "false";
        if (switched_off) {
            report.status = FlagStatus::no_effect;
            report.note = "set to false";
            report.value = "false";
        } else if (last.at(f.name) != &f) {
            report.note += " (overridden by line " + std::to_string(last.at(f.name)->line) + ")";
        } else if (rule->apply && !(rule->arity != Arity::none && !f.unresolved.empty())) {
            MegatronFlag used = f;
            used.values = values;
            rule->apply(st, used, report);
        }
        if (rule->arity != Arity::none && !f.unresolved.empty() && !rule->optional_value &&
            report.status == FlagStatus::mapped && !switched_off && last.at(f.name) == &f) {
            std::string names;
            for (const std::string& n : f.unresolved)
                names += (names.empty() ? "" : ", ") + n;
            std::string how;
            for (const std::string& n : f.unresolved) {
                how += " --var " + n + "=VALUE";
                st.unresolved.insert(n);
            }
            st.error(f, "uses the shell variable" +
                            std::string(f.unresolved.size() > 1 ? "s " : " ") + names +
                            ", not set in the file; pass" + how);
        }
        b.reports.push_back(std::move(report));
    }

    // The cluster: the base's, or a GPU preset with its catalog node shape.
    int gpus = options.base.cluster.gpuCount();
    if (!options.gpu_preset.empty()) {
        const Catalog& catalog = builtinCatalog();
        if (const Catalog::NodeShape* shape = catalog.findNodeShape(options.gpu_preset))
            st.gpus_per_node = shape->gpus_per_node;
        const int nodes = options.nodes > 0 ? options.nodes : st.torchrun_nnodes.value_or(0);
        if (nodes <= 0) {
            Diagnostic d;
            d.file = options.file_label;
            d.message = "no node count: pass --nodes N (the arguments have no torchrun --nnodes)";
            st.diagnostics.push_back(std::move(d));
        }
        gpus = nodes * st.gpus_per_node;
        // Applied on load, where the catalog's node shape for the preset takes effect.
        b.cluster_overrides = {"cluster.gpu=" + options.gpu_preset,
                               "cluster.nodes=" + std::to_string(std::max(nodes, 1))};
        // Keep the GPU count of the written text equal to the final one, so dp is derived.
        st.s.cluster.nodes = std::max(1, gpus / std::max(1, st.s.cluster.gpus_per_node));
    }
    std::set<std::string> present;
    for (const auto& [name, flag] : last)
        present.insert(name);
    finish(st, gpus, present);
    for (FlagReport& report : b.reports) {
        if (const auto it = st.outcome.find(report.flag);
            it != st.outcome.end() && report.status == FlagStatus::mapped) {
            report.status = it->second.first;
            report.note = it->second.second;
        }
    }
    return b;
}

/// Points a problem the loader found in the generated scenario at the flag that caused it.
Diagnostic relocate(const Diagnostic& d, const ImportState& st) {
    Diagnostic out = d;
    out.file = st.options->file_label;
    out.line = 0;
    out.column = 0;
    std::string path = d.field;
    while (!path.empty()) {
        if (const auto it = st.origin.find(path); it != st.origin.end()) {
            out.line = it->second.line;
            out.message = it->second.flag + ": " + d.message;
            return out;
        }
        const std::size_t dot = path.find_last_of('.');
        path = dot == std::string::npos ? std::string() : path.substr(0, dot);
    }
    if (d.file == "--set") {
        out.file = "--set";
        return out;
    }
    out.message = "imported scenario: " + d.message;
    return out;
}

/// Fields the arguments did not give, in words, so a user sees what to set.
std::vector<std::string> describeDefaults(const ImportState& st, const Scenario& s,
                                          const MegatronImportOptions& options) {
    std::vector<std::string> out;
    auto given = [&](const std::string& path) {
        if (st.origin.count(path) > 0)
            return true;
        for (const std::string& o : options.overrides)
            if (o.rfind(path + "=", 0) == 0)
                return true;
        return false;
    };
    if (!given("model.vocab"))
        out.push_back("model.vocab = " + std::to_string(s.model.vocab) +
                      " from the base scenario (the tokenizer decides it in Megatron; "
                      "--set model.vocab=N)");
    if (!given("training.total_tokens"))
        out.push_back("training.total_tokens = " + formatNumber(s.training.total_tokens) +
                      " from the base scenario (no --train-samples or --train-iters)");
    if (s.model.isMoe())
        out.push_back("routing = " + std::string(toString(s.routing.model)) +
                      (s.routing.model == PopularityModel::zipf
                           ? " (alpha " + formatNumber(s.routing.zipf_alpha) + ")"
                           : std::string()) +
                      ", balance " + formatNumber(s.routing.balance) +
                      " from the base scenario (Megatron's arguments do not say how skewed the "
                      "router is)");
    const std::string nodes =
        std::to_string(s.cluster.nodes) + (s.cluster.nodes == 1 ? " node" : " nodes");
    out.push_back(options.gpu_preset.empty()
                      ? "cluster from the base scenario: " + nodes + " of " +
                            std::to_string(s.cluster.gpus_per_node) + " x " + s.cluster.gpu.name
                      : "cluster: " + nodes + " of the " + options.gpu_preset + " preset (" +
                            std::to_string(s.cluster.gpus_per_node) + " GPUs each)");
    for (const std::string& n : st.notes)
        out.push_back(n);
    return out;
}

} // namespace

MegatronImport importMegatronArgs(const std::string& text, const MegatronImportOptions& options) {
    MegatronImport result;
    const MegatronArgs args = readMegatronArgs(text, options.vars);
    Built built = buildFromFlags(args, options);
    ImportState& st = built.state;
    result.flags = std::move(built.reports);
    result.diagnostics = st.diagnostics;
    result.unresolved_variables.assign(st.unresolved.begin(), st.unresolved.end());
    if (hasErrors(result.diagnostics))
        return result;

    std::vector<std::string> overrides = built.cluster_overrides;
    for (const MegatronAnnotation& a : args.annotations) {
        overrides.push_back(a.assignment);
        result.annotations.push_back(a.assignment);
        const std::size_t eq = a.assignment.find('=');
        st.origin[trim(a.assignment.substr(0, eq))] = {a.line, "# moe-plan: " + a.assignment};
    }
    overrides.insert(overrides.end(), options.overrides.begin(), options.overrides.end());
    LoadResult loaded = loadScenarioTextWithOverrides(toYaml(st.s), options.file_label,
                                                      options.base_dir, overrides);
    for (const Diagnostic& d : loaded.diagnostics)
        result.diagnostics.push_back(relocate(d, st));
    if (!loaded.ok())
        return result;
    result.scenario = std::move(loaded.scenario);
    result.defaults = describeDefaults(st, *result.scenario, options);
    return result;
}

std::string describeImport(const MegatronImport& result) {
    std::ostringstream out;
    const FlagStatus order[] = {FlagStatus::mapped, FlagStatus::not_modelled, FlagStatus::unknown,
                                FlagStatus::no_effect};
    for (const FlagStatus status : order) {
        std::vector<const FlagReport*> in;
        for (const FlagReport& f : result.flags)
            if (f.status == status)
                in.push_back(&f);
        if (in.empty())
            continue;
        out << toString(status) << " (" << in.size() << "):\n";
        if (status == FlagStatus::no_effect) {
            // Listed compactly: these change nothing the planner estimates.
            std::string names;
            for (const FlagReport* f : in)
                names += (names.empty() ? "" : " ") + f->flag;
            out << "  " << names << "\n";
            continue;
        }
        for (const FlagReport* f : in) {
            out << "  line " << f->line << ": " << f->flag << (f->value.empty() ? "" : " ")
                << f->value;
            if (!f->note.empty())
                out << (status == FlagStatus::mapped ? " -> " : ": ") << f->note;
            out << "\n";
        }
    }
    if (!result.annotations.empty()) {
        out << "moe-plan annotations (" << result.annotations.size() << "):\n";
        for (const std::string& a : result.annotations)
            out << "  " << a << "\n";
    }
    if (!result.defaults.empty()) {
        out << "not from the arguments:\n";
        for (const std::string& d : result.defaults)
            out << "  " << d << "\n";
    }
    return out.str();
}

// ---------------------------------------------------------------------------------------------
// Export

namespace {

std::vector<std::string> flagLines(const Scenario& s, Group group) {
    std::vector<std::string> out;
    for (const Rule& r : rules())
        if (r.write && r.group == group)
            r.write(s, out);
    return out;
}

std::string arrayBlock(const char* name, const std::vector<std::string>& lines) {
    std::string text = std::string(name) + "=(\n";
    for (const std::string& l : lines)
        text += "    " + l + "\n";
    return text + ")\n";
}

/// Why a field that differs after a flags-only import needs an annotation, in words.
std::string annotationReason(const std::string& path) {
    static const std::map<std::string, std::string> reasons = {
        {"layout.schedule", "Megatron-Core schedules are 1F1B and interleaved 1F1B"},
        {"layout.order", "Megatron-Core orders ranks tp-cp-ep-dp-pp or tp-cp-ep-pp-dp"},
        {"layout.expert_placement", "Megatron-Core places experts round-robin"},
        {"layout.max_nodes_per_token",
         "group-limited routing maps to it only when EP spans whole nodes"},
        {"model.dispatch_precision", "FP8 dispatch is a DeepEP option, not an argument"},
        {"model.precision.dispatch", "FP8 dispatch is a DeepEP option, not an argument"},
        {"model.precision.activations", "activation precision follows --bf16/--fp16"},
        {"model.precision.weights", "weight precision follows --bf16/--fp16"},
        {"model.shared_experts", "Megatron has one shared-expert MLP"},
        {"model.shared_expert_ffn_hidden", "Megatron has one shared-expert MLP"},
        {"training.total_tokens", "--train-samples counts whole sequences"},
        {"model.name", "Megatron has no model name"},
        {"training.optimizer", "Megatron's adam is AdamW"},
        {"training.checkpoint_interval_s", "checkpoint timing is not a model argument"},
    };
    const auto it = reasons.find(path);
    return it == reasons.end() ? std::string() : it->second;
}

} // namespace

std::string exportMegatronArgs(const Scenario& s) {
    std::string body;
    body += arrayBlock("MODEL_ARGS", flagLines(s, Group::model));
    if (s.model.isMoe())
        body += "\n" + arrayBlock("MOE_ARGS", flagLines(s, Group::moe));
    body += "\n" + arrayBlock("TRAINING_ARGS", flagLines(s, Group::training));
    body += "\n" + arrayBlock("MODEL_PARALLEL_ARGS", flagLines(s, Group::parallel));

    // What the flags alone would give back: every model, training and layout field that differs
    // is annotated, so import reproduces the scenario exactly.
    MegatronImportOptions options;
    options.base = s;
    options.file_label = "<export>";
    const Built back = buildFromFlags(readMegatronArgs(body), options);
    std::string annotations;
    for (const FieldInfo& field : scenarioFields()) {
        if (field.group != "model" && field.group != "training" && field.group != "layout")
            continue;
        const std::optional<std::string> want = getScenarioField(s, field.path);
        const std::optional<std::string> got = getScenarioField(back.state.s, field.path);
        if (!want || want == got)
            continue;
        // MLA sizes mean nothing (and may not be written) unless attention is MLA.
        if (field.path.rfind("model.mla.", 0) == 0 && s.model.attention != AttentionKind::mla)
            continue;
        if (const std::string reason = annotationReason(field.path); !reason.empty())
            annotations += "#   " + reason + ":\n";
        annotations += "# moe-plan: " + assignmentFor(field.path, *want) + "\n";
    }

    const ClusterSpec& c = s.cluster;
    std::string text = "#!/bin/bash\n";
    text += "# Megatron-Core arguments for the scenario \"" + s.name +
            "\", written by moe-plan export megatron.\n";
    text += "# Cluster: " + std::to_string(c.gpuCount()) + " x " + c.gpu.name + " in " +
            std::to_string(c.nodes) + " nodes of " + std::to_string(c.gpus_per_node) + ".\n";
    text += "# Launch with your data, tokenizer, learning-rate and checkpoint arguments added:\n";
    text += "#   torchrun --nnodes " + std::to_string(c.nodes) + " --nproc_per_node " +
            std::to_string(c.gpus_per_node) + " pretrain_gpt.py \\\n#     \"${MODEL_ARGS[@]}\"" +
            (s.model.isMoe() ? " \"${MOE_ARGS[@]}\"" : "") +
            " \"${TRAINING_ARGS[@]}\" \"${MODEL_PARALLEL_ARGS[@]}\"\n";
    text += "# Router skew assumed by the plan (not a Megatron argument): routing " +
            std::string(toString(s.routing.model)) + ", balance " +
            formatNumber(s.routing.balance) + ".\n";
    if (!annotations.empty())
        text += "#\n# Scenario fields Megatron-Core has no argument for; moe-plan import reads "
                "them back:\n" +
                annotations;
    return text + "\n" + body;
}

namespace {

std::string pyBool(bool v) {
    return v ? "True" : "False";
}

std::string pyPrecision(Precision p) {
    return p == Precision::fp8 ? "\"e4m3\"" : "None";
}

} // namespace

std::string exportNemoRecipe(const Scenario& s) {
    const ModelSpec& m = s.model;
    const LayoutSpec& l = s.layout;
    const TrainingSpec& t = s.training;
    const bool mla = m.attention == AttentionKind::mla;
    std::ostringstream py;
    py << "# NeMo 2.0 pre-training recipe for the scenario \"" << s.name
       << "\", written by moe-plan export megatron --format nemo.\n"
          "# Model, parallelism and batch as the plan has them; data, tokenizer, learning-rate\n"
          "# schedule, logging and checkpointing are yours. Run with nemo_run, e.g.\n"
          "#   run.run(pretrain_recipe(dir=\"/checkpoints\"), executor=run.LocalExecutor())\n";
    // The same annotations as the Megatron export: what NeMo cannot say either.
    const std::string megatron = exportMegatronArgs(s);
    std::istringstream lines(megatron);
    std::string text_line;
    bool any = false;
    while (std::getline(lines, text_line)) {
        if (text_line.rfind("# moe-plan: ", 0) == 0) {
            if (!any)
                py << "#\n# Not expressible as NeMo arguments (the plan assumes them):\n";
            any = true;
            py << "#   " << text_line.substr(12) << "\n";
        }
    }
    py << "\nimport nemo_run as run\n"
          "import torch\n"
          "import torch.nn.functional as F\n"
          "from megatron.core.distributed import DistributedDataParallelConfig\n"
          "from nemo import lightning as nl\n"
          "from nemo.collections import llm\n";
    if (mla)
        py << "from nemo.collections.llm.gpt.model.deepseek import DeepSeekConfig, "
              "DeepSeekModel\n";
    py << "from nemo.collections.llm.recipes.optim.adam import "
          "distributed_fused_adam_with_cosine_annealing\n\n\n";
    py << "def model() -> run.Config:\n";
    py << "    config = run.Config(\n";
    py << "        " << (mla ? "DeepSeekConfig" : "llm.GPTConfig") << ",\n";
    auto arg = [&](const std::string& name, const std::string& value) {
        py << "        " << name << "=" << value << ",\n";
    };
    arg("num_layers", std::to_string(m.layers));
    arg("hidden_size", std::to_string(m.hidden));
    arg("ffn_hidden_size", std::to_string(m.ffn_hidden));
    arg("num_attention_heads", std::to_string(m.heads));
    if (!mla)
        arg("num_query_groups", std::to_string(m.kv_heads));
    arg("kv_channels", std::to_string(mla ? m.mla.qk_nope_head_dim : m.effectiveHeadDim()));
    arg("seq_length", std::to_string(m.seq_len));
    arg("vocab_size", std::to_string(m.vocab));
    arg("normalization", "\"RMSNorm\"");
    arg("activation_func", "F.silu");
    arg("gated_linear_unit", "True");
    arg("position_embedding_type", "\"rope\"");
    arg("add_bias_linear", "False");
    arg("share_embeddings_and_output_weights", "False");
    if (mla) {
        arg("q_lora_rank", m.mla.q_lora_rank > 0 ? std::to_string(m.mla.q_lora_rank) : "None");
        arg("kv_lora_rank", std::to_string(m.mla.kv_lora_rank));
        arg("qk_head_dim", std::to_string(m.mla.qk_nope_head_dim));
        arg("qk_pos_emb_head_dim", std::to_string(m.mla.qk_rope_head_dim));
        arg("v_head_dim", std::to_string(m.mla.v_head_dim));
    }
    if (m.isMoe()) {
        arg("num_moe_experts", std::to_string(m.experts));
        arg("moe_ffn_hidden_size", std::to_string(m.expert_ffn_hidden));
        arg("moe_router_topk", std::to_string(m.top_k));
        arg("moe_layer_freq", m.dense_layers == 0
                                  ? std::string("1")
                                  : "[0] * " + std::to_string(m.dense_layers) + " + [1] * " +
                                        std::to_string(m.layers - m.dense_layers));
        arg("moe_shared_expert_intermediate_size",
            m.shared_experts > 0 ? std::to_string(m.shared_experts * m.effectiveSharedFfn())
                                 : "None");
        arg("moe_expert_capacity_factor",
            m.capacity_factor > 0 ? formatNumber(m.capacity_factor) : "None");
        const int span = epNodeSpan(l, s.cluster.gpus_per_node);
        if (l.max_nodes_per_token > 0 && span > 0) {
            arg("moe_router_num_groups", std::to_string(span));
            arg("moe_router_group_topk", std::to_string(l.max_nodes_per_token));
        }
        arg("moe_grouped_gemm", "True");
        arg("moe_token_dispatcher_type", "\"alltoall\"");
    }
    if (t.recompute != Recompute::none)
        arg("recompute_granularity", std::string("\"") + toString(t.recompute) + "\"");
    py << "    )\n";
    py << "    return run.Config(" << (mla ? "DeepSeekModel" : "llm.GPTModel")
       << ", config=config)\n\n\n";

    const int64_t steps =
        t.total_tokens > 0
            ? static_cast<int64_t>(
                  std::ceil(t.total_tokens / (static_cast<double>(t.global_batch) * m.seq_len)))
            : 0;
    py << "def pretrain_recipe(dir=None, name=\"" << s.name << "\", num_nodes=" << s.cluster.nodes
       << ", num_gpus_per_node=" << s.cluster.gpus_per_node << ") -> run.Partial:\n";
    py << "    strategy = run.Config(\n"
          "        nl.MegatronStrategy,\n";
    auto sarg = [&](const std::string& name, const std::string& value) {
        py << "        " << name << "=" << value << ",\n";
    };
    sarg("tensor_model_parallel_size", std::to_string(l.tp));
    sarg("pipeline_model_parallel_size", std::to_string(l.pp));
    sarg("virtual_pipeline_model_parallel_size", l.vpp > 1 ? std::to_string(l.vpp) : "None");
    sarg("context_parallel_size", std::to_string(l.cp));
    sarg("expert_model_parallel_size", std::to_string(l.ep));
    if (m.isMoe())
        sarg("expert_tensor_parallel_size", std::to_string(l.etp));
    sarg("sequence_parallel", pyBool(l.tp > 1));
    sarg("pipeline_dtype", "torch.bfloat16");
    py << "        ddp=run.Config(\n"
          "            DistributedDataParallelConfig,\n"
          "            check_for_nan_in_grad=True,\n"
          "            grad_reduce_in_fp32="
       << pyBool(m.grad_precision == Precision::fp32)
       << ",\n"
          "            overlap_grad_reduce=True,\n"
          "            overlap_param_gather="
       << pyBool(t.zero_stage >= 1)
       << ",\n"
          "        ),\n"
          "    )\n";
    py << "    trainer = run.Config(\n"
          "        nl.Trainer,\n"
          "        accelerator=\"gpu\",\n"
          "        devices=num_gpus_per_node,\n"
          "        num_nodes=num_nodes,\n"
          "        max_steps="
       << steps
       << ",\n"
          "        strategy=strategy,\n"
          "        plugins=run.Config(nl.MegatronMixedPrecision, precision=\""
       << (m.weight_precision == Precision::fp16 ? "16-mixed" : "bf16-mixed")
       << "\", fp8=" << pyPrecision(m.compute_precision)
       << "),\n"
          "    )\n";
    py << "    recipe = run.Partial(\n"
          "        llm.pretrain,\n"
          "        model=model(),\n"
          "        trainer=trainer,\n"
          "        data=run.Config(llm.MockDataModule, seq_length="
       << m.seq_len << ", global_batch_size=" << t.global_batch
       << ", micro_batch_size=" << t.micro_batch
       << "),\n"
          "        optim=distributed_fused_adam_with_cosine_annealing(max_lr=3e-4),\n"
          "    )\n";
    py << "    recipe.optim.config.use_distributed_optimizer = " << pyBool(t.zero_stage >= 1)
       << "\n";
    py << "    return recipe\n";
    return py.str();
}

} // namespace moe::io
