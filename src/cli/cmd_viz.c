/* cmd_viz.c - placeholder until the visualisation module lands. */
#include "cli.h"

int mp_cmd_trace(int argc, char **argv) {
    (void)argc, (void)argv;
    return mp_usage_error("memplan trace", "not built yet");
}

int mp_cmd_svg(int argc, char **argv) {
    (void)argc, (void)argv;
    return mp_usage_error("memplan svg", "not built yet");
}
