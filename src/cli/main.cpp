// The ucutlass executable: everything lives in the libraries; this only hands argv to the CLI.
#include "cli/commands.h"

int main(int argc, char** argv) { return ucut::cli_main(argc, argv); }
