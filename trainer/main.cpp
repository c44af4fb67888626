#include "trainer/cli/trainer_cli.h"

int main(int argc, char** argv) { return tb::trainer::runTrainerCli(argc, argv); }
