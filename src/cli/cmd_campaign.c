/* cmd_campaign.c - placeholder until the fuzzing module lands. */
#include "cli.h"

int mp_cmd_record_campaign(int argc, char **argv) {
    (void)argc, (void)argv;
    return mp_usage_error("memplan record-campaign", "not built yet");
}
