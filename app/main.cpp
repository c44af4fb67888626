#include "app/tokenbench_main.h"

int main(int argc, char** argv) { return tb::app::tokenbenchMain(argc, argv); }
