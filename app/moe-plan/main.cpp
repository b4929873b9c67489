// moe-plan: the command-line front end of MoE Planner (core only, no Qt).
#include "cli.h"
#include "progress.h"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
    moe::cli::installInterruptHandler();
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        return moe::cli::run(args, std::cout, std::cerr);
    } catch (const std::exception& e) {
        // Bad input is reported as diagnostics; reaching here is a defect, still say what.
        std::cerr << "moe-plan: internal error: " << e.what() << "\n";
        return 3;
    }
}
