/* signals.c - the signals that stop a command (SIGTERM, SIGINT, SIGHUP).
 * The command (cli/main.c: its output temporaries), the harness (its
 * running cases) and each external planner's run (its process group and
 * temporary graph, harness/) clean up what they started, then die
 * of the signal as they would have.  A signal the process ignores (under
 * nohup, SIGHUP) stays ignored: catching it would make a hang-up end a
 * run that its caller asked to outlive one. */
#include "internal.h"

static const int STOP[MP_STOP_SIGNALS] = {SIGTERM, SIGINT, SIGHUP};

void mp_stop_catch(void (*handler)(int), mp_stop_saved *saved) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < MP_STOP_SIGNALS; i++) {
        struct sigaction old;
        if (sigaction(STOP[i], NULL, &old) != 0) continue;
        if (saved) saved->old[i] = old;
        if (old.sa_handler != SIG_IGN) sigaction(STOP[i], &sa, NULL);
    }
}

void mp_stop_restore(const mp_stop_saved *saved) {
    for (int i = 0; i < MP_STOP_SIGNALS; i++) sigaction(STOP[i], &saved->old[i], NULL);
}

void mp_stop_die(int sig) {
    signal(sig, SIG_DFL);
    raise(sig);
}

void mp_stop_block(sigset_t *old) {
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < MP_STOP_SIGNALS; i++) sigaddset(&set, STOP[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

void mp_stop_unblock(const sigset_t *old) {
    sigprocmask(SIG_SETMASK, old, NULL);
}
