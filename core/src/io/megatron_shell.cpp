#include "megatron_rules.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace moe::io {

namespace megatron {

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

std::optional<int64_t> wholeNumber(ImportState& st, const MegatronFlag& flag, int64_t min) {
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

/// The EP group's span in nodes when it fills whole nodes (Megatron's expert groups for
/// group-limited routing are then the nodes), else 0.
int epNodeSpan(const LayoutSpec& layout, int gpus_per_node) {
    if (gpus_per_node <= 0 || layout.ep < gpus_per_node || layout.ep % gpus_per_node != 0)
        return 0;
    return layout.ep / gpus_per_node;
}

std::string layerFreqText(const ModelSpec& m) {
    if (m.dense_layers == 0)
        return "1";
    return "\"([0]*" + std::to_string(m.dense_layers) + "+[1]*" +
           std::to_string(m.layers - m.dense_layers) + ")\"";
}

/// The largest divisor d of 128 with vocab divisible by d*tp: Megatron pads the vocabulary to a
/// multiple of make-vocab-size-divisible-by x TP (vocab_size_with_padding in
/// megatron/core/tokenizers/utils/build_tokenizer.py), so this keeps the exported size as is.
int vocabDivisor(int vocab, int tp) {
    if (tp <= 0 || vocab % tp != 0)
        return 1;
    return std::gcd(vocab / tp, 128);
}

std::string trim(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return {};
    return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

} // namespace megatron

namespace {

using megatron::trim;

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

} // namespace moe::io
